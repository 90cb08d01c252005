--[[
  Sharded hashes (issue #15 item 5): a family whose fields can outgrow `hash-max-listpack-entries` (128)
  is spread by linear hashing over listpack-sized hashes, where a field costs its bytes plus ~3 B instead
  of ~60–75 B in a hash table. Shard 0 is the head key itself (a family with few fields has one hash),
  shard b > 0 is head .. ':' .. b (same hash tag). A field's shard is h mod 2^level, or h mod
  2^(level + 1) below the split pointer, h = a 32-bit hash of the field. The head's field '' (never a
  real field: subjects are digests, user ids are non-empty) holds the state "<level> <split> <fields>".
  When the fields pass SHARD_LOAD per shard on average, the shard at the split pointer is split in two
  (its fields that now hash to the new shard move there), so a field is never lost. A shard not yet
  split at this level holds up to twice the average, hence a load of 40, not 128. Shards never merge. The
  families that expire as a whole do not uncount removed fields; the user locations
  (lib/user-locations.lua), which have no expiry, do.
]]
local SHARD_LOAD = 40

local function shardKey(head, b)
  if b == 0 then return head end
  return head .. ':' .. b
end

-- The state of the sharded hash `head`: level, split pointer, fields added.
local function shardState(head)
  local l, p, n = string.match(redis.call('HGET', head, '') or '', '^(%d+) (%d+) (%d+)$')
  return tonumber(l) or 0, tonumber(p) or 0, tonumber(n) or 0
end

-- The shard (0, 1, ...) of a field of hash h, given the family's level and split pointer (linear hashing).
local function shardIndex(level, split, h)
  local b = h % 2 ^ level
  if b < split then b = h % 2 ^ (level + 1) end
  return b
end

-- The key of the shard of `head` that holds a field of hash h, given the head's level and split pointer.
local function shardFor(head, level, split, h)
  return shardKey(head, shardIndex(level, split, h))
end

--[[
  Records head's field count n (level, split: its state before) and splits the shard at the pointer while
  the fields pass SHARD_LOAD per shard on average; every key it writes expires ttlMs from now (nil: no
  expiry). hashOf(field) gives a field's h, or nil for a field to leave where it is (the state field, a
  field of an older layout). Returns the new level and split pointer.
]]
local function shardResize(head, level, split, n, hashOf, ttlMs)
  while n > (2 ^ level + split) * SHARD_LOAD do
    local from, to = shardKey(head, split), shardKey(head, split + 2 ^ level)
    local flat = redis.call('HGETALL', from)
    local moved, gone = {}, {}
    for i = 1, #flat, 2 do
      local h = hashOf(flat[i])
      if h and h % 2 ^ (level + 1) ~= split then
        moved[#moved + 1] = flat[i]
        moved[#moved + 1] = flat[i + 1]
        gone[#gone + 1] = flat[i]
      end
    end
    if #gone > 0 then
      redis.call('HSET', to, unpack(moved))
      if ttlMs then redis.call('PEXPIRE', to, ttlMs) end
      redis.call('HDEL', from, unpack(gone))
    end
    split = split + 1
    if split == 2 ^ level then level, split = level + 1, 0 end
  end
  redis.call('HSET', head, '', level .. ' ' .. split .. ' ' .. n)
  if ttlMs then redis.call('PEXPIRE', head, ttlMs) end
  return level, split
end

-- Records that a field was added to one of head's shards (state from shardState), splitting as needed.
local function shardAdded(head, level, split, n, hashOf, ttlMs)
  shardResize(head, level, split, n + 1, hashOf, ttlMs)
end
