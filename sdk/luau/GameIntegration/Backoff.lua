--[[
	GameIntegration SDK (Luau) - Backoff
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	Retry delays (spec: Errors rows 429 and 5xx; Limits: back-off is based on the status code): exponential
	backoff with "equal jitter" for 5xx and network errors, Retry-After seconds for 429. Mirrors
	packages/client/src/backoff.ts.
]]

local Backoff = {}

--[[
	Backoff.delay(attempt: number (1 = first retry), baseSeconds: number?, maxSeconds: number?,
	random: (() -> number)?) -> seconds: uniformly between half and all of min(max, base * 2^(attempt-1)).
	Defaults: base 1 s, max 60 s, math.random.
]]
function Backoff.delay(attempt, baseSeconds, maxSeconds, random)
	local exponent = math.min(math.max(0, attempt - 1), 30)
	local ceiling = math.min(maxSeconds or 60, (baseSeconds or 1) * 2 ^ exponent)
	return ceiling / 2 + (random or math.random)() * ceiling / 2
end

--[[
	Backoff.retryAfter(value: string?) -> seconds, or nil when the header is absent or not a number of
	seconds (the spec sends seconds; the caller then falls back to Backoff.delay).
]]
function Backoff.retryAfter(value)
	if type(value) ~= "string" then
		return nil
	end
	local trimmed = string.match(value, "^%s*(%d+%.?%d*)%s*$")
	return trimmed and tonumber(trimmed) or nil
end

return Backoff
