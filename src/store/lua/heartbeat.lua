--[[
  One heartbeat, atomically, in one round trip (spec: POST /api/v1/game/heartbeat).
  Every key is derived from ARGV[1] = "<prefix>:{g:<gameId>}" (one Cluster slot); suffixes must match
  src/store/keys.ts. KEYS[1] is the server hash (declared for Cluster routing).

  ARGV: 1 base, 2 keyId, 3 signature, 4 replay TTL s, 5 externalServerId, 6 now ms,
        7 server meta JSON {scope,pc,mp,sdk,up,region,iv}, 8 roster JSON [[externalId,username,team],...],
        9 events JSON array or "", 10 acks JSON array, 11 failures JSON array [{id,reason}], 12 server TTL s,
        13 "1" when the key has the commands scope (deliver commands), else "0",
        14 heartbeat quota per (key, server) per window, 15 quota window s, 16 throttle-count TTL s,
        17.. the roster's distinct externalIds in roster order (so an unchanged roster is never decoded:
        cjson.decode of 30 players costs more than the rest of the script)
  Returns {"replay"} when the signature was already used, {"limited", <seconds to the window's end>}
  when the server is over its quota (src/limits/quotas.ts; nothing else is written), else
  {"ok", <doors version or "">, <command entry JSON>...}: the doors version (src/doors/doors-version.ts)
  rides along so the heartbeat's `config` costs no second command.
]]
local base, keyId, sig = ARGV[1], ARGV[2], ARGV[3]
local sid, now = ARGV[5], tonumber(ARGV[6])
local nowS = ARGV[6]

-- 1. replay cache (spec: Authentication rule 3)
if not redis.call('SET', base .. ':replay:' .. keyId .. ':' .. sig, '1', 'NX', 'EX', tonumber(ARGV[4])) then
  return {'replay'}
end

-- 1b. per-(key, server) quota in fixed windows; a 429 is counted per minute for the ingest health check
local windowS = tonumber(ARGV[15])
local window = math.floor(now / (windowS * 1000))
local quotaKey = base .. ':rl:hb:' .. window .. ':' .. keyId .. ':' .. sid
local used = redis.call('INCR', quotaKey)
if used == 1 then redis.call('EXPIRE', quotaKey, 2 * windowS) end
if used > tonumber(ARGV[14]) then
  local throttled = base .. ':rl:429:' .. math.floor(now / 60000)
  redis.call('HINCRBY', throttled, 'hb:' .. sid, 1)
  redis.call('EXPIRE', throttled, tonumber(ARGV[16]))
  return {'limited', tostring(math.ceil(((window + 1) * windowS * 1000 - now) / 1000))}
end
redis.call('HSET', base .. ':keys-used', keyId, nowS)

-- 2. server registration / refresh
local serverKey = KEYS[1]
local meta = cjson.decode(ARGV[7])
local rosterJson = ARGV[8]
local prev = redis.call('HMGET', serverKey, 'last', 'rj')
local prevLast = prev[1]
local sessions = base .. ':sessions'
local scope = meta.scope
if scope == cjson.null or scope == nil then scope = '' end
local region = meta.region
if region == cjson.null or region == nil then region = '' end
if not prevLast then
  redis.call('HSET', serverKey, 'first', nowS)
  redis.call('XADD', sessions, '*', 'k', 'up', 's', sid, 'at', nowS, 'sc', scope, 'rg', region,
    'sdk', meta.sdk, 'mp', tostring(meta.mp))
  prevLast = nowS
end
-- `rj` keeps the last roster bytes: most heartbeats repeat them, and then the diff below is skipped
redis.call('HSET', serverKey, 'last', nowS, 'scope', scope, 'region', region, 'pc', tostring(meta.pc),
  'mp', tostring(meta.mp), 'sdk', meta.sdk, 'up', tostring(meta.up), 'iv', tostring(meta.iv), 'rj', rosterJson)
redis.call('EXPIRE', serverKey, tonumber(ARGV[12]))
redis.call('ZADD', base .. ':servers', now, sid)

-- 3. roster reconciliation: joins open sessions now, leaves close at the previous heartbeat
local rosterKey = base .. ':roster:' .. sid
local whereKey = base .. ':where'
local pendingKey = base .. ':cmd:pending:' .. sid
local FIRST_UID = 17
if prev[2] ~= rosterJson then
  local players = cjson.decode(rosterJson)
  local seen = {}
  for i = FIRST_UID, #ARGV do seen[ARGV[i]] = true end
  local old = {}
  local flat = redis.call('HGETALL', rosterKey)
  for i = 1, #flat, 2 do old[flat[i]] = flat[i + 1] end
  local done = {}
  for _, p in ipairs(players) do
    local uid = p[1]
    if not done[uid] then
      done[uid] = true
      local info = cjson.encode({p[2], p[3]})
      local before = old[uid]
      if not before then
        redis.call('HSET', rosterKey, uid, nowS .. '\n' .. info)
        redis.call('XADD', sessions, '*', 'k', 'o', 's', sid, 'u', uid, 'n', tostring(p[2]), 'at', nowS, 'sc', scope)
        -- commands that waited for this user now go to this server
        local userQueue = base .. ':cmd:user:' .. uid
        local waiting = redis.call('LRANGE', userQueue, 0, -1)
        if #waiting > 0 then
          for _, id in ipairs(waiting) do redis.call('RPUSH', pendingKey, id) end
          redis.call('DEL', userQueue)
        end
      else
        local nl = string.find(before, '\n', 1, true)
        if string.sub(before, nl + 1) ~= info then
          redis.call('HSET', rosterKey, uid, string.sub(before, 1, nl) .. info)
        end
      end
    end
  end
  for uid, before in pairs(old) do
    if not seen[uid] then
      local nl = string.find(before, '\n', 1, true)
      redis.call('HDEL', rosterKey, uid)
      if redis.call('HGET', whereKey, uid) == sid then redis.call('HDEL', whereKey, uid) end
      redis.call('XADD', sessions, '*', 'k', 'c', 's', sid, 'u', uid, 'at', string.sub(before, 1, nl - 1),
        'cl', prevLast, 'r', 'left')
    end
  end
