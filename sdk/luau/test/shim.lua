--[[
	GameIntegration SDK (Luau) - test shim for Debian's lua5.2
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	The platform services the SDK touches, and nothing more: game (GetService, BindToClose, JobId, PlaceId),
	HttpService (RequestAsync through curl, JSONEncode/JSONDecode, GenerateGUID), Players (GetPlayers,
	GetPlayerByUserId, MaxPlayers, Player:Kick), MessagingService (SubscribeAsync polling a directory),
	task (spawn, wait: coroutines on a scheduler), DateTime (now, fromIsoDate, ToIsoDate), and require() of
	ModuleScript-shaped folders (`script`, `script.Parent`, children by name).
	Usage: local shim = dofile("sdk/luau/test/shim.lua"); local Client = shim.requireFolder(dir);
	task.spawn(main); shim.run().
]]

local here = string.match(debug.getinfo(1, "S").source, "^@(.*)/[^/]*$") or "."
local json = dofile(here .. "/json.lua")

local shim = { kicked = {}, requests = 0 }
io.stdout:setvbuf("line")

-- Clock: epoch ms from `date` once, then /proc/uptime (10 ms resolution) without spawning processes.
local function uptime()
	local f = assert(io.open("/proc/uptime", "r"))
	local s = f:read("*n")
	f:close()
	return s
end
local epochBase = tonumber(io.popen("date +%s%3N"):read("*l"))
local uptimeBase = uptime()
function shim.nowMs()
	return epochBase + math.floor((uptime() - uptimeBase) * 1000 + 0.5)
end

local function sleepSeconds(s)
	if s > 0 then
		os.execute(string.format("sleep %.3f", s))
	end
end

-- task: coroutines resumed by shim.run() when their wake time comes.
local sleeping = {}
local function park(co, ok, wakeAt)
	if not ok then
		io.stderr:write("task error: " .. tostring(wakeAt) .. "\n" .. debug.traceback(co) .. "\n")
		os.exit(3)
	end
	if coroutine.status(co) ~= "dead" then
		table.insert(sleeping, { co = co, wakeAt = wakeAt or shim.nowMs() })
	end
end
task = {}
function task.spawn(fn, ...)
	local co = coroutine.create(fn)
	park(co, coroutine.resume(co, ...))
	return co
end
function task.wait(seconds)
	local started = shim.nowMs()
	coroutine.yield(started + (seconds or 0) * 1000)
	return (shim.nowMs() - started) / 1000
end

-- Runs the scheduler until no thread is left (the driver ends the process with os.exit).
function shim.run()
	while #sleeping > 0 do
		local now = shim.nowMs()
		local nextAt = math.huge
		local ready = {}
		for i = #sleeping, 1, -1 do
			if sleeping[i].wakeAt <= now then
				table.insert(ready, table.remove(sleeping, i))
			else
				nextAt = math.min(nextAt, sleeping[i].wakeAt)
			end
		end
		for _, t in ipairs(ready) do
			park(t.co, coroutine.resume(t.co))
		end
		if #ready == 0 then
			sleepSeconds(math.min(0.05, (nextAt - now) / 1000))
		end
	end
end

-- DateTime: UTC only, as the SDK uses it.
local function daysFromCivil(y, m, d)
	y = (m <= 2) and (y - 1) or y
	local era = math.floor(y / 400)
	local yoe = y - era * 400
	local mp = (m + 9) % 12
	local doy = math.floor((153 * mp + 2) / 5) + d - 1
	local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
	return era * 146097 + doe - 719468
end
local function dateTime(ms)
	return {
		UnixTimestampMillis = ms,
		UnixTimestamp = math.floor(ms / 1000),
		ToIsoDate = function(self)
			return os.date("!%Y-%m-%dT%H:%M:%S", math.floor(self.UnixTimestampMillis / 1000))
				.. string.format(".%03dZ", self.UnixTimestampMillis % 1000)
		end,
	}
end
DateTime = {
	now = function()
		return dateTime(shim.nowMs())
	end,
	fromIsoDate = function(s)
		local y, mo, d, h, mi, sec, frac = string.match(s, "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.?(%d*)Z$")
		if not y then
			return nil
		end
		local ms = (((daysFromCivil(tonumber(y), tonumber(mo), tonumber(d)) * 24 + h) * 60 + mi) * 60 + sec) * 1000
		if frac ~= "" then
			ms = ms + math.floor(tonumber("0." .. frac) * 1000 + 0.5)
		end
		return dateTime(ms)
	end,
}

-- HttpService
local function shellQuote(s)
	return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end
local function readAll(path)
	local f = io.open(path, "rb")
	if not f then
		return ""
	end
	local s = f:read("*a")
	f:close()
	return s
end
local HttpService = {}
math.randomseed(shim.nowMs() % 2147483647)
function HttpService:GenerateGUID(wrap)
	local g = string.gsub("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", "[xy]", function(c)
		local v = (c == "x") and math.random(0, 15) or math.random(8, 11)
		return string.format("%X", v)
	end)
	return wrap == false and g or ("{" .. g .. "}")
