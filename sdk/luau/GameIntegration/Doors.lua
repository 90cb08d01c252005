--[[
	GameIntegration SDK (Luau) - Doors
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	Door decisions (spec: Door, failMode; "Intended client flow: fetch manifest on boot; bulk-check each
	user on join; cache for the TTL; make no further requests during normal play except single checks for
	uncached doors"). Mirrors packages/client/src/door-access.ts:
	- GET doors/manifest -> { version, doors = [{ key, failMode, forcedState, ... }] }, on start and after
	  refresh_permissions; a forced state (manifest or door_set_state) is applied locally: locked denies,
	  unlocked allows, auto resumes decisions.
	- POST doors/bulk { externalId, externalServerId } -> { decisions = [{ doorKey, decision, reason,
	  ttlSeconds }] }; POST doors/check { doorKey, externalId, externalServerId } -> one decision.
	  Decisions are cached per user for ttlSeconds (0 = not cached).
	- No answer (network error, 5xx, 429, 401/403): the door's failMode decides (closed when the door is not
	  in the manifest). An unknown door (404) is denied.
	- Boot herd (issue #15): :boot(windowSeconds) fetches the first manifest at a random point of the boot
	  window; at most `maxConcurrent` (default 2) door requests of a server are in flight, the rest wait
	  their turn; a manifest or bulk request refused with Retry-After (429/503) is retried after it plus up
	  to 1 s of jitter, within `maxRetryWaitSeconds` (default 10) in total; a single check is not retried
	  (the player is at the door now: failMode answers). (The TypeScript client also defers the bulk checks
	  of players joining inside the boot window; here :checkDoors asks for the answers at once, so the
	  bulk goes out at once.)
]]

local Transport = require(script.Parent.Transport)
local Backoff = require(script.Parent.Backoff)

local HttpService = game:GetService("HttpService")

local PATHS = {
	check = "/api/v1/game/doors/check",
	bulk = "/api/v1/game/doors/bulk",
	manifest = "/api/v1/game/doors/manifest",
}

local Doors = {}
Doors.__index = Doors

--[[
	Doors.new(transport, externalServerId: string, opts: { maxConcurrent: number?, maxRetryWaitSeconds:
	number? }?) -> door cache of one server.
]]
function Doors.new(transport, externalServerId, opts)
	opts = opts or {}
	return setmetatable({
		transport = transport,
		externalServerId = externalServerId,
		doors = {},
		version = nil,
		-- externalId -> doorKey -> { allowed, reason, expiresAtMs }
		cache = {},
		maxConcurrent = opts.maxConcurrent or 2,
		maxRetryWaitSeconds = opts.maxRetryWaitSeconds or 10,
		inFlight = 0,
	}, Doors)
end

--[[
	One request inside the per-server limit (each attempt yields while `maxConcurrent` are in flight; a
	Retry-After wait holds no slot, so a player's single check never queues behind a waiting bulk). With
	`retry`, a 429/503 with Retry-After is waited out (plus up to 1 s of jitter) within
	maxRetryWaitSeconds in total. Returns the transport's response, or nil and an error message.
]]
function Doors:send(method, path, body, retry)
	local waited = 0
	local res, err
	while true do
		while self.inFlight >= self.maxConcurrent do
			task.wait(0.05)
		end
		self.inFlight = self.inFlight + 1
		res, err = self.transport:request(method, path, body)
		self.inFlight = self.inFlight - 1
		if not retry or not res or (res.status ~= 429 and res.status ~= 503) then
			return res, err
		end
		local after = Backoff.retryAfter(Transport.header(res.headers, "Retry-After"))
		if not after then
			return res, err
		end
		local delay = after + math.random()
		if waited + delay > self.maxRetryWaitSeconds then
			return res, err
		end
		waited = waited + delay
		task.wait(delay)
	end
end

-- The server booted: fetches the first manifest at a random point of the boot window (seconds; 0 = now).
function Doors:boot(windowSeconds)
	if windowSeconds and windowSeconds > 0 then
		task.wait(math.random() * windowSeconds)
	end
	return self:refreshManifest()
end

-- Fetches the manifest; returns true on success (the previous manifest stays in force otherwise).
function Doors:refreshManifest()
	local res = self:send("GET", PATHS.manifest, "", true)
	local body = res and res.status == 200 and res.json
	if not body or type(body.doors) ~= "table" then
		return false
	end
	local doors = {}
	for _, d in ipairs(body.doors) do
		if type(d) == "table" and type(d.key) == "string" then
			doors[d.key] = d
		end
	end
	self.doors = doors
	if body.version ~= self.version then
		self.cache = {}
	end
	self.version = body.version
	return true
end

-- Caches one wire decision for its TTL; returns { allowed, reason } or nil when malformed.
function Doors:remember(externalId, d)
	if type(d) ~= "table" or type(d.doorKey) ~= "string" or (d.decision ~= "allow" and d.decision ~= "deny") then
		return nil
	end
	local answer = { allowed = d.decision == "allow", reason = type(d.reason) == "string" and d.reason or "" }
	local ttl = type(d.ttlSeconds) == "number" and d.ttlSeconds or 0
	if ttl > 0 then
		self.cache[externalId] = self.cache[externalId] or {}
		self.cache[externalId][d.doorKey] =
			{ allowed = answer.allowed, reason = answer.reason, expiresAtMs = Transport.nowMs() + ttl * 1000 }
	end
	return answer
end

-- Bulk-checks a user (on join) and caches every decision; returns true when the service answered.
function Doors:onJoin(externalId)
	local body = HttpService:JSONEncode({ externalId = externalId, externalServerId = self.externalServerId })
	local res = self:send("POST", PATHS.bulk, body, true)
	if not res or res.status ~= 200 or type(res.json) ~= "table" or type(res.json.decisions) ~= "table" then
		return false
	end
	for _, d in ipairs(res.json.decisions) do
		self:remember(externalId, d)
	end
	return true
end

-- Forgets a user's cached decisions (on leave).
function Doors:onLeave(externalId)
	self.cache[externalId] = nil
end

--[[
	doors:check(externalId: string, doorKey: string) -> { allowed: boolean, reason: string, source:
	"forced"|"cache"|"service"|"fail_mode" }. Forced state first, then the cache, then POST doors/check.
]]
function Doors:check(externalId, doorKey)
	local door = self.doors[doorKey]
	if door and (door.forcedState == "locked" or door.forcedState == "unlocked") then
		return { allowed = door.forcedState == "unlocked", reason = "forced_" .. door.forcedState, source = "forced" }
	end
	local cached = self.cache[externalId] and self.cache[externalId][doorKey]
	if cached and cached.expiresAtMs > Transport.nowMs() then
		return { allowed = cached.allowed, reason = cached.reason, source = "cache" }
	end
	local body = HttpService:JSONEncode({
		doorKey = doorKey,
		externalId = externalId,
		externalServerId = self.externalServerId,
	})
	local res = self:send("POST", PATHS.check, body, false)
	if res and res.status == 200 then
		local answer = self:remember(externalId, res.json)
		if answer then
			return { allowed = answer.allowed, reason = answer.reason, source = "service" }
		end
	end
	if res and res.status == 404 then
		return { allowed = false, reason = "unknown_door", source = "service" }
	end
	local failMode = (door and door.failMode == "open") and "open" or "closed"
	return { allowed = failMode == "open", reason = "fail_" .. failMode, source = "fail_mode" }
end

--[[
	doors:handleCommand(command) -> true | false, reason | nil (not a door command). door_set_state
	{ doorKey, state = locked|unlocked|auto } applies the forced state; refresh_permissions refetches.
]]
function Doors:handleCommand(command)
	if command.type == "refresh_permissions" then
		if self:refreshManifest() then
			return true
		end
		return false, "manifest could not be fetched"
	end
	if command.type ~= "door_set_state" then
		return nil
	end
	local p = command.payload or {}
	if type(p.doorKey) ~= "string" or (p.state ~= "locked" and p.state ~= "unlocked" and p.state ~= "auto") then
		return false, "door_set_state needs {doorKey, state: locked|unlocked|auto}"
	end
	local door = self.doors[p.doorKey] or { key = p.doorKey, failMode = "closed" }
	door.forcedState = p.state
	self.doors[p.doorKey] = door
	for _, perUser in pairs(self.cache) do
		perUser[p.doorKey] = nil
	end
	return true
end

return Doors