end
-- every listed user is located here (one read, one write at most), also when the roster is unchanged:
-- another server may have claimed or released the user meanwhile
if #ARGV >= FIRST_UID then
  local located = redis.call('HMGET', whereKey, unpack(ARGV, FIRST_UID))
  local fix = {}
  for i = FIRST_UID, #ARGV do
    if located[i - FIRST_UID + 1] ~= sid then
      fix[#fix + 1] = ARGV[i]
      fix[#fix + 1] = sid
    end
  end
  if #fix > 0 then redis.call('HSET', whereKey, unpack(fix)) end
end
redis.call('EXPIRE', rosterKey, tonumber(ARGV[12]))

-- 4. events, buffered for the flusher (spec: Events, upsert by eventId happens in Postgres)
if ARGV[9] ~= '' then
  redis.call('XADD', base .. ':events', '*', 's', sid, 'r', nowS, 'e', ARGV[9])
end

-- 5. acks and failure reports (spec: Command lifecycle); unknown or foreign ids are ignored.
--    Every status change also writes its transition into the command hash as 't:<status>' =
--    "<ms>|<server>|<reason>" (src/commands/command-query.ts reads status and transitions together).
local cmdlog = base .. ':cmdlog'
local dispatchedKey = base .. ':cmd:dispatched:' .. sid
local function finish(id, status, reason)
  local h = base .. ':cmd:' .. id
  local st = redis.call('HMGET', h, 'status', 'server', 'exp')
  -- an ack or failure after expiresAt is too late: the delivery step below marks the command expired
  if st[1] == 'dispatched' and st[2] == sid and tonumber(st[3]) > now then
    redis.call('HSET', h, 'status', status, 'doneAt', nowS, 'reason', reason, 't:' .. status, nowS .. '|' .. sid .. '|' .. reason)
    redis.call('ZREM', dispatchedKey, id)
    redis.call('XADD', cmdlog, '*', 'id', id, 'st', status, 's', sid, 'at', nowS, 'why', reason)
  end
end
for _, id in ipairs(cjson.decode(ARGV[10])) do finish(id, 'acked', '') end
for _, f in ipairs(cjson.decode(ARGV[11])) do finish(f.id, 'failed', tostring(f.reason)) end

-- 6. delivery: pending -> dispatched, then every dispatched-unacked command (at-least-once)
local function expire(h, id)
  redis.call('HSET', h, 'status', 'expired', 'doneAt', nowS, 't:expired', nowS .. '|' .. sid .. '|')
  redis.call('ZREM', dispatchedKey, id)
  redis.call('XADD', cmdlog, '*', 'id', id, 'st', 'expired', 's', sid, 'at', nowS, 'why', '')
end
local out = {'ok', redis.call('GET', base .. ':doors:ver') or ''}
if ARGV[13] ~= '1' then return out end
local pending = redis.call('LRANGE', pendingKey, 0, -1)
if #pending > 0 then
  redis.call('DEL', pendingKey)
  for _, id in ipairs(pending) do
    local h = base .. ':cmd:' .. id
    local c = redis.call('HMGET', h, 'status', 'exp', 'iat', 'user')
    if c[1] == 'pending' then
      local user = c[4] or ''
      local at = user ~= '' and redis.call('HGET', whereKey, user)
      if tonumber(c[2]) <= now then
        expire(h, id)
      elseif user ~= '' and at ~= sid then
        -- the user left before delivery: the command follows them (to their server now, or their queue)
        if at then
          redis.call('RPUSH', base .. ':cmd:pending:' .. at, id)
          redis.call('HSET', h, 'server', at)
        else
          redis.call('RPUSH', base .. ':cmd:user:' .. user, id)
          redis.call('HSET', h, 'server', '')
        end
      else
        redis.call('HSET', h, 'status', 'dispatched', 'server', sid)
        -- the first dispatch is the one recorded (as CommandTransition keeps the first per status)
        redis.call('HSETNX', h, 't:dispatched', nowS .. '|' .. sid .. '|')
        redis.call('ZADD', dispatchedKey, tonumber(c[3]), id)
        redis.call('XADD', cmdlog, '*', 'id', id, 'st', 'dispatched', 's', sid, 'at', nowS, 'why', '')
      end
    end
  end
end
for _, id in ipairs(redis.call('ZRANGE', dispatchedKey, 0, -1)) do
  local h = base .. ':cmd:' .. id
  local c = redis.call('HMGET', h, 'status', 'exp', 'json', 'user', 'server')
  if c[1] ~= 'dispatched' or c[5] ~= sid then
    redis.call('ZREM', dispatchedKey, id)
  elseif tonumber(c[2]) <= now then
    expire(h, id)
  else
    local target = {externalServerId = sid}
    if c[4] and c[4] ~= '' then target.externalId = c[4] end
    out[#out + 1] = string.sub(c[3], 1, -2) .. ',"target":' .. cjson.encode(target) .. '}'
  end
end
return out
