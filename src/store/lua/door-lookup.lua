--[[
  The read side of a door request in one round trip (src/doors/decision-cache.ts; spec: Authentication
  rule 3, doors/check, doors/bulk, doors/manifest).
  KEYS (one Cluster slot): 1 doors version, 2 door subject versions, 3 live-server zset, 4 access stream,
  5 the key's quota hash of this window (`door`, `bulk` or `manifest`), 6 the minute's throttle hash,
  7.. the replay buckets (lib/replay.lua); in mode "join", 7 heads the key's ban-check quota counters
  and the replay buckets follow from 8. The decision hashes are derived from the doors version read
  here: A.b .. SFX.doorDecisions .. <doors version> .. ':' .. <window> heads a sharded hash (lib/sharded-hash.lua)
  whose fields are user ids.

  A: b base, m mode ("one" | "all" | "version" | "join"), u externalId, d doorKey (mode "one"), t now ms (string),
     s externalServerId ("" when none), w the door-cache window (floor(now / TTL ms)),
     rm/rs/rt/rx/rl (replay), qf quota field (versions are appended for "one" and "all"), q quota, qs quota added
     per live server (0 = none), qu/qa the per-user field and allowance of a door check (mode "one" only;
     versions appended to qu), qx/qr/tf/tt (quota); mode "join" also bq/bf/bx/br/bt (the ban-check quota's
     q/qf/qx/qr/tf, counted first; tt shared)
  Mode "join" is a ban check that asks for its user's bulk decisions too (src/adapters/http/routes/bans-check.ts):
  one replay claim for both, the ban-check quota first (over it: {"limited", ...} as below), then the bulk
  quota, which does not refuse the request: over it the answer is {"ok", dv, subject, "0"} and no decision
  is read; else "1" and the pairs of mode "all" follow.
  Returns {"replay"} when the signature was already used; {"limited", <seconds to the window's end>} when
  the subject is over its quota (nothing else happens: no lookup, no access-log entry); otherwise
    {"ok", doorsVersion or "", subjectVersion "<workspace>.<user>", ...} followed by
    mode "one": the cached value when still fresh; it is also appended to the access stream, so a cache
                hit costs nothing more than this script;
    mode "all": doorKey, value pairs of every fresh cached decision (the caller logs them);
    mode "version": nothing.
  A returned value is "<expiresAtMs>\n<decision JSON>". The decision hash (door-store.lua writes it) holds
  per user a pointer, the msgpack array {subjectVersion, context field}, and per subject context
  (src/doors/context-key.ts) its decisions, the msgpack array {doorKey, expiresAtMs, decision code, ...}
  (the code is `packDecision` of src/doors/decision-cache.ts, rebuilt here into the JSON by decisionJson).
]]
local mode, now = A.m, tonumber(A.t)

local replayFirst = mode == 'join' and 8 or 7
if not claimReplay(replayFirst, #KEYS - replayFirst + 1) then return {'replay'} end
if mode == 'join' then
  local banLimited = overQuota(7, 6, A.bf, A.bq, {qx = A.bx, qr = A.br, tf = A.bt, tt = A.tt})
  if banLimited then return banLimited end
end

-- Per-subject quota in fixed windows (src/limits/quotas.ts). Door checks and bulk checks are counted per
-- doors version and subject version too: a change of either invalidates what the client cached, so the
-- re-checks it makes then start a fresh count.
-- A door check (A.qu set) is first counted per user: the user's first A.qa checks of the window are not
-- counted per door at all (src/limits/quotas.ts `DOOR_CHECK_USER_ALLOWANCE`: one counter per player
-- instead of one per player and door), later ones per (user, door) as well, against A.q.
local function limitedBy(versions)
  local quota = A.q
  if A.qs > 0 then quota = quota + A.qs * math.max(1, redis.call('ZCARD', KEYS[3])) end
  if A.qu and countSubject(5, A.qu .. versions) <= A.qa then return nil end
  return overQuota(5, 6, A.qf .. versions, quota)
end

local dv = redis.call('GET', KEYS[1]) or ''
if mode == 'version' then return limitedBy('') or {'ok', dv, ''} end

local user = A.u
-- fields as in src/doors/subject-invalidation.ts: 'w' = workspace, 'u:<externalId>' = member
local sv = redis.call('HMGET', KEYS[2], 'w', 'u:' .. user)
local subject = (sv[1] or '0') .. '.' .. (sv[2] or '0')
local limited = limitedBy(':' .. dv .. ':' .. subject)
if limited and mode == 'join' then return {'ok', dv, subject, '0'} end
if limited then return limited end
local out = {'ok', dv, subject}
if mode == 'join' then out[4] = '1' end
if dv == '' then return out end

-- Decision codes (src/doors/decision-cache.ts `packDecision`): letters of decision, failMode and
-- forcedState, then the policy id (may be empty); a code starting with '{' is the JSON itself. The reason
-- follows from them as evaluate.ts makes it; packDecision stores a code only when this rebuilds the
-- exact JSON it was given, so a hit answers byte for byte what the evaluation answered.
local DECISIONS, FAIL_MODES, FORCED = {a = 'allow', d = 'deny'}, {c = 'closed', o = 'open'}, {a = 'auto', l = 'locked', u = 'unlocked'}
local function decisionJson(doorKey, code)
  if string.byte(code, 1) == 123 then return code end
  local decision, forced, policy = DECISIONS[string.sub(code, 1, 1)], FORCED[string.sub(code, 3, 3)], string.sub(code, 4)
  local reason, policyJson = 'default_' .. decision, 'null'
  if forced ~= 'auto' then
    reason = 'forced_' .. forced
  elseif policy ~= '' then
    reason, policyJson = 'policy_' .. decision .. ':' .. policy, '"' .. policy .. '"'
  end
  return '{"doorKey":"' .. doorKey .. '","decision":"' .. decision .. '","reason":"' .. reason .. '","policyId":' .. policyJson
    .. ',"failMode":"' .. FAIL_MODES[string.sub(code, 2, 2)] .. '","forcedState":"' .. forced .. '"}'
end

-- field's value in window w's decision hash under this doors version (nil when absent)
local heads = {}
local function fieldIn(w, field)
  local head = heads[w]
  if not head then
    head = {A.b .. SFX.doorDecisions .. dv .. ':' .. w}
    head[2], head[3] = shardState(head[1])
    heads[w] = head
  end
  local packed = redis.call('HGET', shardFor(head[1], head[2], head[3], userFieldHash(field)), field)
  return packed and cmsgpack.unpack(packed)
end
-- the user's pointer (door-store.lua keeps one, in the latest window it wrote), valid for this subject version
local userField = doorUserField(user)
local pointer = fieldIn(A.w, userField) or fieldIn(A.w - 1, userField)
local found = {}
if pointer and pointer[1] == subject then
  -- the context's fresh decisions: a store in the current window merged the previous window's into it,
  -- so the previous window is read only when the current one has none (at worst a miss, never stale)
  local t = fieldIn(A.w, pointer[2]) or fieldIn(A.w - 1, pointer[2])
  if t then
    for i = 1, #t, 3 do
      if tonumber(t[i + 1]) > now then found[t[i]] = t[i + 1] .. '\n' .. decisionJson(t[i], t[i + 2]) end
    end
  end
end
if mode == 'one' then
  local v = found[A.d]
  if v then
    local json = string.sub(v, string.find(v, '\n', 1, true) + 1)
    redis.call('XADD', KEYS[4], '*', 'u', user, 's', A.s, 'at', A.t, 'v', '[' .. json .. ']')
    out[4] = v
  end
  return out
end
for doorKey, v in pairs(found) do
  out[#out + 1] = doorKey
  out[#out + 1] = v
end
return out
