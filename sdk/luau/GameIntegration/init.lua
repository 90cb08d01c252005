--[[
	GameIntegration SDK (Luau) - Client
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	One game server's connection to the game integration service (spec: game-integration-api.md). A
	ModuleScript for ServerScriptService; never require it from a client script (the key is a secret).
	Mirrors the reference client packages/client/src/game-client.ts:
	- Heartbeat (POST /api/v1/game/heartbeat): the first one at a random point of the boot window after
	  :start() (bootJitterSeconds, default half the initial interval: a game's servers restart together
	  after every update), then every config.heartbeatIntervalSeconds of the last 200 (not a local
	  setting). The first manifest fetch is spread over the same window. Body: the full roster from
	  Players, queued events, acks and failures. Events, acks and failures stay queued until a heartbeat
	  carrying them got its 200.
	- 409 re-signed once (Transport); 413 halves the event batch; 429, and 503 with Retry-After (the
	  service shedding load), wait Retry-After seconds plus up to 1 s of jitter (else backoff); other 5xx
	  and network errors: exponential backoff with jitter; 400/401/403/404 stop the loop (setup error,
	  reported through onSetupError) until :start() is called again.
	- Ban checks: at most maxConcurrentChecks (default 4) in flight per server; concurrent checks of one
	  user share one request; a 429/503 with Retry-After is waited out (jittered) within
	  banCheckMaxWaitSeconds (default 10) before the fail mode decides.
	- Commands: deduped by id, run by the handler registered for their type, acked after the handler
	  returned (a handler returning false, reason or raising an error is reported as a failure with that
	  reason); door_set_state / refresh_permissions are handled by the built-in door cache first.
	- :nudge() asks for one early heartbeat (spec: Events, Urgent nudge).
]]

local Transport = require(script.Transport)
local Backoff = require(script.Backoff)
local Doors = require(script.Doors)

local HttpService = game:GetService("HttpService")
local Players = game:GetService("Players")

local Client = {}
Client.__index = Client

Client.VERSION = "gis-luau/0.1.0"

local PATHS = { heartbeat = "/api/v1/game/heartbeat", bans = "/api/v1/game/bans/check" }
local MAX_EVENTS = 2000
local MAX_ACKS = 500
local MIN_RETENTION_SECONDS = 600

local SETUP_HINTS = {
	[400] = "fix the payload; the request is not retried unchanged",
	[401] = "check the key (missing, malformed, revoked) and the signature",
	[403] = "check the key scopes first, then Game Settings > Security > Allow HTTP Requests",
	[404] = "unknown game or server; the request is not retried",
}

-- Calls an optional callback without letting it break the client.
local function notify(fn, arg)
	if fn then
		pcall(fn, arg)
	end
end

--[[
	Client.new(options) -> client. options:
	  baseUrl: string            service origin, e.g. "https://gis.example.com" (required)
	  key: string                server key "svc_live_<prefix>.<secret>" (required; server-side only)
	  externalServerId: string?  default game.JobId, else a GUID made at boot
	  externalScopeId: string?   default tostring(game.PlaceId)
	  maxPlayers: number?        default Players.MaxPlayers
	  region: string?
	  sdkVersion: string?        default Client.VERSION
	  initialIntervalSeconds: number?  until the first 200 tells the real interval (default 20)
	  bootJitterSeconds: number?       first heartbeat and manifest spread over it (default half the
	                                   initial interval; 0 = at once)
	  maxConcurrentChecks: number?     ban checks in flight per server (default 4)
	  banCheckMaxWaitSeconds: number?  most waiting for Retry-After on a refused ban check (default 10)
	  requestNonce: boolean?           send ?nonce= signed with each request (default true)
	  maxEventsPerHeartbeat: number?   default 1000 (at most 2000)
	  maxQueuedEvents: number?         oldest dropped beyond it (default 100000)
	  backoffBaseSeconds, backoffMaxSeconds: number?  default 1 and 60
	  minNudgeGapSeconds: number?      least time between heartbeats caused by nudges (default 0.25)
	  ackEarly: boolean?               send acks with an early heartbeat (default true)
	  banCheckFailMode: "open"|"closed"?  default "open" (spec: fail open is the recommended default)
	  onHeartbeat(info), onProblem(problem), onSetupError(info): optional callbacks (tables with
	    status, code, message, delaySeconds where known)
	Errors: raises for a malformed key or a missing baseUrl.
]]
function Client.new(options)
	assert(type(options) == "table" and type(options.baseUrl) == "string", "Client.new needs { baseUrl, key }")
	local transport = Transport.new({ baseUrl = options.baseUrl, key = options.key, requestNonce = options.requestNonce })
	local serverId = options.externalServerId
	if not serverId then
		serverId = (game.JobId ~= nil and game.JobId ~= "") and game.JobId or HttpService:GenerateGUID(false)
	end
	local self = setmetatable({
		options = options,
		transport = transport,
		externalServerId = serverId,
		doors = Doors.new(transport, serverId),
		handlers = {},
		-- Queue as a table with explicit head/tail indices: popped slots become nil, and `#` is undefined
		-- for a table with holes.
		events = {},
		eventsHead = 1,
		eventsTail = 0,
		-- command id -> { state = "running"|"done"|"sent", ok, reason, forgetAtMs }
		commands = {},
		results = {},
		interval = options.initialIntervalSeconds or 20,
		batchLimit = math.min(MAX_EVENTS, options.maxEventsPerHeartbeat or 1000),
		failureStreak = 0,
		running = false,
		stopping = false,
		nudgePending = false,
		lastSendMs = 0,
		bootMs = Transport.nowMs(),
		generation = 0,
		checksInFlight = 0,
		-- externalId -> { done = boolean, result = table } of ban checks in flight
		banChecks = {},
	}, Client)
	self.bootJitterSeconds = options.bootJitterSeconds or self.interval / 2
	self.maxBatch = self.batchLimit
	return self
