--[[
  The Redis write of POST /api/v1/game/bans/check (spec: Authentication rule 3; Limits): claims the
  request signature in the replay cache and counts the request against its per-(key, user) quota
  (src/limits/quotas.ts), in one script under the game's hash tag. The blocklist lookup itself is a
  separate read in the workspace's slot, sent in the same tick.

  KEYS: 1 the key's `ban` quota hash of this window, 2 the minute's throttle hash, 3.. the replay buckets.
  A: rm, rs, rt, rx, rl (replay, lib/replay.lua), qf quota field (the user), q quota, qx, qr, tf, tt (quota, lib/quota.lua).
  Returns {"replay"}, {"limited", <seconds to the window's end>} or {"ok"}.
]]
if not claimReplay(3, #KEYS - 2) then return {'replay'} end
return overQuota(1, 2, A.qf, A.q) or {'ok'}
