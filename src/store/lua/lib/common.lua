--[[
  Prepended to every script after the generated suffix table `SFX` (src/store/redis.ts): the script's
  named arguments and the replay and quota steps several scripts share.
  A = the one msgpack-packed argument table (ARGV[1]); its fields are listed in each script's header.
]]
local A = cmsgpack.unpack(ARGV[1])

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

--[[
  Replay claim (spec: Authentication rule 3; src/store/lua/lib/replay-claim.ts). KEYS[first .. first + count/2 - 1]
  are the checked buckets' claim counters, KEYS[first + count/2 ..] the same buckets' hashes of the layout
  before 2026-11-29 (docs/running.md "Upgrading"), both newest (the current bucket) first.
  A bucket's claims are the integers A.rm (< 2^53) in sets `<counter>:<shard>`, spread by linear hashing on
  the integer: with n claims counted the bucket has max(1, ceil(n / REPLAY_SHARD_LOAD)) shards, each an
  intset of ~REPLAY_SHARD_LOAD 8-byte members (under the stock `set-max-intset-entries` 512 even for a
  shard not yet split at its level). The state is the count alone: level and split pointer follow from it
  (replayShards), so a claim reads the counters in one MGET and each bucket with one SISMEMBER. Legacy
  hashes: a bucket's field A.rs holds tags, each #A.rt bytes, concatenated; read only when one exists.
  A claim found in any bucket of either layout is a replay; else it is added to the current bucket (sets,
  or the legacy hash when A.rl). Every key written lives at least A.rx ms from now: raised, never
  lowered (a bucket holds other claims whose windows close later), with REPLAY_EXPIRY_HEADROOM_MS to
  spare, so a busy bucket's expiries are rewritten once per that time rather than at every claim.
  Returns true when claimed, false on a replay.
]]
local REPLAY_SHARD_LOAD = 192
local REPLAY_EXPIRY_HEADROOM_MS = 10000

-- Level and split pointer of a replay bucket holding n claims (shards = 2^level + split).
local function replayShards(n)
  local shards = math.max(1, math.ceil(n / REPLAY_SHARD_LOAD))
  local level = 0
  while 2 ^ (level + 1) <= shards do level = level + 1 end
  return level, shards - 2 ^ level
end

-- Raises `key`'s expiry to at least ms from now, with headroom (a key without one gets it).
local function keepAtLeast(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms + REPLAY_EXPIRY_HEADROOM_MS) end
end

-- Whether the legacy bucket hash `key` holds tag A.rt in field A.rs at a tag boundary.
local function legacyClaimed(key)
  local tags = redis.call('HGET', key, A.rs)
  if not tags then return false end
  local width, pos = #A.rt, 1
  while true do
    local at = string.find(tags, A.rt, pos, true)
    if not at then return false end
    if (at - 1) % width == 0 then return true end
    pos = at + 1
  end
end

--[[
  Counts claim A.rm (m = its number) into the bucket counted by `counter`: past a multiple of
  REPLAY_SHARD_LOAD the shard at the split pointer is split first (its members that now hash to the new
  shard move there, with its expiry), then m goes to its shard. A.rm goes to Redis as the string, since
  Lua would print the number as "%.14g".
]]
local function replayAdd(counter, m)
  local n = redis.call('INCR', counter)
  local level, split = replayShards(n - 1)
  if math.max(1, math.ceil(n / REPLAY_SHARD_LOAD)) > 2 ^ level + split then
    local from, to = counter .. ':' .. split, counter .. ':' .. (split + 2 ^ level)
    local moved = {}
    for _, x in ipairs(redis.call('SMEMBERS', from)) do
      if tonumber(x) % 2 ^ (level + 1) ~= split then moved[#moved + 1] = x end
    end
    if #moved > 0 then
      redis.call('SADD', to, unpack(moved))
      redis.call('SREM', from, unpack(moved))
      -- exactly what `from` was kept for, no headroom: no shard may outlive the counter (below)
      local ttl = redis.call('PTTL', from)
      if redis.call('PTTL', to) < ttl then redis.call('PEXPIRE', to, ttl) end
    end
    level, split = replayShards(n)
  end
  local shard = counter .. ':' .. shardIndex(level, split, m)
  redis.call('SADD', shard, A.rm)
  -- the counter is raised with every shard, never lowered (GT), and a split copies an expiry without
  -- adding to it, so the counter outlives every shard (a bucket whose counter is gone is not read); a
  -- shard that need not be raised means the counter need not either
  local keep = A.rx + REPLAY_EXPIRY_HEADROOM_MS
  if n == 1 then
    redis.call('PEXPIRE', shard, keep)
    redis.call('PEXPIRE', counter, keep)
  elseif redis.call('PTTL', shard) < A.rx then
    redis.call('PEXPIRE', shard, keep)
    redis.call('PEXPIRE', counter, keep, 'GT')
  end
end

local function claimReplay(first, count)
  local buckets = count / 2
  local m = tonumber(A.rm)
  local counts = redis.call('MGET', unpack(KEYS, first, first + buckets - 1))
  for i = 1, buckets do
    local n = tonumber(counts[i])
    if n then
      local level, split = replayShards(n)
      if redis.call('SISMEMBER', KEYS[first + i - 1] .. ':' .. shardIndex(level, split, m), A.rm) == 1 then return false end
    end
  end
  local legacy = first + buckets
  if redis.call('EXISTS', unpack(KEYS, legacy, legacy + buckets - 1)) > 0 then
    for i = legacy, legacy + buckets - 1 do
      if legacyClaimed(KEYS[i]) then return false end
    end
  end
  if A.rl then
    redis.call('HSET', KEYS[legacy], A.rs, (redis.call('HGET', KEYS[legacy], A.rs) or '') .. A.rt)
    keepAtLeast(KEYS[legacy], A.rx)
  else
    replayAdd(KEYS[first], m)
  end
  return true
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