end

--[[
	client:onCommand(commandType: string, handler(command) -> (ok: boolean?, reason: string?)). The
	handler runs in its own thread and may yield; returning nothing or true acks the command, returning
	false (with a reason) or raising reports a failure. command = { id, type, payload, target =
	{ externalServerId, externalId }, issuedAt, expiresAt }. Register "*" for every unhandled type.
]]
function Client:onCommand(commandType, handler)
	self.handlers[commandType] = handler
end

--[[
	client:track(eventType: string, externalId: string?, payload: table?, eventId: string?) -> event.
	Fixes the eventId (a GUID unless given) and occurredAt now, when the event happens; both stay the same
	on every retry (spec: Events, rules 1-2). Errors: raises when eventType is empty.
]]
function Client:track(eventType, externalId, payload, eventId)
	assert(type(eventType) == "string" and eventType ~= "", "event type must be a non-empty string")
	local event = {
		eventId = eventId or HttpService:GenerateGUID(false),
		type = eventType,
		occurredAt = DateTime.now():ToIsoDate(),
		externalId = externalId,
		payload = payload,
	}
	self.eventsTail = self.eventsTail + 1
	self.events[self.eventsTail] = event
	local limit = self.options.maxQueuedEvents or 100000
	while self:queuedEvents() > limit do
		self.events[self.eventsHead] = nil
		self.eventsHead = self.eventsHead + 1
		notify(self.options.onProblem, { kind = "event_queue_overflow", message = "dropped the oldest event" })
	end
	return event
end

-- Number of events waiting for a 200.
function Client:queuedEvents()
	return self.eventsTail - self.eventsHead + 1
end

-- The full roster from Players (spec: players is the full roster, not a delta).
function Client:roster()
	local players = {}
	for _, player in ipairs(Players:GetPlayers()) do
		local entry = { externalId = tostring(player.UserId), username = player.Name }
		if player.Team then
			entry.team = player.Team.Name
		end
		table.insert(players, entry)
	end
	return players
end

-- The heartbeat body as JSON text (the exact bytes that are signed), plus what it carried.
function Client:buildHeartbeat()
	local batch = {}
	for i = self.eventsHead, math.min(self.eventsTail, self.eventsHead + self.batchLimit - 1) do
		table.insert(batch, self.events[i])
	end
	local acks, failures = {}, {}
	for id, r in pairs(self.results) do
		if #acks + #failures >= MAX_ACKS then
			break
		end
		if r.ok then
			table.insert(acks, id)
		else
			table.insert(failures, { id = id, reason = string.sub(r.reason or "failed", 1, 500) })
		end
	end
	local players = self:roster()
	local o = self.options
	local body = {
		externalServerId = self.externalServerId,
		externalScopeId = o.externalScopeId or (game.PlaceId and tostring(game.PlaceId)) or nil,
		playerCount = #players,
		maxPlayers = o.maxPlayers or Players.MaxPlayers,
		sdkVersion = o.sdkVersion or Client.VERSION,
		uptimeSeconds = math.floor((Transport.nowMs() - self.bootMs) / 1000),
		region = o.region,
		players = players,
		events = batch,
		acks = acks,
	}
	if #failures > 0 then
		body.failures = failures
	end
	return HttpService:JSONEncode(body), batch, acks, failures
