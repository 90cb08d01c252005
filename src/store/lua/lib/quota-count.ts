/**
 * The part of a script call that counts one request against its quota (src/limits/quotas.ts), for the
 * scripts that count (heartbeat, ban-check-claim, door-lookup): the KEYS (the
 * head of the key's counter hashes of the current window, the game's throttle hash of this minute) and
 * the named arguments `q`, `qs`, `qf`, `qx`, `qr`, `tf`, `tt` (and `qu`, `qa` for a door check) read by `overQuota` in
 * src/store/lua/lib/quota.lua, which spreads the subjects over listpack-sized shards of the head.
 */
import { QUOTA_MARGIN_SECONDS, THROTTLE_COUNT_TTL_SECONDS, type GameKeys } from '../../keys.js';

/**
 * One request's quota, as the scripts count it (src/limits/quotas.ts builds them, its `QuotaArgs` adds
 * the kind the 429 names).
 */
export interface QuotaCount {
  /** Part of the counter key and of the throttle-history field (`KIND_TAGS` of src/limits/quotas.ts). */
  tag: string;
  /** Who is counted within the key's counter hash (server, user, door; `-` for the key itself). */
  field: string;
  /** Requests allowed per window (before the per-server addition). */
  quota: number;
  /** Added to `quota` per live server of the game (read in the script); 0 = none. */
  perServer: number;
  windowSeconds: number;
  /** The server or user named in the throttle history (`<tag>:<who>`). */
  who: string;
  /**
   * Door checks only: the user's subject and the checks per window counted only under it; `field` is
   * counted (and `quota` applies) only past them.
   */
  userAllowance?: { field: string; count: number };
}

/** KEYS and named arguments of one quota count. */
export interface QuotaScriptArgs {
  /** [head of the counter hashes of the window, throttle hash of the minute]. */
  keys: [string, string];
  /** `qu`/`qa`: {@link QuotaCount.userAllowance}, only for a door check. */
  args: { q: number; qs: number; qf: string; qx: number; qr: number; tf: string; tt: number; qu?: string; qa?: number };
}

/**
 * The count of `quota` for key `keyId` at server time `nowMs` (ms): window = floor(now / window ms); the
 * counter hashes expire {@link QUOTA_MARGIN_SECONDS} after the window's end (a request read its `nowMs`
 * inside the window, so it is counted by then); `qr` = whole seconds to the window's end (≥ 1), the 429's
 * Retry-After.
 */
export function quotaScriptArgs(keys: GameKeys, keyId: string, quota: QuotaCount, nowMs: number): QuotaScriptArgs {
  const windowMs = quota.windowSeconds * 1000;
  const window = Math.floor(nowMs / windowMs);
  const endMs = (window + 1) * windowMs;
  const out: QuotaScriptArgs = {
    keys: [keys.rateWindow(quota.tag, window, keyId), keys.throttledInMinute(Math.floor(nowMs / 60_000))],
    args: {
      q: quota.quota,
      qs: quota.perServer,
      qf: quota.field,
      qx: endMs + QUOTA_MARGIN_SECONDS * 1000 - nowMs,
      qr: Math.max(1, Math.ceil((endMs - nowMs) / 1000)),
      tf: `${quota.tag}:${quota.who}`,
      tt: THROTTLE_COUNT_TTL_SECONDS,
    },
  };
  if (quota.userAllowance) [out.args.qu, out.args.qa] = [quota.userAllowance.field, quota.userAllowance.count];
  return out;
}
