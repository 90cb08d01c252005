--[[
  The write side of a door request (src/doors/decision-cache.ts): caches fresh decisions and appends the
  access-log entry, in one round trip. A user's decisions under one doors version live in one field of
  the game's decision hash of the current door-cache window; the field moves to the current window on
  every write (merged with the still-fresh decisions of the previous window, which loses the field), so
  a user's decisions are stored once.
  KEYS: 1 head of the sharded decision hash (lib/common.lua) of the current window, 2 of the previous
  window (both under the doors version the decisions were made under), 3 access stream.
  A: u externalId, sv subject version, t now ms (string), e flat array doorKey, expiresAtMs (string),
     decision code (src/doors/decision-cache.ts `packDecision`; stored as given), ...; x ms until the current window's hash may expire; s externalServerId ("" = none),
     l the access-log entry's JSON array, "" for none.
]]
local now = tonumber(A.t)
local stored = 0
-- only when there is something to cache: a request that logs cache hits leaves the cache alone
if #A.e > 0 then
  local merged, order = {}, {}
  local function put(doorKey, exp, json)
    if tonumber(exp) <= now then return end
    if not merged[doorKey] then order[#order + 1] = doorKey end
    merged[doorKey] = {exp, json}
  end
  local userHash = userFieldHash(A.u)
  local shards, state = {}, {}
  for i = 1, 2 do
    local level, split, n = shardState(KEYS[i])
    shards[i], state[i] = shardFor(KEYS[i], level, split, userHash), {level, split, n}
  end
  for i = 2, 1, -1 do
    local packed = redis.call('HGET', shards[i], A.u)
    if packed then
      local t = cmsgpack.unpack(packed)
      if t[1] == A.sv then
        for j = 2, #t, 3 do put(t[j], t[j + 1], t[j + 2]) end
      end
    end
  end
  for i = 1, #A.e, 3 do put(A.e[i], A.e[i + 1], A.e[i + 2]) end
  if #order > 0 then
    local value = {A.sv}
    for _, doorKey in ipairs(order) do
      value[#value + 1] = doorKey
      value[#value + 1] = merged[doorKey][1]
      value[#value + 1] = merged[doorKey][2]
    end
    if redis.call('HSET', shards[1], A.u, cmsgpack.pack(value)) == 1 then
      -- a new field: the shard (and the head, by shardAdded) expire A.x ms from now, after every decision in it
      redis.call('PEXPIRE', shards[1], A.x)
      shardAdded(KEYS[1], state[1][1], state[1][2], state[1][3], userFieldHash, A.x)
    end
  end
  redis.call('HDEL', shards[2], A.u)
  stored = #order
end
if A.l ~= '' then
  redis.call('XADD', KEYS[3], '*', 'u', A.u, 's', A.s, 'at', A.t, 'v', A.l)
end
return stored
