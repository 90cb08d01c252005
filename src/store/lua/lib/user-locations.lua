--[[
  User locations (src/store/lua/lib/user-location.ts): externalId -> the server whose roster holds the
  user, read to route a user-target command (spec: Command lifecycle) and to kick on a ban.
  A sharded hash (lib/sharded-hash.lua) headed by KEYS[head], without expiry, whose count is the fields
  present: a release uncounts what it removes, so the shard count follows the game's peak population, not
  its churn.
  A value is "\n<n>", or "\n<n>\n<previous n>" when the user was claimed from a previous server that
  still listed them (a player in two rosters while moving): when the claimant releases the user, the
  location goes back to the previous server if its roster still holds the user, so a heartbeat need not
  re-locate its unchanged roster to take a user back. n is the server's ordinal (serverOrdinal below), a
  few bytes instead of its externalServerId (15–36 B for the fleet's ids and a platform's GUIDs; issue #32
  item 4). Builds before 2026-11-30 wrote the externalServerId itself ("<server>" or
  "<server>\n<previous>"); a value that starts with a newline is never one of those (an id is not empty),
  so both are read, and a heartbeat's five-minute re-locate rewrites the old ones.
  KEYS[legacy] is the single hash of the layout before 2026-11-29 (docs/running.md "Upgrading"), which old
  processes read and write alone (plain server ids, re-located by every heartbeat). A user is in at most
  one of the two: a write goes to the layout this process writes (the old one with A.wl) and deletes the
  user from the other; reads and releases look in both (the shards only while they count a user, the old
  hash only while it exists). While the old hash exists a heartbeat that re-locates its whole roster
  (heartbeat.lua: when its roster changed, and at the five-minute refresh) moves each user it finds in
  the other layout, so the old hash empties within five minutes of every server once no process writes it.
]]

