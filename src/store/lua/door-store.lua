--[[
  The write side of a door request (src/doors/decision-cache.ts): caches fresh decisions and appends the
  access-log entry, in one round trip. Decisions are cached per subject context (src/doors/context-key.ts):
  the context's field "#<n>" holds its decisions under one doors version, shared by every user of that
  context; the user's field (lib/door-fields.lua doorUserField) holds a pointer {subject version, "#<n>"}.
  n is the context's ordinal under the doors version, interned in KEYS[4] (name → n, field "" the last n
  given): a pointer names it in ~3 B instead of the ~26 B name (issue #32 item 4). Both are written to the
  current window's hash: the context's decisions merged with its still-fresh ones of both windows (the
  previous window's copy stays until that hash expires), the pointer moved (the previous window loses it),
  so a user's pointer is stored once. door-lookup.lua follows whatever field a pointer names, so pointers
  an older build wrote (naming "#<workspace version>:<context key>") are still read during an upgrade.
  KEYS: 1 head of the sharded decision hash (lib/sharded-hash.lua) of the current window, 2 of the previous
  window (both under the doors version the decisions were made under), 3 access stream, 4 the context
  ordinals of that doors version.
  A: u externalId, sv subject version, c the context's name "<workspace version>:<context key>",
     t now ms (string), e flat array doorKey, expiresAtMs (string), decision code
     (src/doors/decision-cache.ts `packDecision`; stored as given), ...; x ms until the current window's
     hash may expire; s externalServerId ("" = none), l the access-log entry's JSON array, "" for none;
     oc the most context ordinals per doors version.
]]
local now = tonumber(A.t)
local stored = 0

-- Writes field = value into the current window's sharded hash; a new field makes the shard (and the head,
-- by shardAdded) expire A.x ms from now, after every decision in it. The state is read per write: a
-- write may split a shard.
local function put(field, value)
  local level, split, n = shardState(KEYS[1])
  local shard = shardFor(KEYS[1], level, split, userFieldHash(field))
  if redis.call('HSET', shard, field, value) == 1 then
    redis.call('PEXPIRE', shard, A.x)
    shardAdded(KEYS[1], level, split, n, userFieldHash, A.x)
  end
end

-- The shard of `field` in window i's hash (1 current, 2 previous).
local function shardOf(i, field)
  local level, split = shardState(KEYS[i])
  return shardFor(KEYS[i], level, split, userFieldHash(field))
end

-- The context's field "#<n>". The ordinals live as long as any hash of their doors version: each store
-- extends them to the current window's expiry (now + A.x only grows), so an ordinal is never given to
-- another context while a pointer naming it can still be read.
-- At most A.oc ordinals per hash: a member's context is their own (joinedAt), so without a cap a game
-- whose doors stay unchanged would keep one entry per member who ever played. Past it, a context is
-- named in full ("#<name>", as older builds did), which lookups follow the same way.
local function contextField(name)
  local n = redis.call('HGET', KEYS[4], name)
  if not n then
    if tonumber(redis.call('HGET', KEYS[4], '') or '0') >= A.oc then return '#' .. name end
    n = redis.call('HINCRBY', KEYS[4], '', 1)
    redis.call('HSET', KEYS[4], name, n)
  end
  if redis.call('PEXPIRE', KEYS[4], A.x, 'GT') == 0 and redis.call('PTTL', KEYS[4]) == -1 then redis.call('PEXPIRE', KEYS[4], A.x) end
  return '#' .. n
end

-- only when there is something to cache: a request that logs cache hits leaves the cache alone
if #A.e > 0 then
  local c = contextField(A.c)
  local merged, order = {}, {}
  local function keep(doorKey, exp, code)
    if tonumber(exp) <= now then return end
    if not merged[doorKey] then order[#order + 1] = doorKey end
    merged[doorKey] = {exp, code}
  end
  for i = 2, 1, -1 do
    local packed = redis.call('HGET', shardOf(i, c), c)
    if packed then
      local t = cmsgpack.unpack(packed)
      for j = 1, #t, 3 do keep(t[j], t[j + 1], t[j + 2]) end
    end
  end
  for i = 1, #A.e, 3 do keep(A.e[i], A.e[i + 1], A.e[i + 2]) end
  if #order > 0 then
    local value = {}
    for _, doorKey in ipairs(order) do
      value[#value + 1] = doorKey
      value[#value + 1] = merged[doorKey][1]
      value[#value + 1] = merged[doorKey][2]
    end
    put(c, cmsgpack.pack(value))
    put(doorUserField(A.u), cmsgpack.pack({A.sv, c}))
  end
  redis.call('HDEL', shardOf(2, doorUserField(A.u)), doorUserField(A.u))
  stored = #order
end
if A.l ~= '' then
  redis.call('XADD', KEYS[3], '*', 'u', A.u, 's', A.s, 'at', A.t, 'v', A.l)
end
return stored
