--[[
  Reserves one platform user-restriction write (src/bans/platform-write-limits.ts): a sliding window for
  the game's universe (at most A.um writes in any A.uw ms) and one for the user (A.sm in any
  A.sw ms), after the pause a 429 Retry-After set. Both windows are checked and taken together,
  atomically, on Redis's clock (TIME), so every worker process shares one budget whatever its own clock.
  KEYS[1] universe window zset, KEYS[2] user window zset, KEYS[3] pause key (same "{g:<gameId>}" slot).
  A.id a member unique to this attempt.
  Returns 0 when the write may go now (both windows took it), else the ms to wait before asking again.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local paused = redis.call('PTTL', KEYS[3])
if paused > 0 then return paused end

-- ms until the window at `key` has room for one more write (0 = room now)
local function waitFor(key, windowMs, max)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
  local count = redis.call('ZCARD', key)
  if count < max then return 0 end
  local blocking = redis.call('ZRANGE', key, count - max, count - max, 'WITHSCORES')
  return math.max(1, tonumber(blocking[2]) + windowMs - now)
end

local uniWindow, uniMax = A.uw, A.um
local userWindow, userMax = A.sw, A.sm
local wait = math.max(waitFor(KEYS[1], uniWindow, uniMax), waitFor(KEYS[2], userWindow, userMax))
if wait > 0 then return wait end
redis.call('ZADD', KEYS[1], now, A.id)
redis.call('PEXPIRE', KEYS[1], uniWindow)
redis.call('ZADD', KEYS[2], now, A.id)
redis.call('PEXPIRE', KEYS[2], userWindow)
return 0
