--[[
	GameIntegration SDK (Luau) - test shim: JSON
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	What HttpService:JSONEncode / JSONDecode do on the platform, for lua5.2: a table with keys 1..n (or an
	empty table) is an array, any other table an object; JSON null decodes to nil.
]]

local json = {}

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function encodeString(s)
	return '"' .. string.gsub(s, '[%c"\\]', function(c)
		return escapes[c] or string.format("\\u%04x", string.byte(c))
	end) .. '"'
end

local function isArray(t)
	local n = 0
	for _ in pairs(t) do
		n = n + 1
	end
	return n == #t
end

-- json.encode(value) -> JSON text. Errors: raises for functions and other unencodable values.
function json.encode(v)
	local kind = type(v)
	if kind == "nil" then
		return "null"
	elseif kind == "boolean" then
		return tostring(v)
	elseif kind == "number" then
		if v == math.floor(v) and math.abs(v) < 2 ^ 53 then
			return string.format("%d", v)
		end
		return string.format("%.17g", v)
	elseif kind == "string" then
		return encodeString(v)
	elseif kind == "table" then
		local parts = {}
		if isArray(v) then
			for i = 1, #v do
				parts[i] = json.encode(v[i])
			end
			return "[" .. table.concat(parts, ",") .. "]"
		end
		for k, val in pairs(v) do
			table.insert(parts, encodeString(tostring(k)) .. ":" .. json.encode(val))
		end
		return "{" .. table.concat(parts, ",") .. "}"
	end
	error("cannot encode a " .. kind)
end

local function utf8char(cp)
	if cp < 0x80 then
		return string.char(cp)
	elseif cp < 0x800 then
		return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64)
	end
	return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

-- json.decode(text) -> value. Errors: raises on malformed JSON.
function json.decode(s)
	local pos = 1
	local value
	local function ws()
		pos = string.find(s, "[^ \t\r\n]", pos) or #s + 1
	end
	local function str()
		local out = {}
		pos = pos + 1
		while true do
			local c = string.sub(s, pos, pos)
			if c == "" then
				error("unterminated string")
			elseif c == '"' then
				pos = pos + 1
				return table.concat(out)
			elseif c == "\\" then
				local e = string.sub(s, pos + 1, pos + 1)
				if e == "u" then
					table.insert(out, utf8char(tonumber(string.sub(s, pos + 2, pos + 5), 16)))
					pos = pos + 6
				else
					local map = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
					table.insert(out, map[e] or e)
					pos = pos + 2
				end
			else
				local j = string.find(s, '["\\]', pos) or #s + 1
				table.insert(out, string.sub(s, pos, j - 1))
				pos = j
			end
		end
	end
	value = function()
		ws()
		local c = string.sub(s, pos, pos)
		if c == "{" then
			local obj = {}
			pos = pos + 1
			ws()
			if string.sub(s, pos, pos) == "}" then
				pos = pos + 1
				return obj
			end
			while true do
				ws()
				local k = str()
				ws()
				pos = pos + 1 -- ':'
				obj[k] = value()
				ws()
				local d = string.sub(s, pos, pos)
				pos = pos + 1
				if d == "}" then
					return obj
				end
			end
		elseif c == "[" then
			local arr = {}
			pos = pos + 1
			ws()
			if string.sub(s, pos, pos) == "]" then
				pos = pos + 1
				return arr
			end
			local n = 0
			while true do
				n = n + 1
				arr[n] = value()
				ws()
				local d = string.sub(s, pos, pos)
				pos = pos + 1
				if d == "]" then
					return arr
				end
			end
		elseif c == '"' then
			return str()
		elseif string.sub(s, pos, pos + 3) == "true" then
			pos = pos + 4
			return true
		elseif string.sub(s, pos, pos + 4) == "false" then
			pos = pos + 5
			return false
		elseif string.sub(s, pos, pos + 3) == "null" then
			pos = pos + 4
			return nil
		end
		local num = string.match(s, "^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
		if not num or num == "" then
			error("bad JSON at " .. pos)
		end
		pos = pos + #num
		return tonumber(num)
	end
	return value()
end

return json
