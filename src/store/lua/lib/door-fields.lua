-- The door decision hash's field of user u: the id itself, with one more '#' when it starts with one, so
-- that no user's field is ever a context field ("#<n>", or "#<digits>:<key>" as builds before 2026-11-29
-- named them; src/doors/decision-cache.ts).
local function doorUserField(u)
  if string.byte(u, 1) == 35 then return '#' .. u end
  return u
end

-- h of a field that is a user id or a context field (door decisions, src/doors/decision-cache.ts); nil for the state field.
local function userFieldHash(f)
  if f == '' then return nil end
  return tonumber(string.sub(redis.sha1hex(f), 1, 8), 16)
end
