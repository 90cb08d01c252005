--[[
	GameIntegration SDK (Luau) - HMAC-SHA256 throughput under lua5.2
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	Usage: lua5.2 sdk/luau/bench/hmac.lua (or npm run bench:luau-hmac). Signs a 4 KB and a 512 KiB body the
	way the SDK does (timestamp, then body) and prints the median CPU time per signature (os.clock) and
	the throughput. As a same-run baseline it also times a plain Lua loop of string.byte over the same
	bytes, so figures from a loaded machine can be compared as ratios.
]]

local here = string.match(debug.getinfo(1, "S").source, "^@(.*)/[^/]*$") or "."
local shim = dofile(here .. "/../test/shim.lua")
local Sha256 = require(shim.folderChild(here .. "/../GameIntegration", "Sha256"))

local function median(xs)
	table.sort(xs)
	return xs[math.floor((#xs + 1) / 2)]
end

local function time(runs, fn)
	local samples = {}
	for i = 1, runs do
		local t = os.clock()
		fn()
		samples[i] = os.clock() - t
	end
	return median(samples)
end

local secret = string.rep("s", 43)
for _, case in ipairs({ { name = "4 KB", size = 4096, runs = 51 }, { name = "512 KiB", size = 512 * 1024, runs = 5 } }) do
	local body = string.rep('{"eventId":"0123456789abcdef","type":"spawn"},', math.ceil(case.size / 46))
	body = string.sub(body, 1, case.size)
	local sign = time(case.runs, function()
		Sha256.hmacHex(secret, "1764048000", body)
	end)
	local scan = time(case.runs, function()
		local sum = 0
		for i = 1, #body, 4 do
			local a, b, c, d = string.byte(body, i, i + 3)
			sum = sum + a + (b or 0) + (c or 0) + (d or 0)
		end
	end)
	print(string.format("%-8s hmac %8.2f ms  %6.2f MB/s   byte-scan baseline %7.2f ms   ratio %.1fx",
		case.name, sign * 1000, case.size / sign / 1e6, scan * 1000, sign / scan))
end
