--[[
  Quota counters (src/store/lua/lib/quota-count.ts): KEYS[counter] heads the sharded hash
  (lib/sharded-hash.lua) of one key's counters in one window and quota kind. A subject's number x is
  the first 48 bits of its SHA-1 (two subjects of one window share a count with probability
  ~n^2 / 2^49, ~1e-7 for 6,000 subjects), its h the first 32, its field the 15 decimal digits of
  2^48 + x: a listpack stores such a field as a 64-bit integer, ~10 B a subject with its count instead
  of ~16 B for the 12 hex digits written before 2026-11-29, which a hash of a rolling deploy's window
  may still hold (both forms are split by their h; the two forms of one subject count apart, so for at
  most two windows it may get twice its quota).
]]
local QUOTA_FIELD_BASE = 2 ^ 48

local function quotaFieldHash(f)
  if #f == 15 and not string.find(f, '%D') then return math.floor((tonumber(f) - QUOTA_FIELD_BASE) / 65536) end
  if #f == 12 and not string.find(f, '[^0-9a-f]') then return tonumber(string.sub(f, 1, 8), 16) end
  return nil
end

--[[
  Counts one request of `subject` in the quota counters headed by KEYS[counter] and returns the subject's
  count in this window, this request included; every hash it writes expires p.qx ms from now (a margin
  past the window's end: src/store/keys.ts QUOTA_MARGIN_SECONDS). `p` holds the count's arguments (qx,
  and qr, tf, tt for overQuota): A when omitted, another table for a script's second quota.
]]
local function countSubject(counter, subject, p)
  p = p or A
  local head = KEYS[counter]
  local x = tonumber(string.sub(redis.sha1hex(subject), 1, 12), 16)
  local level, split, n = shardState(head)
  local key = shardFor(head, level, split, math.floor(x / 65536))
  -- '%.0f': Lua's tostring would print a 15-digit number as "%.14g", in exponent form
  local used = redis.call('HINCRBY', key, string.format('%.0f', QUOTA_FIELD_BASE + x), 1)
  if used == 1 then
    redis.call('PEXPIRE', key, p.qx)
    shardAdded(head, level, split, n, quotaFieldHash, p.qx)
  end
  return used
end

--[[
  Counts one request of `subject` (countSubject, arguments `p` as there). Over `quota`: counts the 429 in
  field p.tf of the minute's throttle hash KEYS[throttled] (TTL p.tt s) and returns {"limited", p.qr},
  p.qr = seconds to the window's end; else nil.
]]
local function overQuota(counter, throttled, subject, quota, p)
  p = p or A
  if countSubject(counter, subject, p) <= quota then return nil end
  redis.call('HINCRBY', KEYS[throttled], p.tf, 1)
  redis.call('EXPIRE', KEYS[throttled], p.tt)
  return {'limited', tostring(p.qr)}
end
