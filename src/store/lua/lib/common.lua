--[[
  Prepended to every script after the generated suffix table `SFX` (src/store/redis.ts): the script's
  named arguments and the replay and quota steps several scripts share.
  A = the one msgpack-packed argument table (ARGV[1]); its fields are listed in each script's header.
]]
local A = cmsgpack.unpack(ARGV[1])

--[[
  Replay claim (spec: Authentication rule 3; src/auth/replay-tags.ts). KEYS[first .. first + count - 1]
  are the replay bucket hashes, newest (the current bucket) first; a bucket's field A.rs (the tag's
  shard) holds the tags claimed in it, concatenated, each #A.rt bytes. A tag found at a tag boundary in
  any bucket is a replay; else it is appended to the current bucket, which then expires A.rx ms from now.
  Returns true when claimed, false on a replay.
]]
local function claimReplay(first, count)
  local width = #A.rt
  local current
  for i = first, first + count - 1 do
    local tags = redis.call('HGET', KEYS[i], A.rs)
    if i == first then current = tags end
    if tags then
      local pos = 1
      while true do
        local at = string.find(tags, A.rt, pos, true)
        if not at then break end
        if (at - 1) % width == 0 then return false end
        pos = at + 1
      end
    end
  end
  redis.call('HSET', KEYS[first], A.rs, (current or '') .. A.rt)
  redis.call('PEXPIRE', KEYS[first], A.rx)
  return true
end

--[[
  Counts one request in field `field` of the quota hash KEYS[counter] (src/limits/quota-script-args.ts):
  a new field (re)sets the hash's expiry to A.qx ms. Over `quota`: counts the 429 in field A.tf of the
  minute's throttle hash KEYS[throttled] (TTL A.tt s) and returns {"limited", A.qr}, A.qr = seconds to the
  window's end; else nil.
]]
local function overQuota(counter, throttled, field, quota)
  local used = redis.call('HINCRBY', KEYS[counter], field, 1)
  if used == 1 then redis.call('PEXPIRE', KEYS[counter], A.qx) end
  if used <= quota then return nil end
  redis.call('HINCRBY', KEYS[throttled], A.tf, 1)
  redis.call('EXPIRE', KEYS[throttled], A.tt)
  return {'limited', tostring(A.qr)}
end