-- h of a field of the shards: a decimal id (Roblox's) below 10^15 is its own h, any other the first 32
-- bits of its SHA-1 (lib/door-fields.lua); nil for the state field '' (tonumber('') is nil).
local function userHash(u)
  if #u <= 15 and not string.find(u, '%D') then return tonumber(u) end
  return userFieldHash(u)
end

--[[
  Server ordinals: a live server's n is its hash's field `o`, given on first use from the game's counter
  A.b .. SFX.serverOrdinal (never reset, so n is never given twice while a location may name it), and
  n -> externalServerId is kept in A.b .. SFX.serverOrdinals .. floor(n / 100): listpack-sized hashes that
  a run of ordinals fills in turn (empty ones vanish) until the server is swept (forgetServerOrdinal).
]]
local SERVER_ORDINALS_PER_HASH = 100

local function ordinalHash(n)
  return A.b .. SFX.serverOrdinals .. math.floor(tonumber(n) / SERVER_ORDINALS_PER_HASH)
end

-- The ordinal of server sid (a string), given now if it has none.
local function serverOrdinal(sid)
  local serverKey = A.b .. SFX.server .. sid
  local n = redis.call('HGET', serverKey, 'o')
  if n then return n end
  n = tostring(redis.call('INCR', A.b .. SFX.serverOrdinal))
  redis.call('HSET', serverKey, 'o', n)
  redis.call('HSET', ordinalHash(n), n, sid)
  return n
end

-- The ordinal of server sid if its hash exists (a live server), else nil.
local function liveServerOrdinal(sid)
  if redis.call('EXISTS', A.b .. SFX.server .. sid) == 0 then return nil end
  return serverOrdinal(sid)
end

-- The externalServerId of ordinal n, or nil once that server was swept.
local function ordinalServer(n)
  return redis.call('HGET', ordinalHash(n), n) or nil
end

-- Drops the ordinal of the server whose hash is serverKey (it is being swept): locations naming it then
-- resolve to no server.
local function forgetServerOrdinal(serverKey)
  local n = redis.call('HGET', serverKey, 'o')
  if n then redis.call('HDEL', ordinalHash(n), n) end
end

--[[
  A location value's server and previous server (or nil), as written: ordinals (third result true) for
  "\n<n>[\n<previous n>]", externalServerIds for the values of builds before 2026-11-30. A value of
  neither form (never written) names no server: false.
]]
local function locationParts(v)
  if string.byte(v, 1) == 10 then
    local cur, before = string.match(v, '^\n(%d+)\n?(%d*)$')
    if before == '' then before = nil end
    return cur or false, before, true
  end
  local nl = string.find(v, '\n', 1, true)
  if not nl then return v, nil, false end
  return string.sub(v, 1, nl - 1), string.sub(v, nl + 1), false
end

-- The externalServerId a location value places the user at, or false (an ordinal no longer known).
local function locatedServer(v)
  local cur, _, byOrdinal = locationParts(v)
  if not byOrdinal or not cur then return cur end
  return ordinalServer(cur) or false
end

-- The user locations of this call: {head, legacy, level, split, n, old (whether the old hash may hold users)}.
local function userLocations(head, legacy)
  local w = {head = KEYS[head], legacy = KEYS[legacy]}
  w.level, w.split, w.n = shardState(w.head)
  w.old = A.wl or redis.call('EXISTS', w.legacy) == 1
  return w
end

-- Calls fn(key, fields, indexes) once per shard that uids fall in (fields: those uids, indexes: theirs in uids).
local function eachLocationShard(w, uids, fn)
  local order, fields, indexes = {}, {}, {}
  for i, u in ipairs(uids) do
    local k = shardFor(w.head, w.level, w.split, userHash(u))
    if not fields[k] then
      order[#order + 1] = k
      fields[k], indexes[k] = {}, {}
    end
    table.insert(fields[k], u)
    table.insert(indexes[k], i)
  end
  for _, k in ipairs(order) do fn(k, fields[k], indexes[k]) end
end

--[[
  Where each of uids is: a list parallel to uids of externalServerId or false, and the set of indexes found
  in a layout or form this process does not write (a heartbeat rewrites them).
]]
local function locateUsers(w, uids)
  local out, misplaced = {}, {}
  if w.n > 0 then
    eachLocationShard(w, uids, function(k, fields, at)
      local got = redis.call('HMGET', k, unpack(fields))
      for j, i in ipairs(at) do
        out[i] = got[j] and locatedServer(got[j])
        if got[j] and (A.wl or string.byte(got[j], 1) ~= 10) then misplaced[i] = true end
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

-- Records that `removed` fields left the shards (the state is written once per call, not per shard).
local function uncount(w, removed)
  if removed == 0 then return end
  w.n = math.max(0, w.n - removed)
  redis.call('HSET', w.head, '', w.level .. ' ' .. w.split .. ' ' .. w.n)
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
    if w.n > 0 then
      local removed = 0
      eachLocationShard(w, uids, function(k, fields) removed = removed + redis.call('HDEL', k, unpack(fields)) end)
      uncount(w, removed)
    end
    return
  end
  local added = 0
  local here = '\n' .. serverOrdinal(sid)
  eachLocationShard(w, uids, function(k, _, at)
    local kv = {}
    for _, i in ipairs(at) do
      local c = claims[i]
      local before = c[2] and liveServerOrdinal(c[2])
      kv[#kv + 1] = c[1]
      kv[#kv + 1] = before and (here .. '\n' .. before) or here
    end
    added = added + redis.call('HSET', k, unpack(kv))
  end)
  if w.old then redis.call('HDEL', w.legacy, unpack(uids)) end
  if added > 0 then
    w.n = w.n + added
    w.level, w.split = shardResize(w.head, w.level, w.split, w.n, userHash, nil)
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
    local removed = 0
    local own = redis.call('HGET', A.b .. SFX.server .. sid, 'o')
    eachLocationShard(w, uids, function(k, fields)
      local got = redis.call('HMGET', k, unpack(fields))
      local gone = {}
      for j, u in ipairs(fields) do
        if got[j] then
          local at, before, byOrdinal = locationParts(got[j])
          local mine = at == sid
          if byOrdinal then mine = own and at == own end
          if at and mine then
            -- the previous server takes the user back, in the form this process writes
            local back = before
            if before and byOrdinal then back = ordinalServer(before) end
            if back and redis.call('HEXISTS', A.b .. SFX.roster .. back, u) == 1 then
              -- an ordinal value already names the previous server; an id of an older build is looked up
              local n = not A.wl and (byOrdinal and before or liveServerOrdinal(back))
              redis.call('HSET', k, u, n and ('\n' .. n) or back)
            else
              gone[#gone + 1] = u
            end
          end
        end
      end
      if #gone > 0 then removed = removed + redis.call('HDEL', k, unpack(gone)) end
    end)
    uncount(w, removed)
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
