--[[
  Declares one server gone if it is still stale (spec: States › Other states: sessions of a server that
  stops reporting close at the last heartbeat in which each user appeared, i.e. the server's last
  heartbeat, not when the absence is noticed). Idempotent; a heartbeat that arrived meanwhile wins.
  KEYS: 1 server hash, 2 live-server zset, 3 roster, 4 user locations, 5 sessions stream, 6 pending list,
  7 dispatched zset (of this server), 8 user locations of the layout before 2026-11-29 (lib/user-locations.lua).
  Command hashes, user queues and the rosters of servers its users were claimed from are derived from
  the ids, users and servers found: A.b .. SFX.<family> .. <id>.
  A: b base "<prefix>:{g:<gameId>}", sid externalServerId, cutoff ms (stale when last <= cutoff), wl
  (user locations, lib/user-locations.lua).
  Returns the number of sessions closed, or -1 when the server is not stale (or already gone).
]]
local base, sid, cutoff = A.b, A.sid, A.cutoff
local serversKey = KEYS[2]
local score = redis.call('ZSCORE', serversKey, sid)
if not score or tonumber(score) > cutoff then return -1 end
local last = redis.call('HGET', KEYS[1], 'last') or score
local rosterKey, sessions = KEYS[3], KEYS[5]
local flat = redis.call('HGETALL', rosterKey)
local closed, uids = 0, {}
for i = 1, #flat, 2 do
  local uid, prev = flat[i], flat[i + 1]
  local nl = string.find(prev, '\n', 1, true)
  uids[#uids + 1] = uid
  redis.call('XADD', sessions, '*', 'k', 'c', 's', sid, 'u', uid, 'at', openTimeMs(string.sub(prev, 1, nl - 1)),
    'cl', last, 'r', 'server_gone')
  closed = closed + 1
end
releaseUsers(userLocations(4, 8), uids, sid)
forgetServerOrdinal(KEYS[1])
-- user commands that never reached an ack go back to their user's queue, to follow them elsewhere
for i, listKey in ipairs({KEYS[6], KEYS[7]}) do
  local ids
  if i == 1 then ids = redis.call('LRANGE', listKey, 0, -1)
  else ids = redis.call('ZRANGE', listKey, 0, -1) end
  for _, id in ipairs(ids) do
    local h = base .. SFX.command .. id
    local c = redis.call('HMGET', h, 'status', 'user')
    if (c[1] == 'pending' or c[1] == 'dispatched') and c[2] and c[2] ~= '' then
      redis.call('HSET', h, 'status', 'pending', 'server', '')
      redis.call('RPUSH', base .. SFX.userCommands .. c[2], id)
    end
  end
  redis.call('DEL', listKey)
end
redis.call('DEL', rosterKey, KEYS[1])
redis.call('ZREM', serversKey, sid)
redis.call('XADD', sessions, '*', 'k', 'gone', 's', sid, 'at', last)
return closed
