--[[
  Creates one command's hot state and routes it, atomically (spec: Command lifecycle, (new) -> pending).
  KEYS: 1 the command hash, 2 live-server zset, 3 user locations, 4 the game's expiry zset, 5 `cmdlog`
  stream, 6 user locations of the layout before 2026-11-29 (lib/user-locations.lua).
  The destination server's queues and other commands' hashes are derived from the server and ids found:
  A.b .. SFX.<family> .. <name> (one Cluster slot).

  Routing (src/commands/command-service.ts documents it for operators):
    - server target: the server's pending list, only while the server is live (in the `servers` zset);
    - user target: the pending list of the server whose roster holds the user (its location), else the user's
      waiting list, which the heartbeat script moves to a server's pending list when the user joins it.
  The destination queue is capped: a server holds at most A.sc open commands (pending + dispatched),
  a waiting user at most A.uc. Ids whose command is no longer open are pruned before refusing.

  A: b base, id command id, json entry JSON {"id","type","payload","issuedAt","expiresAt"}, iat issuedAt
     ms (string), exp expiresAt ms (string), ts target externalServerId or "", u target externalId or "",
     sc server queue cap, uc user queue cap, ttl hash TTL s, wl (user locations, lib/user-locations.lua)
  Appends a `pending` entry to the game's `cmdlog` stream (only when the command is stored).
  Returns {"ok", <server it was routed to, or "" while waiting>}, {"server_not_live"} or
  {"full", <open commands in the destination queue>, <that server, or "" for the user's queue>}.
]]
local base, id = A.b, A.id
local targetServer, user = A.ts, A.u
local serverCap, userCap = A.sc, A.uc

-- Drops ids of commands that are no longer open from a pending list; returns the remaining length.
local function prunePending(listKey)
  for _, cid in ipairs(redis.call('LRANGE', listKey, 0, -1)) do
    if redis.call('HGET', base .. SFX.command .. cid, 'status') ~= 'pending' then
      redis.call('LREM', listKey, 0, cid)
    end
  end
  return redis.call('LLEN', listKey)
end

-- Open commands queued for server `sid` (pending + dispatched-unacked), pruned when at the cap.
local function serverLoad(sid)
  local pendingKey = base .. SFX.pending .. sid
  local dispatchedKey = base .. SFX.dispatched .. sid
  local n = redis.call('LLEN', pendingKey) + redis.call('ZCARD', dispatchedKey)
  if n < serverCap then return n end
  for _, cid in ipairs(redis.call('ZRANGE', dispatchedKey, 0, -1)) do
    local c = redis.call('HMGET', base .. SFX.command .. cid, 'status', 'server')
    if c[1] ~= 'dispatched' or c[2] ~= sid then redis.call('ZREM', dispatchedKey, cid) end
  end
  return prunePending(pendingKey) + redis.call('ZCARD', dispatchedKey)
end

local dest = ''
if targetServer ~= '' then
  if not redis.call('ZSCORE', KEYS[2], targetServer) then return {'server_not_live'} end
  dest = targetServer
else
  dest = locateUsers(userLocations(3, 6), {user})[1] or ''
end

local queueKey
if dest ~= '' then
  local n = serverLoad(dest)
  if n >= serverCap then return {'full', n, dest} end
  queueKey = base .. SFX.pending .. dest
else
  queueKey = base .. SFX.userCommands .. user
  local n = redis.call('LLEN', queueKey)
  if n >= userCap then n = prunePending(queueKey) end
  if n >= userCap then return {'full', n, ''} end
end

-- 't:<status>' = "<ms>|<server>|<reason>": each transition beside the status it sets, so a reader of this
-- one hash never sees a status without the transition that set it (src/commands/command-query.ts)
redis.call('HSET', KEYS[1], 'status', 'pending', 'iat', A.iat, 'exp', A.exp, 'json', A.json,
  'user', user, 'server', dest, 't:pending', A.iat .. '||')
redis.call('EXPIRE', KEYS[1], A.ttl)
redis.call('RPUSH', queueKey, id)
redis.call('ZADD', KEYS[4], A.exp, id)
-- the issue joins the transition stream too: the console's live feed reads it (src/adapters/console/live/); the
-- flusher's insert of this `pending` transition is a no-op (the issuer wrote it with the row)
redis.call('XADD', KEYS[5], '*', 'id', id, 'st', 'pending', 's', '', 'at', A.iat, 'why', '')
return {'ok', dest}
