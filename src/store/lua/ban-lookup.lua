--[[
  Blocklist lookup for POST /api/v1/game/bans/check, in one round trip (src/bans/blocklist.ts).
  KEYS[1] blocklist meta hash, KEYS[2] blocklist hash, both under "{w:<workspaceId>}"; A.u externalId.
  Returns {0} when the blocklist is not built (e.g. after a Redis flush: the caller rebuilds it from
  Postgres), else {1, entry} where entry is "<ticket>|<JSON array of active bans>" or nil.
]]
if redis.call('HEXISTS', KEYS[1], 'built') == 0 then return {0} end
return {1, redis.call('HGET', KEYS[2], A.u)}
