--[[
  A session's open time in its roster value (`<open time>\n<info>`; src/presence/server-view.ts
  `parseRosterValue` reads it too): the ms in base 36, 8 characters until 2059 and 9 until the year 5000,
  instead of 13 decimal digits (5 B less per player on a roster; issue #32 item 4). Builds before
  2026-11-30 wrote the decimal ms, which is 13 digits long for any time between 2001 and 2286, so the
  length tells the forms apart; with A.wl (LEGACY_LAYOUT_WRITES, the first step of an upgrade) this
  process writes the decimal form, which older processes read.
]]
local OPEN_TIME_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'

-- The open time this process writes for server time now (ms, a whole number; nowS its decimal string).
local function rosterOpenTime(now, nowS)
  if A.wl then return nowS end
  local out, ms = {}, now
  repeat
    local d = ms % 36
    table.insert(out, 1, string.sub(OPEN_TIME_DIGITS, d + 1, d + 1))
    ms = (ms - d) / 36
  until ms == 0
  return table.concat(out)
end

-- A roster value's open time as written (either form) -> decimal ms, as the session streams carry it.
local function openTimeMs(text)
  if #text ~= 8 and #text ~= 9 then return text end
  return string.format('%.0f', tonumber(text, 36))
end
