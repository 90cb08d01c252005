--[[
  Expires the game's commands whose expiry has passed without an ack or failure report (spec: Command
  lifecycle, "not yet acked -> expired"). Idempotent: a command that is already acked, failed or expired
  is only dropped from the expiry zset; running twice expires nothing twice.
  Every key is derived from ARGV[1] = "<prefix>:{g:<gameId>}"; KEYS[1] is the game's expiry zset.

  ARGV: 1 base, 2 now ms, 3 most commands to look at in this call
  Each expiry removes the id from the queue it sits in, sets status `expired` (doneAt = its expiresAt) and
  appends the transition to the `cmdlog` stream with `at` = the command's expiresAt, so the durable record
  says when it expired, not when the worker noticed.
  Returns {expired, 1 when more due ids may remain else 0}.
]]
local base, now, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
local expired = 0
for i = 1, #due, 2 do
  local id, exp = due[i], due[i + 1]
  local h = base .. ':cmd:' .. id
  local c = redis.call('HMGET', h, 'status', 'server', 'user')
  if c[1] == 'pending' or c[1] == 'dispatched' then
    local sid, user = c[2] or '', c[3] or ''
    redis.call('HSET', h, 'status', 'expired', 'doneAt', exp, 't:expired', exp .. '|' .. sid .. '|')
    if sid ~= '' then
      redis.call('ZREM', base .. ':cmd:dispatched:' .. sid, id)
      redis.call('LREM', base .. ':cmd:pending:' .. sid, 0, id)
    end
    if user ~= '' then redis.call('LREM', base .. ':cmd:user:' .. user, 0, id) end
    redis.call('XADD', base .. ':cmdlog', '*', 'id', id, 'st', 'expired', 's', sid, 'at', exp, 'why', '')
    expired = expired + 1
  end
  redis.call('ZREM', KEYS[1], id)
end
local more = 0
if #due / 2 >= limit then more = 1 end
return {expired, more}
