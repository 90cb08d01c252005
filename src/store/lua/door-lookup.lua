--[[
  The read side of a door request in one round trip (src/doors/decision-cache.ts; spec: Authentication
  rule 3, doors/check, doors/bulk, doors/manifest). Every key is derived from ARGV[1] =
  "<prefix>:{g:<gameId>}" (one Cluster slot); suffixes must match src/store/keys.ts. KEYS[1] is the doors
  version key (declared for Cluster routing).

  ARGV: 1 base, 2 keyId, 3 signature, 4 replay TTL s, 5 mode ("one" | "all" | "version"),
        6 externalId, 7 doorKey (mode "one"), 8 now ms, 9 externalServerId ("" when none),
        quota (src/limits/quotas.ts): 10 kind tag (door | bulk | manifest), 11 subject, 12 quota,
        13 quota added per live server (0 = none), 14 window s, 15 throttle-count TTL s, 16 who (for the count)
  Returns {"replay"} when the signature was already used; {"limited", <seconds to the window's end>} when
  the subject is over its quota (nothing else happens: no lookup, no access-log entry); otherwise
    {"ok", doorsVersion or "", subjectVersion "<workspace>.<user>", ...} followed by
    mode "one": the cached value when still fresh; it is also appended to the access stream, so a cache
                hit costs nothing more than this script;
    mode "all": doorKey, value pairs of every fresh cached decision (the caller logs them);
    mode "version": nothing.
  A cached value is "<expiresAtMs>\n<decision JSON>".
]]
local base, mode = ARGV[1], ARGV[5]
local now = tonumber(ARGV[8])

if not redis.call('SET', base .. ':replay:' .. ARGV[2] .. ':' .. ARGV[3], '1', 'NX', 'EX', tonumber(ARGV[4])) then
  return {'replay'}
end

-- Per-subject quota in fixed windows (src/limits/quotas.ts). Door checks and bulk checks are counted per
-- doors version and subject version too: a change of either invalidates what the client cached, so the
-- re-checks it makes then start a fresh count. A 429 is counted per minute for the ingest health check.
local function overQuota(versions)
  local windowS = tonumber(ARGV[14])
  local quota = tonumber(ARGV[12])
  if tonumber(ARGV[13]) > 0 then quota = quota + tonumber(ARGV[13]) * math.max(1, redis.call('ZCARD', base .. ':servers')) end
  local window = math.floor(now / (windowS * 1000))
  local quotaKey = base .. ':rl:' .. ARGV[10] .. ':' .. window .. ':' .. ARGV[11] .. versions
  local used = redis.call('INCR', quotaKey)
  if used == 1 then redis.call('EXPIRE', quotaKey, 2 * windowS) end
  if used <= quota then return nil end
  local throttled = base .. ':rl:429:' .. math.floor(now / 60000)
  redis.call('HINCRBY', throttled, ARGV[10] .. ':' .. ARGV[16], 1)
  redis.call('EXPIRE', throttled, tonumber(ARGV[15]))
  return {'limited', tostring(math.ceil(((window + 1) * windowS * 1000 - now) / 1000))}
end

local dv = redis.call('GET', KEYS[1]) or ''
if mode == 'version' then return overQuota('') or {'ok', dv, ''} end

local user = ARGV[6]
-- fields as in src/doors/subject-invalidation.ts: 'w' = workspace, 'u:<externalId>' = member
local sv = redis.call('HMGET', base .. ':doors:subjects', 'w', 'u:' .. user)
local subject = (sv[1] or '0') .. '.' .. (sv[2] or '0')
local limited = overQuota(':' .. dv .. ':' .. subject)
if limited then return limited end
local out = {'ok', dv, subject}
if dv == '' then return out end

local function fresh(v)
  local nl = string.find(v, '\n', 1, true)
  return nl and tonumber(string.sub(v, 1, nl - 1)) > now
end

local decisions = base .. ':doors:dec:' .. dv .. ':' .. subject .. ':' .. user
if mode == 'one' then
  local v = redis.call('HGET', decisions, ARGV[7])
  if v and fresh(v) then
    local json = string.sub(v, string.find(v, '\n', 1, true) + 1)
    redis.call('XADD', base .. ':access', '*', 'u', user, 's', ARGV[9], 'at', ARGV[8], 'v', '[' .. json .. ']')
    out[4] = v
  end
  return out
end
local flat = redis.call('HGETALL', decisions)
for i = 1, #flat, 2 do
  if fresh(flat[i + 1]) then
    out[#out + 1] = flat[i]
    out[#out + 1] = flat[i + 1]
  end
end
return out