end

-- A 200: drops what it carried, adopts the interval, dispatches commands.
function Client:accepted(res, batch, acks, failures)
	-- Pop only the confirmed events still at the head: a concurrent cycle (stop() during an in-flight
	-- heartbeat) may already have confirmed the same batch, and popping by count would lose unsent events.
	for _, event in ipairs(batch) do
		if self.events[self.eventsHead] ~= event then
			break
		end
		self.events[self.eventsHead] = nil
		self.eventsHead = self.eventsHead + 1
	end
	local forgetAt = Transport.nowMs() + math.max(MIN_RETENTION_SECONDS, 3 * self.interval) * 1000
	for _, id in ipairs(acks) do
		self.results[id] = nil
		self.commands[id] = { state = "sent", forgetAtMs = forgetAt }
	end
	for _, f in ipairs(failures) do
		self.results[f.id] = nil
		self.commands[f.id] = { state = "sent", forgetAtMs = forgetAt }
	end
	local now = Transport.nowMs()
	for id, c in pairs(self.commands) do
		if c.forgetAtMs and c.forgetAtMs < now then
			self.commands[id] = nil
		end
	end
	self.failureStreak = 0
	self.batchLimit = math.min(self.maxBatch, self.batchLimit * 2)
	local body = res.json or {}
	local config = type(body.config) == "table" and body.config or {}
	self.config = config
	local iv = config.heartbeatIntervalSeconds
	if type(iv) == "number" and iv > 0 then
		self.interval = math.min(3600, math.max(1, iv))
	end
	if type(config.doorsVersion) == "number" and config.doorsVersion ~= self.doors.version then
		task.spawn(function()
			self.doors:refreshManifest()
		end)
	end
	if type(body.commands) == "table" then
		for _, command in ipairs(body.commands) do
			self:dispatch(command)
		end
	end
	notify(self.options.onHeartbeat, {
		status = 200,
		events = #batch,
		acks = acks,
		failures = failures,
		commands = type(body.commands) == "table" and #body.commands or 0,
		retried409 = res.retried409 == true,
	})
	return self.interval
end

-- Runs one command once (dedupe by id) unless it already expired by server time.
function Client:dispatch(command)
	if type(command) ~= "table" or type(command.id) ~= "string" or type(command.type) ~= "string" then
		notify(self.options.onProblem, { kind = "bad_response", message = "command without id and type; ignored" })
		return
	end
	if self.stopping or self.commands[command.id] then
		return
	end
	local expires = Transport.parseTime(command.expiresAt)
	if expires and expires <= self.transport:serverNowMs() then
		-- Too late to act: no ack and no failure; the service marks it expired itself.
		self.commands[command.id] = { state = "sent", forgetAtMs = Transport.nowMs() + MIN_RETENTION_SECONDS * 1000 }
		return
	end
	command.payload = type(command.payload) == "table" and command.payload or {}
	self.commands[command.id] = { state = "running" }
	task.spawn(function()
		local okCall, ok, reason = pcall(function()
			local doorOk, doorReason = self.doors:handleCommand(command)
			if doorOk ~= nil then
				return doorOk, doorReason
			end
			local handler = self.handlers[command.type] or self.handlers["*"]
			if not handler then
				return false, "no command handler"
			end
			return handler(command)
		end)
		if not okCall then
			ok, reason = false, tostring(ok)
		elseif ok == nil then
			ok = true
		end
		self.commands[command.id] = { state = "done" }
		self.results[command.id] = { ok = ok ~= false, reason = reason }
		if self.options.ackEarly ~= false then
			self:nudge()
		end
	end)
end

-- Schedules a retry: Retry-After when given, else exponential backoff with jitter. Returns seconds.
function Client:retryLater(kind, status, message, delaySeconds)
	self.failureStreak = self.failureStreak + 1
	local o = self.options
	local delay = delaySeconds or Backoff.delay(self.failureStreak, o.backoffBaseSeconds, o.backoffMaxSeconds)
	notify(o.onProblem, { kind = kind, status = status, message = message, delaySeconds = delay })
	return delay
end

