--[[
  One heartbeat, atomically, in one round trip (spec: POST /api/v1/game/heartbeat).
  KEYS (one Cluster slot, built by heartbeat.ts beside this file): 1 server hash, 2 live-server zset,
  3 roster, 4 user locations, 5 sessions stream, 6 keys-used, 7 events stream, 8 cmdlog stream, 9 pending
  list, 10 dispatched zset, 11 doors version, 12 user locations of the layout before 2026-11-29, 13 the
  key's `hb` quota hash of this window, 14 the minute's throttle hash, 15.. the replay buckets
  (lib/replay.lua). Command hashes, user queues, another server's pending list and roster are derived
  from the ids and names found: A.b .. SFX.<family> .. <name>.

  A: b base "<prefix>:{g:<gameId>}", sid externalServerId, t now ms (string), m server meta
     {sc, pc, mp, sdk, up, rg, iv} (sc, rg "" when none), rj roster JSON [[externalId,username,team],...],
     rd roster digest (the server hash keeps it to skip the diff of an unchanged roster), u the roster's
     distinct externalIds in roster order (so an unchanged roster is never decoded: cjson.decode of 30
     players costs more than the rest of the script), ev events JSON array or "", ak acks, fl failures
     [{id, reason}], st server TTL s, dc true to deliver commands (the key has the commands scope),
     sa the signed timestamp s (-1 when unknown), keyId, rm/rs/rt/rx/rl (replay, lib/replay.lua), q quota,
     qx/qr/tf/tt (quota, lib/quota.lua), wl (user locations and roster open times in their old forms:
     lib/user-locations.lua, lib/roster-open-time.lua)
  Returns {"replay"} when the signature was already used, {"limited", <seconds to the window's end>}
  when the server is over its quota (src/limits/quotas.ts; nothing else is written), else
  {"ok", <doors version or "">, <command entry JSON>...}: the doors version (src/doors/doors-version.ts)
  rides along so the heartbeat's `config` costs no second command.
]]
local base, sid, nowS = A.b, A.sid, A.t
local now = tonumber(nowS)

-- 1. replay cache (spec: Authentication rule 3), then the per-(key, server) quota in fixed windows; a
--    429 is counted per minute for the ingest health check
if not claimReplay(15, #KEYS - 14) then return {'replay'} end
local limited = overQuota(13, 14, sid, A.q)
if limited then return limited end
redis.call('HSET', KEYS[6], A.keyId, nowS)

-- 2. server registration / refresh
local serverKey = KEYS[1]
local meta = A.m
local prev = redis.call('HMGET', serverKey, 'last', 'rd', 'up', 'sa', 'lt')
local prevLast = prev[1]
local sessions = KEYS[5]
local scope, region = meta.sc, meta.rg
-- A heartbeat older than the one applied last: both its uptime and its signed time are earlier (a
-- request that waited, e.g. in the listener's accept queue, past its client's timeout while the next one
-- was applied). Its roster is out of date: applying it would reopen who has left and close who has
-- joined, then the next heartbeat would undo it (extra sessions). It refreshes the server's liveness,
-- and its events and acks are stored as usual (both idempotent); its roster and meta are not applied.
-- Only both earlier counts: a restarted instance with the same id signs later, a corrected clock signs
-- earlier but its uptime still grows.
local stale = prev[3] and prev[4] and A.sa >= 0 and meta.up < tonumber(prev[3]) and A.sa < tonumber(prev[4])
if not prevLast then
  redis.call('HSET', serverKey, 'first', nowS)
  redis.call('XADD', sessions, '*', 'k', 'up', 's', sid, 'at', nowS, 'sc', scope, 'rg', region,
    'sdk', meta.sdk, 'mp', tostring(meta.mp))
  prevLast = nowS
end
-- `rd` keeps a digest of the last roster bytes: most heartbeats repeat them, and then the diff below is
-- skipped (a digest, not the bytes: ~1.5 KB less per live server of 30 players)
if stale then
  redis.call('HSET', serverKey, 'last', nowS)
else
  -- `sa` -1 (signed time unknown): no later heartbeat is signed before it, so none is stale after it
  redis.call('HSET', serverKey, 'last', nowS, 'scope', scope, 'region', region, 'pc', tostring(meta.pc),
    'mp', tostring(meta.mp), 'sdk', meta.sdk, 'up', tostring(meta.up), 'iv', tostring(meta.iv), 'rd', A.rd,
    'sa', tostring(A.sa))
end
redis.call('EXPIRE', serverKey, A.st)
redis.call('ZADD', KEYS[2], now, sid)

-- 3. roster reconciliation: joins open sessions now, leaves close at the previous heartbeat
local rosterKey, pendingKey = KEYS[3], KEYS[9]
-- The user locations, read on first use: a heartbeat whose roster did not change between refreshes
-- (most of them) touches none.
local locations
local function userLocs()
  if not locations then locations = userLocations(4, 12) end
  return locations
end
-- Commands that waited for user uid (located nowhere) now go to this server.
local function takeWaiting(uid)
  local userQueue = base .. SFX.userCommands .. uid
  local waiting = redis.call('LRANGE', userQueue, 0, -1)
  if #waiting > 0 then
    for _, id in ipairs(waiting) do redis.call('RPUSH', pendingKey, id) end
    redis.call('DEL', userQueue)
  end
end
-- A roster value's part after the open time (src/presence/server-view.ts `parseRosterValue`): the bare
-- username for a player without a team (the name on one line, starting with neither `[` nor `{`), or
-- `<team>\n<username>` for a player with a string team on one line that starts with neither (the name
-- may then be anything): 6–9 B less per player than the JSON [username, team] every other player keeps.
local function plainLine(s)
  local first = string.byte(s, 1)
  return first ~= 91 and first ~= 123 and not string.find(s, '\n', 1, true)
end
local function rosterInfo(name, team)
  if type(name) == 'string' then
    if team == cjson.null and plainLine(name) then return name end
    if type(team) == 'string' and plainLine(team) then return team .. '\n' .. name end
  end
  return cjson.encode({name, team})
end
local uids = A.u
if stale then uids = {} end
-- users this heartbeat newly lists (their sessions open now) and no longer lists
local joined, isJoined, left = {}, {}, {}
if not stale and prev[2] ~= A.rd then
  local players = cjson.decode(A.rj)
  local seen = {}
  for _, uid in ipairs(uids) do seen[uid] = true end
  local old = {}
  local flat = redis.call('HGETALL', rosterKey)
  for i = 1, #flat, 2 do old[flat[i]] = flat[i + 1] end
  local done = {}
  local openTime = rosterOpenTime(now, nowS)
  for _, p in ipairs(players) do
    local uid = p[1]
    if not done[uid] then
      done[uid] = true
      local info = rosterInfo(p[2], p[3])
      local before = old[uid]
      if not before then
        redis.call('HSET', rosterKey, uid, openTime .. '\n' .. info)
        redis.call('XADD', sessions, '*', 'k', 'o', 's', sid, 'u', uid, 'n', tostring(p[2]), 'at', nowS, 'sc', scope)
        joined[#joined + 1] = uid
        isJoined[uid] = true
        takeWaiting(uid)
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
      left[#left + 1] = uid
      redis.call('XADD', sessions, '*', 'k', 'c', 's', sid, 'u', uid, 'at', openTimeMs(string.sub(before, 1, nl - 1)),
        'cl', prevLast, 'r', 'left')
    end
  end
  if #left > 0 then releaseUsers(userLocs(), left, sid) end
end
-- Joined users are located here (claimed from the server that held them, which gets them back when this
-- one releases them: lib/user-locations.lua). Every listed user is re-located (one read, and one write at
-- most, per shard the users fall in) on the server's first heartbeat, every LOCATE_REFRESH_MS after (which
-- heals a location lost, e.g. in a Redis failover) and, while the old layout's hash exists, whenever the
-- roster changed (to empty that hash). The server hash's `lt` holds when the last refresh happened (ms).
local LOCATE_REFRESH_MS = 300000
local refresh = not stale and (not prev[5] or now - tonumber(prev[5]) >= LOCATE_REFRESH_MS)
local full = refresh or ((#joined > 0 or #left > 0) and userLocs().old)
local toLocate = joined
if full then toLocate = uids end
if #toLocate > 0 then
  local at, misplaced = locateUsers(userLocs(), toLocate)
  local claims = {}
  for i, uid in ipairs(toLocate) do
    if at[i] ~= sid or misplaced[i] then
      claims[#claims + 1] = {uid, at[i] ~= sid and at[i]}
      -- a listed user no server held: commands that waited for them come here (joins moved theirs above)
      if not at[i] and not isJoined[uid] then takeWaiting(uid) end
    end
  end
  placeUsers(userLocs(), sid, claims)
end
if refresh then redis.call('HSET', serverKey, 'lt', nowS) end
redis.call('EXPIRE', rosterKey, A.st)

-- 4. events, buffered for the flusher (spec: Events, upsert by eventId happens in Postgres)
if A.ev ~= '' then
  redis.call('XADD', KEYS[7], '*', 's', sid, 'r', nowS, 'e', A.ev)
end

-- 5. acks and failure reports (spec: Command lifecycle); unknown or foreign ids are ignored.
--    Every status change also writes its transition into the command hash as 't:<status>' =
--    "<ms>|<server>|<reason>" (src/commands/command-query.ts reads status and transitions together).
local cmdlog, dispatchedKey = KEYS[8], KEYS[10]
local function finish(id, status, reason)
  local h = base .. SFX.command .. id
  local st = redis.call('HMGET', h, 'status', 'server', 'exp')
  -- an ack or failure after expiresAt is too late: the delivery step below marks the command expired
  if st[1] == 'dispatched' and st[2] == sid and tonumber(st[3]) > now then
    redis.call('HSET', h, 'status', status, 'doneAt', nowS, 'reason', reason, 't:' .. status, nowS .. '|' .. sid .. '|' .. reason)
    redis.call('ZREM', dispatchedKey, id)
    redis.call('XADD', cmdlog, '*', 'id', id, 'st', status, 's', sid, 'at', nowS, 'why', reason)
  end
end
for _, id in ipairs(A.ak) do finish(id, 'acked', '') end
for _, f in ipairs(A.fl) do finish(f.id, 'failed', tostring(f.reason)) end

-- 6. delivery: pending -> dispatched, then every dispatched-unacked command (at-least-once)
local function expire(h, id)
  redis.call('HSET', h, 'status', 'expired', 'doneAt', nowS, 't:expired', nowS .. '|' .. sid .. '|')
  redis.call('ZREM', dispatchedKey, id)
  redis.call('XADD', cmdlog, '*', 'id', id, 'st', 'expired', 's', sid, 'at', nowS, 'why', '')
end
local out = {'ok', redis.call('GET', KEYS[11]) or ''}
if not A.dc then return out end
local pending = redis.call('LRANGE', pendingKey, 0, -1)
if #pending > 0 then
  redis.call('DEL', pendingKey)
  for _, id in ipairs(pending) do
    local h = base .. SFX.command .. id
    local c = redis.call('HMGET', h, 'status', 'exp', 'iat', 'user')
    if c[1] == 'pending' then
      local user = c[4] or ''
      local at = user ~= '' and locateUsers(userLocs(), {user})[1]
      if tonumber(c[2]) <= now then
        expire(h, id)
      elseif user ~= '' and at ~= sid then
        -- the user left before delivery: the command follows them (to their server now, or their queue)
        if at then
          redis.call('RPUSH', base .. SFX.pending .. at, id)
          redis.call('HSET', h, 'server', at)
        else
          redis.call('RPUSH', base .. SFX.userCommands .. user, id)
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
  local h = base .. SFX.command .. id
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
