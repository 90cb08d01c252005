--[[
	GameIntegration SDK (Luau) - driver for the unreachable-service behaviour (test/luau/offline.test.ts)
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	GIS_BASE_URL points at a port nothing listens on. Prints the ban answers with the default fail mode and
	with banCheckFailMode = "closed", a door answer without a manifest (failMode closed), a door forced by a
	door_set_state command (no request), the heartbeat loop's network backoff, and a malformed key error.
]]

local here = string.match(debug.getinfo(1, "S").source, "^@(.*)/[^/]*$") or "."
local shim = dofile(here .. "/shim.lua")
local Client = shim.requireFolder(here .. "/../GameIntegration")

local base = assert(os.getenv("GIS_BASE_URL"))
local key = "svc_live_abc.secretsecret"

task.spawn(function()
	local problems = {}
	local open = Client.new({ baseUrl = base, key = key, externalServerId = "off-1", backoffBaseSeconds = 0.2, bootJitterSeconds = 0,
		onProblem = function(p)
			if p.kind == "network" then
				table.insert(problems, p)
			else
				print("OTHER", p.kind)
			end
		end,
	})
	local closed = Client.new({ baseUrl = base, key = key, externalServerId = "off-2", banCheckFailMode = "closed" })
	local a, b = open:checkBan("7"), closed:checkBan("7")
	print("BAN", tostring(a.banned), a.source)
	print("BAN", tostring(b.banned), b.source)
	local door = open:checkDoor("7", "vault")
	print("DOOR", tostring(door.allowed), door.reason, door.source)
	local before = shim.requests
	open.doors:handleCommand({ type = "door_set_state", payload = { doorKey = "vault", state = "unlocked" } })
	local forced = open:checkDoor("7", "vault")
	print("FORCED", tostring(forced.allowed), forced.reason, forced.source, shim.requests - before)
	open:track("spawn", "7")
	open:start()
	while #problems < 3 do
		task.wait(0.05)
	end
	for i = 1, 3 do
		local p = problems[i]
		print("PROBLEM", p.kind, string.format("%.3f", p.delaySeconds or -1))
	end
	print("QUEUED", open:queuedEvents())
	local ok, err = pcall(Client.new, { baseUrl = base, key = "nope" })
	print("BADKEY", tostring(ok), err)
	os.exit(0)
end)

shim.run()
