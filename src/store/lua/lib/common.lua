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
  Quota counters (src/limits/quota-script-args.ts). KEYS[counter] is the head of the key's counters of
  one window and quota kind; the subjects are spread over listpack-sized hashes by linear hashing, so no
  hash outgrows `hash-max-listpack-entries` (128) and a subject costs ~16 B instead of ~75 B in a hash
  table. A subject's field is the first 12 hex digits of its SHA-1 (48 bits: two subjects of one window
  share a count with probability ~n^2 / 2^49, ~1e-7 for 6,000 subjects); its shard is the first 8 hex
  digits mod 2^level, or mod 2^(level + 1) for shards below the split pointer. Shard 0 is the head itself
  (a game with few subjects has one hash), shard b > 0 is KEYS[counter] .. ':' .. b (same hash tag). The
  head also holds the state: '#l' level, '#p' split pointer, '#n' subjects counted. When the subjects
  pass QUOTA_SHARD_LOAD per shard on average, the shard at the split pointer is split in two (its fields
  that now hash to the new shard move there), so counts are never lost or reset within a window. A shard
  not yet split at this level holds up to twice the average, so the load is 40, not 128: ~80 fields at
  most on average, well under 128 with the spread of a hash.
]]
local QUOTA_SHARD_LOAD = 40

local function quotaShardKey(head, b)
  if b == 0 then return head end
  return head .. ':' .. b
end

-- Splits shard `split` of `head` at `level`: fields whose hash mod 2^(level + 1) is split + 2^level move.
local function splitQuotaShard(head, level, split)
  local from, to = quotaShardKey(head, split), quotaShardKey(head, split + 2 ^ level)
  local flat = redis.call('HGETALL', from)
  local moved, gone = {}, {}
  for i = 1, #flat, 2 do
    local f = flat[i]
    -- state fields ('#…') stay; so does any field not written by this layout
    if #f == 12 and not string.find(f, '[^0-9a-f]') and tonumber(string.sub(f, 1, 8), 16) % 2 ^ (level + 1) ~= split then
      moved[#moved + 1] = f
      moved[#moved + 1] = flat[i + 1]
      gone[#gone + 1] = f
    end
  end
  if #gone == 0 then return end
  redis.call('HSET', to, unpack(moved))
  redis.call('PEXPIRE', to, A.qx)
  redis.call('HDEL', from, unpack(gone))
end

--[[
  Counts one request of `subject` in the quota counters headed by KEYS[counter] (see above); a hash that
  gets its first field of the window (re)sets its expiry to A.qx ms. Over `quota`: counts the 429 in field
  A.tf of the minute's throttle hash KEYS[throttled] (TTL A.tt s) and returns {"limited", A.qr}, A.qr =
  seconds to the window's end; else nil.
]]
local function overQuota(counter, throttled, subject, quota)
  local head = KEYS[counter]
  local digest = redis.sha1hex(subject)
  local field, h = string.sub(digest, 1, 12), tonumber(string.sub(digest, 1, 8), 16)
  local state = redis.call('HMGET', head, '#l', '#p')
  local level, split = tonumber(state[1]) or 0, tonumber(state[2]) or 0
  local b = h % 2 ^ level
  if b < split then b = h % 2 ^ (level + 1) end
  local key = quotaShardKey(head, b)
  local used = redis.call('HINCRBY', key, field, 1)
  if used == 1 then
    local n = redis.call('HINCRBY', head, '#n', 1)
    if n > (2 ^ level + split) * QUOTA_SHARD_LOAD then
      splitQuotaShard(head, level, split)
      split = split + 1
      if split == 2 ^ level then level, split = level + 1, 0 end
      redis.call('HSET', head, '#l', level, '#p', split)
    end
    redis.call('PEXPIRE', key, A.qx)
    if key ~= head then redis.call('PEXPIRE', head, A.qx) end
  end
  if used <= quota then return nil end
  redis.call('HINCRBY', KEYS[throttled], A.tf, 1)
  redis.call('EXPIRE', KEYS[throttled], A.tt)
  return {'limited', tostring(A.qr)}
end
