/**
 * What a Lua script needs to count one request against its quota (src/limits/quotas.ts): the KEYS (the
 * head of the key's counter hashes of the current window, the game's throttle hash of this minute) and
 * the named arguments `q`, `qs`, `qf`, `qx`, `qr`, `tf`, `tt` (and `qu`, `qa` for a door check) read by `overQuota` in
 * src/store/lua/lib/common.lua, which spreads the subjects over listpack-sized shards of the head.
 */
import { THROTTLE_COUNT_TTL_SECONDS, type GameKeys } from '../store/keys.js';
import type { QuotaArgs } from './quotas.js';

/** KEYS and named arguments of one quota count. */
export interface QuotaScriptArgs {
  /** [head of the counter hashes of the window, throttle hash of the minute]. */
  keys: [string, string];
  /** `qu`/`qa`: {@link QuotaArgs.userAllowance}, only for a door check. */
  args: { q: number; qs: number; qf: string; qx: number; qr: number; tf: string; tt: number; qu?: string; qa?: number };
}

/**
 * The count of `quota` for key `keyId` at server time `nowMs` (ms): window = floor(now / window ms); the
 * counter hashes expire at the end of the next window (a late request of this window still finds its
 * count); `qr` = whole seconds to the window's end (≥ 1), the 429's Retry-After.
 */
export function quotaScriptArgs(keys: GameKeys, keyId: string, quota: QuotaArgs, nowMs: number): QuotaScriptArgs {
  const windowMs = quota.windowSeconds * 1000;
  const window = Math.floor(nowMs / windowMs);
  const endMs = (window + 1) * windowMs;
  const out: QuotaScriptArgs = {
    keys: [keys.rateWindow(quota.tag, window, keyId), keys.throttledInMinute(Math.floor(nowMs / 60_000))],
    args: {
      q: quota.quota,
      qs: quota.perServer,
      qf: quota.field,
      qx: endMs + windowMs - nowMs,
      qr: Math.max(1, Math.ceil((endMs - nowMs) / 1000)),
      tf: `${quota.tag}:${quota.who}`,
      tt: THROTTLE_COUNT_TTL_SECONDS,
    },
  };
  if (quota.userAllowance) [out.args.qu, out.args.qa] = [quota.userAllowance.field, quota.userAllowance.count];
  return out;
}
