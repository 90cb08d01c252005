--[[
  Expires the game's commands whose expiry has passed without an ack or failure report (spec: Command
  lifecycle, "not yet acked -> expired"). Idempotent: a command that is already acked, failed or expired
  is only dropped from the expiry zset; running twice expires nothing twice.
  KEYS: 1 the game's expiry zset, 2 its `cmdlog` stream. A command's hash and queues are derived from
  its id and the server and user its hash names: A.b .. SFX.<family> .. <id> (one Cluster slot).

  A: b base "<prefix>:{g:<gameId>}", now ms, n most commands to look at in this call
  Each expiry removes the id from the queue it sits in, sets status `expired` (doneAt = its expiresAt) and
  appends the transition to the `cmdlog` stream with `at` = the command's expiresAt, so the durable record
  says when it expired, not when the worker noticed.
  Returns {expired, 1 when more due ids may remain else 0}.
]]
local base, now, limit = A.b, A.now, A.n
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
local expired = 0
for i = 1, #due, 2 do
  local id, exp = due[i], due[i + 1]
  local h = base .. SFX.command .. id
  local c = redis.call('HMGET', h, 'status', 'server', 'user')
  if c[1] == 'pending' or c[1] == 'dispatched' then
    local sid, user = c[2] or '', c[3] or ''
    redis.call('HSET', h, 'status', 'expired', 'doneAt', exp, 't:expired', exp .. '|' .. sid .. '|')
    if sid ~= '' then
      redis.call('ZREM', base .. SFX.dispatched .. sid, id)
      redis.call('LREM', base .. SFX.pending .. sid, 0, id)
    end
    if user ~= '' then redis.call('LREM', base .. SFX.userCommands .. user, 0, id) end
    redis.call('XADD', KEYS[2], '*', 'id', id, 'st', 'expired', 's', sid, 'at', exp, 'why', '')
    expired = expired + 1
  end
  redis.call('ZREM', KEYS[1], id)
end
local more = 0
if #due / 2 >= limit then more = 1 end
return {expired, more}
