--[[
  Admits one nudge on the game's topic if the platform's receive budget allows it (spec: Limits,
  "Platform messaging receive budget: 40 + 80 x server count per topic per minute").
  Every subscribed server receives every message, so S live servers receive S copies of each publish:
  publishes per minute <= budget = floor(safety * (base + perServer * S) / S). The live-server count comes
  from the game's `servers` zset; `safety` < 1 leaves room for servers that subscribed before their first
  heartbeat. Publishes are paced evenly, at least window / budget ms apart, so a steady stream of
  commands gets a nudge about every second instead of a burst that spends the minute's budget and then
  nothing; the sliding window (KEYS[1], zset publish id -> ms of the last A.w ms) is the hard limit.

  KEYS: 1 the nudge log zset, 2 the game's live-server zset.
  A: now ms, w window ms, bb budget base (40), bs budget per server (80), sf safety (0..1),
     id publish id (unique)
  Returns {1, budget, servers} when admitted (the publish is recorded), {0, retry after ms, servers} when
  it is too soon, or {-1, 0, 0} when no server is live (nobody to nudge).
]]
local now, window = A.now, A.w
local servers = redis.call('ZCARD', KEYS[2])
if servers == 0 then return {-1, 0, 0} end
local budget = math.floor(A.sf * (A.bb + A.bs * servers) / servers)
if budget < 1 then budget = 1 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local sent = redis.call('ZCARD', KEYS[1])
local retry = 0
if sent > 0 then
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  retry = tonumber(last[2]) + math.ceil(window / budget) - now
end
if sent >= budget then
  -- the window has room again once enough of the oldest publishes have left it
  local nth = redis.call('ZRANGE', KEYS[1], sent - budget, sent - budget, 'WITHSCORES')
  retry = math.max(retry, tonumber(nth[2]) + window - now)
end
if retry > 0 then return {0, retry, servers} end
redis.call('ZADD', KEYS[1], now, A.id)
redis.call('PEXPIRE', KEYS[1], window)
return {1, budget, servers}
