--[[
  Where one user is in one game (a ban kicks them there: src/bans/ban-service.ts).
  KEYS: 1 user locations, 2 user locations of the layout before 2026-11-29 (lib/user-locations.lua).
  A: u externalId, wl (user locations, lib/user-locations.lua).
  Returns the externalServerId whose roster holds the user, or "" when none does.
]]
return locateUsers(userLocations(1, 2), {A.u})[1] or ''
