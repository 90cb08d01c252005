--[[
  Writes blocklist entries that are newer than the stored ones (src/bans/blocklist.ts).
  Every writer takes a ticket (HINCRBY meta seq 1) BEFORE it reads Postgres, so the state read under a
  higher ticket includes every ban change committed before a lower ticket was taken. Keeping the entry
  of the highest ticket per user makes concurrent writers and a concurrent rebuild converge on the
  newest state, whatever order their writes reach Redis in.
  KEYS[1] meta hash, KEYS[2] blocklist hash (same "{w:<workspaceId>}" slot).
  A: t ticket (string); m true to mark the blocklist built afterwards (done only while meta still counts
  this ticket, i.e. Redis was not flushed during the rebuild); e flat array of pairs externalId, JSON
  array of active bans ("" = none: kept as a tombstone so an older ticket cannot resurrect a lifted ban).
  Returns the number of entries written.
]]
local ticket = tonumber(A.t)
local written = 0
for i = 1, #A.e, 2 do
  local cur = redis.call('HGET', KEYS[2], A.e[i])
  local curTicket = -1
  if cur then curTicket = tonumber(string.match(cur, '^(%d+)|')) or -1 end
  if curTicket < ticket then
    redis.call('HSET', KEYS[2], A.e[i], A.t .. '|' .. A.e[i + 1])
    written = written + 1
  end
end
if A.m and tonumber(redis.call('HGET', KEYS[1], 'seq') or '0') >= ticket then
  redis.call('HSET', KEYS[1], 'built', A.t)
end
return written