end
function HttpService:JSONEncode(v)
	return json.encode(v)
end
function HttpService:JSONDecode(s)
	return json.decode(s)
end
-- RequestAsync through curl; raises like the platform when no response arrives.
function HttpService:RequestAsync(req)
	shim.requests = shim.requests + 1
	local bodyFile, headFile, outFile = os.tmpname(), os.tmpname(), os.tmpname()
	local args = { "curl -sS --max-time 15 -X", req.Method or "GET", "-H 'Expect:'", "-D", headFile, "-o", outFile }
	for k, v in pairs(req.Headers or {}) do
		table.insert(args, "-H " .. shellQuote(k .. ": " .. v))
	end
	if req.Body then
		local f = assert(io.open(bodyFile, "wb"))
		f:write(req.Body)
		f:close()
		table.insert(args, "--data-binary @" .. bodyFile)
	end
	table.insert(args, "-w '%{http_code}' " .. shellQuote(req.Url))
	local p = io.popen(table.concat(args, " ") .. " 2>/dev/null")
	local code = tonumber(p:read("*a"))
	p:close()
	local headers, body = {}, readAll(outFile)
	for line in string.gmatch(readAll(headFile), "[^\r\n]+") do
		if string.match(line, "^HTTP/") then
			headers = {}
		else
			local k, v = string.match(line, "^([^:]+):%s*(.*)$")
			if k then
				headers[string.lower(k)] = v
			end
		end
	end
	os.remove(bodyFile)
	os.remove(headFile)
	os.remove(outFile)
	if not code or code == 0 then
		error("HttpError: ConnectFail", 2)
	end
	return { Success = code >= 200 and code < 300, StatusCode = code, StatusMessage = "", Headers = headers, Body = body }
end

-- Players
local players = {}
local Players = { MaxPlayers = 20 }
function Players:GetPlayers()
	local copy = {}
	for i, p in ipairs(players) do
		copy[i] = p
	end
	return copy
end
function Players:GetPlayerByUserId(id)
	for _, p in ipairs(players) do
		if p.UserId == id then
			return p
		end
	end
	return nil
end
-- shim.addPlayer(userId: number, name: string, teamName: string?) -> Player
function shim.addPlayer(userId, name, teamName)
	local player = { UserId = userId, Name = name, Team = teamName and { Name = teamName } or nil }
	function player:Kick(reason)
		for i, p in ipairs(players) do
			if p == self then
				table.remove(players, i)
			end
		end
		shim.kicked[self.UserId] = reason or ""
	end
	table.insert(players, player)
	return player
end

-- MessagingService: a publish is a file named after the topic in shim.messagingDir.
local MessagingService = {}
function MessagingService:SubscribeAsync(topic, callback)
	task.spawn(function()
		while true do
			local path = (shim.messagingDir or "/nonexistent") .. "/" .. topic
			local f = io.open(path, "r")
			if f then
				local data = f:read("*a")
				f:close()
				os.remove(path)
				callback({ Data = data, Sent = shim.nowMs() / 1000 })
			end
			task.wait(0.1)
		end
	end)
	return { Disconnect = function() end }
end

-- game
local closeCallbacks = {}
local services = { HttpService = HttpService, Players = Players, MessagingService = MessagingService }
game = { JobId = "", PlaceId = 0 }
function game:GetService(name)
	return assert(services[name], "service not shimmed: " .. tostring(name))
end
function game:BindToClose(fn)
	table.insert(closeCallbacks, fn)
end
-- shim.closeGame(): runs the BindToClose callbacks as the platform does at shutdown (yields).
function shim.closeGame()
	for _, fn in ipairs(closeCallbacks) do
		fn()
	end
end

-- require() of a ModuleScript-shaped folder: `script` is the module's instance, children by name.
local loaded = {}
local plainRequire = require
local folderInstance
local function fileInstance(path, parentDir)
	return setmetatable({ __module = path }, {
		__index = function(_, k)
			if k == "Parent" then
				return folderInstance(parentDir)
			end
			return nil
		end,
	})
end
folderInstance = function(dir)
	return setmetatable({ __module = dir .. "/init.lua" }, {
		__index = function(_, k)
			local f = io.open(dir .. "/" .. k .. ".lua", "r")
			if f then
				f:close()
				return fileInstance(dir .. "/" .. k .. ".lua", dir)
			end
			return nil
		end,
	})
end
function require(target)
	if type(target) ~= "table" or not target.__module then
		return plainRequire(target)
	end
	local path = target.__module
	if loaded[path] == nil then
		local env = setmetatable({ script = target }, { __index = _G })
		local chunk = assert(loadfile(path, "t", env))
		loaded[path] = chunk()
	end
	return loaded[path]
end
-- shim.folderChild(dir, name) -> the instance of the child module dir/name.lua (for require).
function shim.folderChild(dir, name)
	return folderInstance(dir)[name]
end
-- shim.requireFolder(dir) -> what dir/init.lua returns.
function shim.requireFolder(dir)
	return require(folderInstance(dir))
end

return shim
