--[[
	GameIntegration SDK (Luau) - Transport
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	Signs and sends one request through HttpService:RequestAsync (spec: Authentication). Headers:
	Authorization "Bearer <key>", X-Service-Timestamp (integer seconds), X-Service-Signature (lowercase hex
	HMAC-SHA256 keyed with the key secret over the timestamp string followed by the body bytes exactly as
	sent), Content-Type application/json. No Compress option: HttpService would gzip the body after this
	module signed it, while the service checks the signature over the bytes as sent (compressed), so a
	compressed request would get 401. Mirrors packages/client/src/http-transport.ts:
	- Request nonce (default on; `requestNonce = false` turns it off): every attempt goes to
	  `<path>?nonce=<32 hex digits of a fresh GUID>` and is signed over timestamp + body + "?" + query, so
	  no two servers of a game (which share one key) ever sign the same bytes, not even two bodiless
	  GET doors/manifest in one second; a byte-identical resend still meets the replay cache.
	- 409 (window or replay): re-signed with a fresh timestamp (the next whole second) and retried once.
	- Without the nonce, the same bytes are never signed twice in one second (the replay cache would
	  refuse the second).
	- Clock skew = serverTime - local time at the middle of the request; applied to timestamps only when
	  larger than `skewToleranceSeconds` (default 30), well inside the +/-300 s window.
	Every other status goes back to the caller, which decides (spec: Errors).
]]

local Sha256 = require(script.Parent.Sha256)

local HttpService = game:GetService("HttpService")

local KEY_PREFIX = "svc_live_"

local Transport = {}
Transport.__index = Transport

-- Local wall clock, milliseconds since the Unix epoch.
local function nowMs()
	return DateTime.now().UnixTimestampMillis
end
Transport.nowMs = nowMs

--[[
	Transport.new({ baseUrl: string, key: string, skewToleranceSeconds: number?, requestNonce: boolean? })
	-> transport. requestNonce defaults to true (see the header).
	Errors: raises "API key must look like svc_live_<prefix>.<secret>" for a malformed key.
]]
function Transport.new(opts)
	local key = opts.key
	local dot = type(key) == "string" and string.find(key, ".", 1, true)
	if not dot or string.sub(key, 1, #KEY_PREFIX) ~= KEY_PREFIX or dot <= #KEY_PREFIX + 1 or dot == #key then
		error("API key must look like svc_live_<prefix>.<secret>", 2)
	end
	return setmetatable({
		baseUrl = string.gsub(opts.baseUrl, "/+$", ""),
		key = key,
		secret = string.sub(key, dot + 1),
		skewToleranceMs = (opts.skewToleranceSeconds or 30) * 1000,
		requestNonce = opts.requestNonce ~= false,
		-- Last measured skew (server minus local, ms) and the offset applied to timestamps.
		skewMs = 0,
		offsetMs = 0,
		lastTs = nil,
		lastBody = nil,
	}, Transport)
end

-- The X-Service-Timestamp for now: integer seconds, skew-corrected beyond the tolerance.
function Transport:timestamp()
	return math.floor((nowMs() + self.offsetMs) / 1000)
end

-- Estimated server time, ms since the epoch.
function Transport:serverNowMs()
	return nowMs() + self.skewMs
end

-- Waits until the timestamp is past `previous`; returns the new timestamp.
function Transport:nextSecond(previous)
	for _ = 1, 5 do
		local ts = self:timestamp()
		if ts > previous then
			return ts
		end
		local into = (nowMs() + self.offsetMs) % 1000
		task.wait((1000 - into + 5) / 1000)
	end
	return math.max(self:timestamp(), previous + 1)
end

-- Case-insensitive header lookup (the platform does not promise the case of response header names).
local function header(headers, name)
	if type(headers) ~= "table" then
		return nil
	end
	local lower = string.lower(name)
	for k, v in pairs(headers) do
		if string.lower(k) == lower then
			return v
		end
	end
	return nil
end
Transport.header = header

-- Parses an RFC 3339 UTC string into epoch ms, or nil.
local function parseTime(s)
	if type(s) ~= "string" then
		return nil
	end
	local ok, dt = pcall(function()
		return DateTime.fromIsoDate(s)
	end)
	if ok and dt then
		return dt.UnixTimestampMillis
	end
	return nil
end
Transport.parseTime = parseTime

-- A fresh request nonce: the 32 hex digits of a new GUID (122 random bits).
local function newNonce()
	return (string.gsub(HttpService:GenerateGUID(false), "-", ""))
end

-- One HTTP attempt. Returns a response table, or nil and an error message when no response arrived.
function Transport:attempt(method, path, body, ts)
	local tsString = string.format("%d", ts)
	self.lastTs = ts
	self.lastBody = body
	local url = self.baseUrl .. path
	local signature
	if self.requestNonce then
		local query = "nonce=" .. newNonce()
		url = url .. "?" .. query
		signature = Sha256.hmacHex(self.secret, tsString, body, "?", query)
	else
		signature = Sha256.hmacHex(self.secret, tsString, body)
	end
	local request = {
		Url = url,
		Method = method,
		Headers = {
			["Authorization"] = "Bearer " .. self.key,
			["X-Service-Timestamp"] = tsString,
			["X-Service-Signature"] = signature,
			["Content-Type"] = "application/json",
		},
	}
	if method ~= "GET" then
		request.Body = body
	end
	local started = nowMs()
	local ok, result = pcall(function()
		return HttpService:RequestAsync(request)
	end)
	if not ok then
		return nil, tostring(result)
	end
	local res = { status = result.StatusCode, headers = result.Headers or {}, body = result.Body or "" }
	if res.body ~= "" then
		local decoded, json = pcall(function()
			return HttpService:JSONDecode(res.body)
		end)
		if decoded and type(json) == "table" then
			res.json = json
		end
	end
	if res.json then
		local err = res.json.error
		if type(err) == "table" then
			res.errorCode = err.code
			res.requestId = err.requestId
		end
		local serverMs = parseTime(res.json.serverTime)
		if serverMs then
			-- Spec: Authentication rule 6, compare the local clock with serverTime.
			res.serverTimeMs = serverMs
			self.skewMs = math.floor(serverMs - (started + nowMs()) / 2 + 0.5)
			self.offsetMs = (math.abs(self.skewMs) > self.skewToleranceMs) and self.skewMs or 0
		end
	end
	return res
end

--[[
	transport:request(method: "GET"|"POST", path: string, body: string?) -> response, or nil and an error
	message when no HTTP response arrived. `body` is the exact JSON text to send ("" for GET, which signs
	the timestamp alone). response = { status, headers, body, json?, errorCode?, requestId?,
	serverTimeMs?, retried409: boolean }.
]]
function Transport:request(method, path, body)
	body = (method == "GET") and "" or (body or "")
	local ts = self:timestamp()
	if not self.requestNonce and self.lastTs and self.lastTs >= ts and self.lastBody == body then
		ts = self:nextSecond(self.lastTs)
	end
	local res, err = self:attempt(method, path, body, ts)
	if res and res.status == 409 then
		-- Spec: Errors, 409: re-sign with a fresh timestamp and retry once.
		res, err = self:attempt(method, path, body, self:nextSecond(ts))
		if res then
			res.retried409 = true
		end
	end
	return res, err
end

return Transport
