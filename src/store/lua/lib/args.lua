--[[
  The first of the library files prepended to every script, in the order of LUA_LIBRARY in
  src/store/redis.ts, after the generated suffix table `SFX`: the script's named arguments.
  A = the one msgpack-packed argument table (ARGV[1]); its fields are listed in each script's header.
]]
local A = cmsgpack.unpack(ARGV[1])
