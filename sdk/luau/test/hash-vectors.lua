--[[
	GameIntegration SDK (Luau) - test driver: SHA-256 / HMAC vectors under lua5.2
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	Usage: lua5.2 hash-vectors.lua <input>. Each input line is "<key hex> <message hex> <split>" ("-" for
	an empty hex field); prints "<sha256(message) hex> <hmac(key, message[1..split], message[split+1..]) hex>"
	per line, so the split-update path (timestamp, then body) is exercised too.
]]

local here = string.match(debug.getinfo(1, "S").source, "^@(.*)/[^/]*$") or "."
local shim = dofile(here .. "/shim.lua")
local Sha256 = require(shim.folderChild(here .. "/../GameIntegration", "Sha256"))

local function unhex(h)
	if h == "-" then
		return ""
	end
	return (string.gsub(h, "%x%x", function(pair)
		return string.char(tonumber(pair, 16))
	end))
end

for line in io.lines(arg[1]) do
	local keyHex, msgHex, split = string.match(line, "^(%S+) (%S+) (%d+)$")
	local key, msg = unhex(keyHex), unhex(msgHex)
	local n = tonumber(split)
	io.write(Sha256.toHex(Sha256.sha256(msg)), " ", Sha256.hmacHex(key, string.sub(msg, 1, n), string.sub(msg, n + 1)), "\n")
end
