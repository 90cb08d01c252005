--[[
  Raises a game's doors version to A.v unless it is already at or above it (src/doors/doors-version.ts).
  Concurrent bumps may arrive out of order; the version must never go back, or decisions cached under
  an older version would be served again. KEYS[1] = the doors version key. Returns the stored version.
]]
local want = A.v
local have = tonumber(redis.call('GET', KEYS[1]) or '0')
if want > have then
  redis.call('SET', KEYS[1], tostring(want))
  return want
end
return have