--[[
	One heartbeat (with the immediate re-sends a 413 calls for). Returns ("ok", seconds) | ("retry",
	seconds) | ("halt") for a setup error.
]]
function Client:cycle()
	while true do
		local body, batch, acks, failures = self:buildHeartbeat()
		self.nudgePending = false
		self.lastSendMs = Transport.nowMs()
		self.inFlight = true
		local res, err = self.transport:request("POST", PATHS.heartbeat, body)
		self.inFlight = false
		if not res then
			return "retry", self:retryLater("network", nil, err)
		end
		local status = res.status
		if status == 200 then
			return "ok", self:accepted(res, batch, acks, failures)
		elseif status == 413 and #batch > 1 then
			-- Spec: split events across two heartbeats; first half now, the rest next time.
			self.batchLimit = math.max(1, math.floor(#batch / 2))
			notify(self.options.onProblem, { kind = "envelope_too_large", status = 413, message = "halving the batch" })
		elseif status == 413 and #batch == 1 then
			-- One event alone over the limit can never be accepted; it would block the queue forever.
			self.events[self.eventsHead] = nil
			self.eventsHead = self.eventsHead + 1
			notify(self.options.onProblem, { kind = "event_rejected", status = 413, message = "event too large; dropped" })
		elseif status == 429 or (status == 503 and Backoff.retryAfter(Transport.header(res.headers, "Retry-After"))) then
			-- A refusal that says when to come back: Retry-After plus up to 1 s of jitter, so a fleet
			-- refused in the same second does not return in the same second.
			local after = Backoff.retryAfter(Transport.header(res.headers, "Retry-After"))
			if after then
				after = after + math.random()
			end
			return "retry", self:retryLater(status == 429 and "rate_limited" or "server_error", status, res.errorCode, after)
		elseif status == 409 or status == 413 or status >= 500 or status == 408 or status < 400 then
			return "retry", self:retryLater("server_error", status, res.errorCode)
		else
			local info = {
				status = status,
				code = res.errorCode or "unknown",
				requestId = res.requestId,
				hint = SETUP_HINTS[status] or "client error; not retried unchanged",
			}
			self.setupError = info
			self.running = false
			notify(self.options.onSetupError, info)
			return "halt"
		end
	end
end

-- Waits `seconds`; a nudge cuts a regular wait short (after the minimum gap); :stop() ends any wait.
function Client:wait(seconds, nudgeable, generation)
	local untilMs = Transport.nowMs() + seconds * 1000
	local gapMs = (self.options.minNudgeGapSeconds or 0.25) * 1000
	while self.running and self.generation == generation do
		local now = Transport.nowMs()
		if now >= untilMs then
			return
		end
		if nudgeable and self.nudgePending and now >= self.lastSendMs + gapMs then
			return
		end
		task.wait(math.min(0.1, (untilMs - now) / 1000))
	end
end

--[[
	client:start(): starts the heartbeat loop in its own thread and fetches the door manifest; the first
	heartbeat and the manifest go out at random points of the boot window (bootJitterSeconds; at once on a
	restart after a setup error). Binds :stop() to game:BindToClose. No-op while running.
]]
function Client:start()
	if self.running then
		return
	end
	self.running = true
	self.stopping = false
	self.setupError = nil
	self.generation = self.generation + 1
	local generation = self.generation
	if not self.boundToClose then
		self.boundToClose = true
		game:BindToClose(function()
			self:stop()
		end)
	end
	local window = self.booted and 0 or self.bootJitterSeconds
	self.booted = true
	task.spawn(function()
		self.doors:boot(window)
	end)
	task.spawn(function()
		if window > 0 then
			self:wait(math.random() * window, true, generation)
		end
		while self.running and self.generation == generation do
			local kind, delay = self:cycle()
			if kind == "halt" or not self.running or self.generation ~= generation then
				return
			end
			self:wait(delay, kind == "ok", generation)
		end
	end)
end

--[[
	client:stop(timeoutSeconds: number?): stops the loop, waits for an in-flight heartbeat and running
	command handlers, then sends
	final heartbeats until every queued event, ack and failure got a 200, a setup error occurs, or
	`timeoutSeconds` (default 10) passed. Commands in the final responses are not executed. Yields.
]]
function Client:stop(timeoutSeconds)
	if self.stopping then
		return
	end
	local deadline = Transport.nowMs() + (timeoutSeconds or 10) * 1000
	self.stopping = true
	self.running = false
	self.generation = self.generation + 1
	while Transport.nowMs() < deadline do
		local busy = self.inFlight
		for _, c in pairs(self.commands) do
			if c.state == "running" then
				busy = true
			end
		end
		if not busy then
			break
		end
		task.wait(0.05)
	end
	while true do
		local kind, delay = self:cycle()
		if kind == "halt" then
			return
		end
		if kind == "ok" and self:queuedEvents() == 0 and next(self.results) == nil then
			return
		end
		local left = (deadline - Transport.nowMs()) / 1000
		if left <= 0 then
			return
		end
		if kind == "retry" then
			task.wait(math.min(delay, left))
		end
	end
end

--[[
	client:nudge(): one early heartbeat for any number of nudges before the next send (spec: Events,
	Urgent nudge). Wire it to the game's topic: MessagingService:SubscribeAsync("gis-nudge", function()
	client:nudge() end). A nudge during a backoff does not shorten it.
]]
function Client:nudge()
	self.nudgePending = true
end

-- The heartbeat interval in force, seconds (the last one a 200 returned, else the initial one).
function Client:intervalSeconds()
	return self.interval
end

-- Last measured clock skew, ms: server time minus local time (spec: Authentication rule 6).
function Client:clockSkewMs()
	return self.transport.skewMs
end

--[[
	client:checkBan(player) -> { banned: boolean, source: "service"|"fail_open"|"fail_closed", scope?,
	expiresAt?, reason? } (spec: POST bans/check, connect-time). Only `banned` is relied on. Without an
	answer (network error, 5xx, 429, other non-200) options.banCheckFailMode decides: "open" (default)
	admits, "closed" refuses. `player` is a Player or an externalId string. Yields.
]]
function Client:checkBan(player)
	local externalId = type(player) == "string" and player or tostring(player.UserId)
	-- A check of this user already in flight: share its answer.
	local shared = self.banChecks[externalId]
	if shared then
		while not shared.done do
			task.wait(0.05)
		end
		return shared.result
	end
	local entry = { done = false }
	self.banChecks[externalId] = entry
	while self.checksInFlight >= (self.options.maxConcurrentChecks or 4) do
		task.wait(0.05)
	end
	self.checksInFlight = self.checksInFlight + 1
	local ok, result = pcall(function()
		return self:askBan(externalId)
	end)
	self.checksInFlight = self.checksInFlight - 1
	self.banChecks[externalId] = nil
	entry.result = ok and result or { banned = self.options.banCheckFailMode == "closed", source = "fail_" .. (self.options.banCheckFailMode == "closed" and "closed" or "open") }
	entry.done = true
	return entry.result
end

-- One ban check with Retry-After waited out; the fail mode decides without an answer.
function Client:askBan(externalId)
	local body = HttpService:JSONEncode({ externalId = externalId, externalServerId = self.externalServerId })
	local res, err
	local waited = 0
	local maxWait = self.options.banCheckMaxWaitSeconds or 10
	while true do
		res, err = self.transport:request("POST", PATHS.bans, body)
		if not res or (res.status ~= 429 and res.status ~= 503) then
			break
		end
		local after = Backoff.retryAfter(Transport.header(res.headers, "Retry-After"))
		if not after or waited + after + 1 > maxWait then
			break
		end
		local delay = after + math.random()
		waited = waited + delay
		task.wait(delay)
	end
	if res and res.status == 200 and type(res.json) == "table" and type(res.json.banned) == "boolean" then
		local j = res.json
		return { banned = j.banned, source = "service", scope = j.scope, expiresAt = j.expiresAt, reason = j.reason }
	end
	local failMode = self.options.banCheckFailMode == "closed" and "closed" or "open"
	notify(self.options.onProblem, {
		kind = "ban_check_failed",
		status = res and res.status,
		message = "ban check for " .. externalId .. " failed " .. failMode .. ": " .. tostring(err or (res and res.errorCode)),
	})
	return { banned = failMode == "closed", source = "fail_" .. failMode }
end

--[[
	client:checkDoor(player, doorKey: string) -> { allowed: boolean, reason: string, source } (spec: Door;
	failMode when the service is unreachable). `player` is a Player or an externalId string. Yields.
]]
function Client:checkDoor(player, doorKey)
	local externalId = type(player) == "string" and player or tostring(player.UserId)
	return self.doors:check(externalId, doorKey)
end

--[[
	client:checkDoors(player, doorKeys: {string}) -> { [doorKey] = answer }: one bulk request (POST
	doors/bulk, cached for the TTL) when anything is uncached, then answers from forced states and cache.
]]
function Client:checkDoors(player, doorKeys)
	local externalId = type(player) == "string" and player or tostring(player.UserId)
	self.doors:onJoin(externalId)
	local answers = {}
	for _, key in ipairs(doorKeys) do
		answers[key] = self.doors:check(externalId, key)
	end
	return answers
end

return Client
