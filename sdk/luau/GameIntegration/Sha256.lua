--[[
	GameIntegration SDK (Luau) - Sha256
	Copyright (c) 2026 the game integration service authors. MIT License: permission is hereby granted,
	free of charge, to deal in this software without restriction; it is provided "as is", without warranty.

	Pure SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) over byte strings, for request signing
	(spec: Authentication, X-Service-Signature). The platform offers no HMAC, so it is computed here with
	bit32 in the syntax Luau and Lua 5.2 share. Memory is constant per message: input is consumed 64 bytes
	at a time straight from the string (string.byte on a window), only a < 64-byte tail is buffered, and one
	64-entry word table per hasher is reused for every block.
]]

local band, bnot, bxor, rrotate, rshift = bit32.band, bit32.bnot, bit32.bxor, bit32.rrotate, bit32.rshift
local byte, char, format, sub = string.byte, string.char, string.format, string.sub

local MOD = 4294967296

-- Round constants: first 32 bits of the fractional parts of the cube roots of the first 64 primes.
local K = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

local Sha256 = {}
Sha256.__index = Sha256

--[[
	Sha256.new() -> hasher. Methods: hasher:update(bytes: string) -> hasher (any number of calls),
	hasher:digest() -> 32-byte binary string (the hasher must not be used afterwards).
]]
function Sha256.new()
	return setmetatable({
		h = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 },
		w = {},
		tail = "",
		length = 0,
	}, Sha256)
end

-- Compresses the 64-byte block of `s` starting at byte index `at` into the state `h`, using `w` as scratch.
local function compress(h, w, s, at)
	for i = 1, 16 do
		local b0, b1, b2, b3 = byte(s, at, at + 3)
		w[i] = ((b0 * 256 + b1) * 256 + b2) * 256 + b3
		at = at + 4
	end
	for i = 17, 64 do
		local x, y = w[i - 15], w[i - 2]
		local s0 = bxor(rrotate(x, 7), rrotate(x, 18), rshift(x, 3))
		local s1 = bxor(rrotate(y, 17), rrotate(y, 19), rshift(y, 10))
		w[i] = (w[i - 16] + s0 + w[i - 7] + s1) % MOD
	end
	local a, b, c, d, e, f, g, hh = h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
	for i = 1, 64 do
		local S1 = bxor(rrotate(e, 6), rrotate(e, 11), rrotate(e, 25))
		local ch = bxor(band(e, f), band(bnot(e), g))
		local t1 = hh + S1 + ch + K[i] + w[i]
		local S0 = bxor(rrotate(a, 2), rrotate(a, 13), rrotate(a, 22))
		local maj = bxor(band(a, b), band(a, c), band(b, c))
		hh = g
		g = f
		f = e
		e = (d + t1) % MOD
		d = c
		c = b
		b = a
		a = (t1 + S0 + maj) % MOD
	end
	h[1] = (h[1] + a) % MOD
	h[2] = (h[2] + b) % MOD
	h[3] = (h[3] + c) % MOD
	h[4] = (h[4] + d) % MOD
	h[5] = (h[5] + e) % MOD
	h[6] = (h[6] + f) % MOD
	h[7] = (h[7] + g) % MOD
	h[8] = (h[8] + hh) % MOD
end

-- Feeds `data` (a byte string). Whole blocks are read in place; only the remainder is kept.
function Sha256:update(data)
	local n = #data
	self.length = self.length + n
	local at = 1
	if #self.tail > 0 then
		local need = 64 - #self.tail
		if n < need then
			self.tail = self.tail .. data
			return self
		end
		compress(self.h, self.w, self.tail .. sub(data, 1, need), 1)
		at = need + 1
	end
	while at + 63 <= n do
		compress(self.h, self.w, data, at)
		at = at + 64
	end
	self.tail = sub(data, at)
	return self
end

-- Big-endian 4 bytes of a 32-bit value.
local function word(v)
	return char(rshift(v, 24), band(rshift(v, 16), 255), band(rshift(v, 8), 255), band(v, 255))
end

-- Pads (0x80, zeros, 64-bit big-endian bit length) and returns the 32-byte digest.
function Sha256:digest()
	local bits = self.length * 8
	local zeros = (55 - self.length) % 64
	local high = math.floor(bits / MOD)
	self:update("\128" .. string.rep("\0", zeros) .. word(high) .. word(bits % MOD))
	local out = {}
	for i = 1, 8 do
		out[i] = word(self.h[i])
	end
	return table.concat(out)
end

-- Lowercase hexadecimal of a binary string.
local function toHex(bytes)
	return (string.gsub(bytes, ".", function(c)
		return format("%02x", byte(c))
	end))
end
Sha256.toHex = toHex

-- sha256(...: string) -> 32-byte binary digest of the concatenation of the arguments (not copied).
function Sha256.sha256(...)
	local hasher = Sha256.new()
	for i = 1, select("#", ...) do
		hasher:update((select(i, ...)))
	end
	return hasher:digest()
end

-- Key padded to 64 bytes and xor-ed with `pad` (0x36 inner, 0x5c outer).
local function padKey(key, pad)
	local out = {}
	for i = 1, 64 do
		out[i] = char(bxor(byte(key, i) or 0, pad))
	end
	return table.concat(out)
end

--[[
	hmac(key: string, ...: string) -> 32-byte binary HMAC-SHA256 of the concatenated message parts, keyed
	with `key` (hashed first when longer than 64 bytes). Parts are fed in order, never concatenated.
]]
function Sha256.hmac(key, ...)
	if #key > 64 then
		key = Sha256.sha256(key)
	end
	local inner = Sha256.new():update(padKey(key, 0x36))
	for i = 1, select("#", ...) do
		inner:update((select(i, ...)))
	end
	return Sha256.sha256(padKey(key, 0x5c), inner:digest())
end

-- hmacHex(key, ...) -> lowercase hex (64 characters) of hmac(key, ...): the X-Service-Signature value.
function Sha256.hmacHex(key, ...)
	return toHex(Sha256.hmac(key, ...))
end

return Sha256
