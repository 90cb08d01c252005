--[[
	GameIntegration SDK (Luau) - end-to-end driver under lua5.2 (test/luau/e2e.test.ts)
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	A game server as a developer would write it: two players, tracked events, a kick handler, nudges from
	the "gis-nudge" topic, then ban and door checks and a shutdown through game:BindToClose. Environment:
	GIS_BASE_URL, GIS_KEY, GIS_CONTROL_DIR (where the test "publishes" nudges). Prints one line per step
	(READY, TRACKED <id>, HEARTBEAT ..., PROBLEM ..., KICKED ..., BAN ..., DOOR ..., DONE ...) for the test.
]]

local here = string.match(debug.getinfo(1, "S").source, "^@(.*)/[^/]*$") or "."
local shim = dofile(here .. "/shim.lua")
shim.messagingDir = os.getenv("GIS_CONTROL_DIR")
local Client = shim.requireFolder(here .. "/../GameIntegration")

local Players = game:GetService("Players")
local MessagingService = game:GetService("MessagingService")

local function say(...)
	local parts = {}
	for i = 1, select("#", ...) do
		parts[i] = tostring((select(i, ...)))
	end
	print(table.concat(parts, " "))
end

-- Waits (yielding) until cond() is true; exits the process after `seconds`.
local function waitFor(what, cond, seconds)
	local deadline = shim.nowMs() + (seconds or 60) * 1000
	while not cond() do
		if shim.nowMs() > deadline then
			say("TIMEOUT", what)
			os.exit(4)
		end
		task.wait(0.05)
	end
end

shim.addPlayer(101, "Alice", "Red")
shim.addPlayer(102, "Bob")

local heartbeats, acksSent, failuresSent = 0, 0, 0
local client = Client.new({
	baseUrl = assert(os.getenv("GIS_BASE_URL")),
	key = assert(os.getenv("GIS_KEY")),
	externalServerId = "lua-srv",
	externalScopeId = "place-1",
	maxPlayers = 10,
	region = "test",
	backoffBaseSeconds = 1,
	backoffMaxSeconds = 2,
	minNudgeGapSeconds = 0,
	bootJitterSeconds = 1,
	onHeartbeat = function(info)
		heartbeats = heartbeats + 1
		acksSent = acksSent + #info.acks
		failuresSent = failuresSent + #info.failures
		say("HEARTBEAT", heartbeats, "events=" .. info.events, "acks=" .. #info.acks, "failures=" .. #info.failures, "commands=" .. info.commands)
	end,
	onProblem = function(p)
		say("PROBLEM", p.kind, p.status, string.format("%.3f", p.delaySeconds or 0))
	end,
	onSetupError = function(e)
		say("SETUP_ERROR", e.status, e.code)
		os.exit(2)
	end,
})

client:onCommand("kick", function(command)
	local player = Players:GetPlayerByUserId(tonumber(command.target.externalId))
	if not player then
		return false, "player not on this server"
	end
	player:Kick(command.payload.reason)
	say("KICKED", command.target.externalId, command.payload.reason)
end)

MessagingService:SubscribeAsync("gis-nudge", function()
	say("NUDGED")
	client:nudge()
end)

local function track(eventType, externalId, payload)
	local event = client:track(eventType, externalId, payload)
	say("TRACKED", event.eventId)
end

task.spawn(function()
	track("join", "101", { n = 1 })
	track("join", "102", { n = 2 })
	track("spawn", "101", { n = 3 })
	client:start()
	waitFor("first heartbeat", function()
		return heartbeats >= 1
	end)
	-- Queued before the test injects 409 / 429 / 503 in front of the next heartbeat.
	track("death", "102", { n = 4 })
	track("custom_score", "101", { points = 5 })
	say("READY", client:intervalSeconds())
	waitFor("heartbeat through the faults", function()
		return heartbeats >= 2
	end)
	say("RECOVERED", client:queuedEvents())
	-- The kick is acked; the freeze (no handler registered) is reported as a failure.
	waitFor("kick acked and freeze failed", function()
		return acksSent >= 1 and failuresSent >= 1
	end)

	local banned, allowed = client:checkBan("666"), client:checkBan(Players:GetPlayerByUserId(102))
	say("BAN", "666", tostring(banned.banned), banned.source, tostring(banned.reason))
	say("BAN", "102", tostring(allowed.banned), allowed.source)
	local door = client:checkDoor(Players:GetPlayerByUserId(102), "lobby")
	say("DOOR", "102", "lobby", tostring(door.allowed), door.reason, door.source)
	local doors = client:checkDoors("102", { "lobby", "vault", "nope" })
	for _, key in ipairs({ "lobby", "vault", "nope" }) do
		say("DOOR", "102", key, tostring(doors[key].allowed), doors[key].reason, doors[key].source)
	end

	track("leave", "102", { n = 6 })
	shim.closeGame()
	say("DONE", "queued=" .. client:queuedEvents(), "requests=" .. shim.requests)
	os.exit(0)
end)

shim.run()
