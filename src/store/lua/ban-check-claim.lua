--[[
  The Redis write of POST /api/v1/game/bans/check (spec: Authentication rule 3; Limits): claims the
  request signature in the replay cache and counts the request against its per-(key, user) quota
  (src/limits/quotas.ts), in one script under the game's hash tag. The blocklist lookup itself is a
  separate read in the workspace's slot, sent in the same tick. Suffixes must match src/store/keys.ts.

  KEYS[1] replay key `<base>:replay:<keyId>:<signature>`.
  ARGV: 1 base "<prefix>:{g:<gameId>}", 2 replay TTL s, 3 quota subject, 4 quota per window, 5 window s,
        6 throttle-count TTL s, 7 who (for the count), 8 now ms
  Returns {"replay"}, {"limited", <seconds to the window's end>} or {"ok"}.
]]
local base, now = ARGV[1], tonumber(ARGV[8])
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', tonumber(ARGV[2])) then
  return {'replay'}
end
local windowS = tonumber(ARGV[5])
local window = math.floor(now / (windowS * 1000))
local quotaKey = base .. ':rl:ban:' .. window .. ':' .. ARGV[3]
local used = redis.call('INCR', quotaKey)
if used == 1 then redis.call('EXPIRE', quotaKey, 2 * windowS) end
if used > tonumber(ARGV[4]) then
  local throttled = base .. ':rl:429:' .. math.floor(now / 60000)
  redis.call('HINCRBY', throttled, 'ban:' .. ARGV[7], 1)
  redis.call('EXPIRE', throttled, tonumber(ARGV[6]))
  return {'limited', tostring(math.ceil(((window + 1) * windowS * 1000 - now) / 1000))}
end
return {'ok'}
