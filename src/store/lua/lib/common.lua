--[[
  Prepended to every script after the generated suffix table `SFX` (src/store/redis.ts): the script's
  named arguments and the replay and quota steps several scripts share.
  A = the one msgpack-packed argument table (ARGV[1]); its fields are listed in each script's header.
]]
local A = cmsgpack.unpack(ARGV[1])

--[[
  Replay claim (spec: Authentication rule 3; src/store/lua/lib/replay-claim.ts). KEYS[first .. first + count - 1]
  are the replay bucket hashes, newest (the current bucket) first; a bucket's field A.rs (the tag's
  shard) holds the tags claimed in it, concatenated, each #A.rt bytes. A tag found at a tag boundary in
  any bucket is a replay; else it is appended to the current bucket, whose expiry is raised to A.rx ms
  from now if it was sooner (never lowered: the bucket holds other claims whose windows close later).
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
  -- PTTL is -1 for the bucket just created (no expiry yet), so it gets one
  if redis.call('PTTL', KEYS[first]) < A.rx then redis.call('PEXPIRE', KEYS[first], A.rx) end
  return true
end

--[[
  Sharded hashes (issue #15 item 5): a family whose fields can outgrow `hash-max-listpack-entries` (128)
  is spread by linear hashing over listpack-sized hashes, where a field costs its bytes plus ~3 B instead
  of ~60–75 B in a hash table. Shard 0 is the head key itself (a family with few fields has one hash),
  shard b > 0 is head .. ':' .. b (same hash tag). A field's shard is h mod 2^level, or h mod
  2^(level + 1) below the split pointer, h = a 32-bit hash of the field. The head's field '' (never a
  real field: subjects are digests, user ids are non-empty) holds the state "<level> <split> <fields>".
  When the fields pass SHARD_LOAD per shard on average, the shard at the split pointer is split in two
  (its fields that now hash to the new shard move there), so a field is never lost. A shard not yet
  split at this level holds up to twice the average, hence a load of 40, not 128. Removed fields are not
  uncounted: shards never merge, and the family expires as a whole.
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

-- The key of the shard of `head` that holds a field of hash h, given the head's level and split pointer.
local function shardFor(head, level, split, h)
  local b = h % 2 ^ level
  if b < split then b = h % 2 ^ (level + 1) end
  return shardKey(head, b)
end

--[[
  Records that a field was added to one of head's shards (state from shardState): counts it and, past
  SHARD_LOAD, splits the shard at the pointer; every key it writes expires ttlMs from now. hashOf(field)
  gives a field's h, or nil for a field to leave where it is (the state field, a field of an older layout).
]]
local function shardAdded(head, level, split, n, hashOf, ttlMs)
  n = n + 1
  if n > (2 ^ level + split) * SHARD_LOAD then
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
      redis.call('PEXPIRE', to, ttlMs)
      redis.call('HDEL', from, unpack(gone))
    end
    split = split + 1
    if split == 2 ^ level then level, split = level + 1, 0 end
  end
  redis.call('HSET', head, '', level .. ' ' .. split .. ' ' .. n)
  redis.call('PEXPIRE', head, ttlMs)
end

-- The door decision hash's field of user u: the id itself, with one more '#' when it starts with one, so
-- that no user's field is ever a context field ("#<digits>:<key>", src/doors/decision-cache.ts).
local function doorUserField(u)
  if string.byte(u, 1) == 35 then return '#' .. u end
  return u
end

-- h of a field that is a user id or a context field (door decisions, src/doors/decision-cache.ts); nil for the state field.
local function userFieldHash(f)
  if f == '' then return nil end
  return tonumber(string.sub(redis.sha1hex(f), 1, 8), 16)
end

--[[
  Quota counters (src/store/lua/lib/quota-count.ts): KEYS[counter] heads the sharded hash (above) of one
  key's counters in one window and quota kind. A subject's field is the first 12 hex digits of its SHA-1
  (48 bits: two subjects of one window share a count with probability ~n^2 / 2^49, ~1e-7 for 6,000
  subjects), its h the first 8; ~16 B a subject.
]]
local function quotaFieldHash(f)
  if #f == 12 and not string.find(f, '[^0-9a-f]') then return tonumber(string.sub(f, 1, 8), 16) end
  return nil
end

--[[
  Counts one request of `subject` in the quota counters headed by KEYS[counter] and returns the subject's
  count in this window, this request included; every hash it writes expires A.qx ms from now (the end of
  the next window).
]]
local function countSubject(counter, subject)
  local head = KEYS[counter]
  local digest = redis.sha1hex(subject)
  local level, split, n = shardState(head)
  local key = shardFor(head, level, split, tonumber(string.sub(digest, 1, 8), 16))
  local used = redis.call('HINCRBY', key, string.sub(digest, 1, 12), 1)
  if used == 1 then
    redis.call('PEXPIRE', key, A.qx)
    shardAdded(head, level, split, n, quotaFieldHash, A.qx)
  end
  return used
end

--[[
  Counts one request of `subject` (countSubject). Over `quota`: counts the 429 in field A.tf of the
  minute's throttle hash KEYS[throttled] (TTL A.tt s) and returns {"limited", A.qr}, A.qr = seconds to
  the window's end; else nil.
]]
local function overQuota(counter, throttled, subject, quota)
  if countSubject(counter, subject) <= quota then return nil end
  redis.call('HINCRBY', KEYS[throttled], A.tf, 1)
  redis.call('EXPIRE', KEYS[throttled], A.tt)
  return {'limited', tostring(A.qr)}
end
