--[[
  Creates one command's hot state and routes it, atomically (spec: Command lifecycle, (new) -> pending).
  Every key is derived from ARGV[1] = "<prefix>:{g:<gameId>}" (one Cluster slot); suffixes must match
  src/store/keys.ts. KEYS[1] is the command hash (declared for Cluster routing).

  Routing (src/commands/command-service.ts documents it for operators):
    - server target: the server's pending list, only while the server is live (in the `servers` zset);
    - user target: the pending list of the server whose roster holds the user (`where`), else the user's
      waiting list, which the heartbeat script moves to a server's pending list when the user joins it.
  The destination queue is capped: a server holds at most ARGV[8] open commands (pending + dispatched),
  a waiting user at most ARGV[9]. Ids whose command is no longer open are pruned before refusing.

  ARGV: 1 base, 2 command id, 3 entry JSON {"id","type","payload","issuedAt","expiresAt"}, 4 issuedAt ms,
        5 expiresAt ms, 6 target externalServerId or "", 7 target externalId or "", 8 server queue cap,
        9 user queue cap, 10 hash TTL s
  Appends a `pending` entry to the game's `cmdlog` stream (only when the command is stored).
  Returns {"ok", <server it was routed to, or "" while waiting>}, {"server_not_live"} or
  {"full", <open commands in the destination queue>, <that server, or "" for the user's queue>}.
]]
local base, id = ARGV[1], ARGV[2]
local targetServer, user = ARGV[6], ARGV[7]
local serverCap, userCap = tonumber(ARGV[8]), tonumber(ARGV[9])

-- Drops ids of commands that are no longer open from a pending list; returns the remaining length.
local function prunePending(listKey)
  for _, cid in ipairs(redis.call('LRANGE', listKey, 0, -1)) do
    if redis.call('HGET', base .. ':cmd:' .. cid, 'status') ~= 'pending' then
      redis.call('LREM', listKey, 0, cid)
    end
  end
  return redis.call('LLEN', listKey)
end

-- Open commands queued for server `sid` (pending + dispatched-unacked), pruned when at the cap.
local function serverLoad(sid)
  local pendingKey = base .. ':cmd:pending:' .. sid
  local dispatchedKey = base .. ':cmd:dispatched:' .. sid
  local n = redis.call('LLEN', pendingKey) + redis.call('ZCARD', dispatchedKey)
  if n < serverCap then return n end
  for _, cid in ipairs(redis.call('ZRANGE', dispatchedKey, 0, -1)) do
    local c = redis.call('HMGET', base .. ':cmd:' .. cid, 'status', 'server')
    if c[1] ~= 'dispatched' or c[2] ~= sid then redis.call('ZREM', dispatchedKey, cid) end
  end
  return prunePending(pendingKey) + redis.call('ZCARD', dispatchedKey)
end

local dest = ''
if targetServer ~= '' then
  if not redis.call('ZSCORE', base .. ':servers', targetServer) then return {'server_not_live'} end
  dest = targetServer
else
  dest = redis.call('HGET', base .. ':where', user) or ''
end

local queueKey
if dest ~= '' then
  local n = serverLoad(dest)
  if n >= serverCap then return {'full', n, dest} end
  queueKey = base .. ':cmd:pending:' .. dest
else
  queueKey = base .. ':cmd:user:' .. user
  local n = redis.call('LLEN', queueKey)
  if n >= userCap then n = prunePending(queueKey) end
  if n >= userCap then return {'full', n, ''} end
end

-- 't:<status>' = "<ms>|<server>|<reason>": each transition beside the status it sets, so a reader of this
-- one hash never sees a status without the transition that set it (src/commands/command-query.ts)
redis.call('HSET', KEYS[1], 'status', 'pending', 'iat', ARGV[4], 'exp', ARGV[5], 'json', ARGV[3],
  'user', user, 'server', dest, 't:pending', ARGV[4] .. '||')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[10]))
redis.call('RPUSH', queueKey, id)
redis.call('ZADD', base .. ':cmd:expiry', tonumber(ARGV[5]), id)
-- the issue joins the transition stream too: the console's live feed reads it (src/console/live/); the
-- flusher's insert of this `pending` transition is a no-op (the issuer wrote it with the row)
redis.call('XADD', base .. ':cmdlog', '*', 'id', id, 'st', 'pending', 's', '', 'at', ARGV[4], 'why', '')
return {'ok', dest}
