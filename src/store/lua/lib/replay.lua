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

-- Level, split pointer and shard count (2^level + split) of a replay bucket holding n claims.
local function replayShards(n)
  local shards = math.max(1, math.ceil(n / REPLAY_SHARD_LOAD))
  local level = 0
  while 2 ^ (level + 1) <= shards do level = level + 1 end
  return level, shards - 2 ^ level, shards
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
  local level, split, before = replayShards(n - 1)
  if select(3, replayShards(n)) > before then
    local from, to = counter .. ':' .. split, counter .. ':' .. (split + 2 ^ level)
    local moved = {}
    for _, x in ipairs(redis.call('SMEMBERS', from)) do
      if tonumber(x) % 2 ^ (level + 1) ~= split then moved[#moved + 1] = x end
    end
    if #moved > 0 then
      redis.call('SADD', to, unpack(moved))
      redis.call('SREM', from, unpack(moved))
      -- exactly what `from` was kept for, no headroom: no shard may outlive the counter (below). As an
      -- absolute time: a PTTL copied into PEXPIRE could land 1 ms later when the clock ticks between the two
      local at = redis.call('PEXPIRETIME', from)
      if at > 0 and redis.call('PEXPIRETIME', to) < at then redis.call('PEXPIREAT', to, at) end
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
