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
  split at this level holds up to twice the average, hence a load of 40, not 128. Shards never merge. The
  families that expire as a whole do not uncount removed fields; the user locations (below), which have
  no expiry, do.
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
  key's counters in one window and quota kind. A subject's number x is the first 48 bits of its SHA-1 (two
  subjects of one window share a count with probability ~n^2 / 2^49, ~1e-7 for 6,000 subjects), its h
  the first 32, its field the 15 decimal digits of 2^48 + x: a listpack stores such a field as a 64-bit
  integer, ~10 B a subject with its count instead of ~16 B for the 12 hex digits written before
  2026-11-29, which a hash of a rolling deploy's window may still hold (both forms are split by their h;
  the two forms of one subject count apart, so for at most two windows it may get twice its quota).
]]
local QUOTA_FIELD_BASE = 2 ^ 48

local function quotaFieldHash(f)
  if #f == 15 and not string.find(f, '%D') then return math.floor((tonumber(f) - QUOTA_FIELD_BASE) / 65536) end
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
  local x = tonumber(string.sub(redis.sha1hex(subject), 1, 12), 16)
  local level, split, n = shardState(head)
  local key = shardFor(head, level, split, math.floor(x / 65536))
  -- '%.0f': Lua's tostring would print a 15-digit number as "%.14g", in exponent form
  local used = redis.call('HINCRBY', key, string.format('%.0f', QUOTA_FIELD_BASE + x), 1)
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

--[[
  User locations (src/store/lua/lib/user-location.ts): externalId -> the server whose roster holds the
  user, read to route a user-target command (spec: Command lifecycle) and to kick on a ban.
  A sharded hash (above) headed by KEYS[head], without expiry, whose count is the fields present: a
  release uncounts what it removes, so the shard count follows the game's peak population, not its churn.
  A value is "<externalServerId>", or "<externalServerId>\n<previous>" when the user was claimed from a
  previous server that still listed them (a player in two rosters while moving): when the claimant
  releases the user, the location goes back to the previous server if its roster still holds the user,
  so a heartbeat need not re-locate its unchanged roster to take a user back.
  KEYS[legacy] is the single hash of the layout before 2026-11-29 (docs/running.md "Upgrading"), which old
  processes read and write alone (plain server ids, re-located by every heartbeat). A user is in at most
  one of the two: a write goes to the layout this process writes (the old one with A.wl) and deletes the
  user from the other; reads and releases look in both (the shards only while they count a user, the old
  hash only while it exists). While the old hash exists a heartbeat re-locates its whole roster, moving
  each user it finds in the other layout, so it empties within a heartbeat interval of every server once
  no process writes it.
]]

-- h of a user id: a decimal id (Roblox's) below 10^15 is its own h, any other its SHA-1's first 32 bits.
local function userHash(u)
  if #u <= 15 and not string.find(u, '%D') then return tonumber(u) end
  return tonumber(string.sub(redis.sha1hex(u), 1, 8), 16)
end

-- h of a field of the locations' shards; nil for the state field.
local function locationFieldHash(f)
  if f == '' then return nil end
  return userHash(f)
end

-- A location value's server and previous server (or nil).
local function locationParts(v)
  local nl = string.find(v, '\n', 1, true)
  if not nl then return v, nil end
  return string.sub(v, 1, nl - 1), string.sub(v, nl + 1)
end

-- The user locations of this call: {head, legacy, level, split, n, old (whether the old hash may hold users)}.
local function userLocations(head, legacy)
  local w = {head = KEYS[head], legacy = KEYS[legacy]}
  w.level, w.split, w.n = shardState(w.head)
  w.old = A.wl or redis.call('EXISTS', w.legacy) == 1
  return w
end

-- uids by shard: the shards' keys in first-seen order and, per key, the indexes into uids it holds.
local function locationShards(w, uids)
  local order, groups = {}, {}
  for i, u in ipairs(uids) do
    local k = shardFor(w.head, w.level, w.split, userHash(u))
    if not groups[k] then
      groups[k] = {}
      order[#order + 1] = k
    end
    local g = groups[k]
    g[#g + 1] = i
  end
  return order, groups
end

-- Calls fn(key, fields, indexes) once per shard that uids fall in (fields: those uids, indexes: theirs in uids).
local function eachLocationShard(w, uids, fn)
  local order, groups = locationShards(w, uids)
  for _, k in ipairs(order) do
    local fields = {}
    for j, i in ipairs(groups[k]) do fields[j] = uids[i] end
    fn(k, fields, groups[k])
  end
end

--[[
  Where each of uids is: a list parallel to uids of externalServerId or false, and the set of indexes found
  in the layout this process does not write (a heartbeat rewrites them).
]]
local function locateUsers(w, uids)
  local out, misplaced = {}, {}
  if w.n > 0 then
    eachLocationShard(w, uids, function(k, fields, at)
      local got = redis.call('HMGET', k, unpack(fields))
      for j, i in ipairs(at) do
        out[i] = got[j] and locationParts(got[j])
        if got[j] and A.wl then misplaced[i] = true end
      end
    end)
  end
  if w.old then
    local missing, at = {}, {}
    for i = 1, #uids do
      if not out[i] then
        missing[#missing + 1] = uids[i]
        at[#at + 1] = i
      end
    end
    if #missing > 0 then
      local got = redis.call('HMGET', w.legacy, unpack(missing))
      for j, i in ipairs(at) do
        out[i] = got[j]
        if got[j] and not A.wl then misplaced[i] = true end
      end
    end
  end
  return out, misplaced
end

-- Deletes fields from shard k and uncounts those it held.
local function dropFromShard(w, k, fields)
  local removed = redis.call('HDEL', k, unpack(fields))
  if removed > 0 then
    w.n = math.max(0, w.n - removed)
    redis.call('HSET', w.head, '', w.level .. ' ' .. w.split .. ' ' .. w.n)
  end
end

--[[
  Locates users at server sid: claims = {{uid, previous server or false}, ...} (distinct uids); splits as
  the count grows. The old hash gets the plain server id, as old processes write it.
]]
local function placeUsers(w, sid, claims)
  if #claims == 0 then return end
  local uids = {}
  for i, c in ipairs(claims) do uids[i] = c[1] end
  if A.wl then
    local flat = {}
    for _, u in ipairs(uids) do
      flat[#flat + 1] = u
      flat[#flat + 1] = sid
    end
    redis.call('HSET', w.legacy, unpack(flat))
    if w.n > 0 then eachLocationShard(w, uids, function(k, fields) dropFromShard(w, k, fields) end) end
    return
  end
  local added = 0
  eachLocationShard(w, uids, function(k, _, at)
    local kv = {}
    for _, i in ipairs(at) do
      local c = claims[i]
      kv[#kv + 1] = c[1]
      kv[#kv + 1] = c[2] and (sid .. '\n' .. c[2]) or sid
    end
    added = added + redis.call('HSET', k, unpack(kv))
  end)
  if w.old then redis.call('HDEL', w.legacy, unpack(uids)) end
  if added > 0 then
    w.n = w.n + added
    w.level, w.split = shardResize(w.head, w.level, w.split, w.n, locationFieldHash, nil)
  end
end

--[[
  Releases users from server sid: each of uids still located there goes back to the server it was claimed
  from if that server's roster (A.b .. SFX.roster .. <server>) still holds the user, else is no longer
  located anywhere. A user another server claimed meanwhile is left alone.
]]
local function releaseUsers(w, uids, sid)
  if #uids == 0 then return end
  if w.n > 0 then
    eachLocationShard(w, uids, function(k, fields)
      local got = redis.call('HMGET', k, unpack(fields))
      local gone = {}
      for j, u in ipairs(fields) do
        if got[j] then
          local at, before = locationParts(got[j])
          if at == sid then
            if before and redis.call('HEXISTS', A.b .. SFX.roster .. before, u) == 1 then
              redis.call('HSET', k, u, before)
            else
              gone[#gone + 1] = u
            end
          end
        end
      end
      if #gone > 0 then dropFromShard(w, k, gone) end
    end)
  end
  if w.old then
    local got = redis.call('HMGET', w.legacy, unpack(uids))
    local gone = {}
    for i, u in ipairs(uids) do
      if got[i] == sid then gone[#gone + 1] = u end
    end
    if #gone > 0 then redis.call('HDEL', w.legacy, unpack(gone)) end
  end
end
