/**
 * The typed builder of a `door-lookup.lua` call (the read side of a door request: replay claim, quota,
 * versions and cached decisions in one round trip; the script's header lists what it reads): KEYS = doors
 * version, door subject versions, live servers, access stream, the quota count's two keys, the replay
 * buckets.
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';
import { quotaScriptArgs, type QuotaCount } from './lib/quota-count.js';
import { replayClaim } from './lib/replay-claim.js';

/** What one door lookup needs, by name. */
export interface DoorLookupCall {
  mode: 'one' | 'all' | 'join' | 'version';
  /** The user ('' when none) and, in mode `one`, the door. */
  externalId: string;
  doorKey: string;
  /** The asking server ('' when none). */
  externalServerId: string;
  /** Server time, ms. */
  nowMs: number;
  /** The door-cache window, floor(now / TTL ms). */
  window: number;
  /** The signing key's id and the request's signature (hex, as sent): the replay claim. */
  keyId: string;
  signature: string;
  /** The request's signed timestamp, s: how long its replay claim is kept (lib/replay-claim.ts; absent: as long as any). */
  signedAtSeconds?: number;
  quota: QuotaCount;
  /** Mode `join` only: the ban-check quota, counted before `quota` (door-lookup.lua). */
  banQuota?: QuotaCount;
}

/** KEYS and named arguments of `door-lookup.lua` for `call` in `keys`' game. */
export function doorLookupCall(keys: GameKeys, call: DoorLookupCall): ScriptCall {
  const replay = replayClaim(keys, call.keyId, call.signature, call.nowMs, call.signedAtSeconds);
  const quota = quotaScriptArgs(keys, call.keyId, call.quota, call.nowMs);
  const ban = call.mode === 'join' ? joinBanQuota(keys, call) : { keys: [], args: {} };
  return {
    keys: [keys.doorsVersion(), keys.doorSubjects(), keys.servers(), keys.accessStream(), ...quota.keys, ...ban.keys, ...replay.keys],
    args: {
      ...ban.args,
      b: keys.base,
      m: call.mode,
      u: call.externalId,
      d: call.doorKey,
      t: String(call.nowMs),
      s: call.externalServerId,
      w: call.window,
      ...replay.args,
      ...quota.args,
    },
  };
}

/**
 * Mode `join`'s ban-check quota: its counter head (KEYS[7]; the throttle hash of the minute is the bulk
 * quota's KEYS[6]) and its arguments renamed `bq`, `bf`, `bx`, `br`, `bt` beside the bulk quota's.
 * @throws {Error} when the call has no `banQuota` (a programming error).
 */
function joinBanQuota(keys: GameKeys, call: DoorLookupCall): { keys: string[]; args: Record<string, string | number> } {
  if (!call.banQuota) throw new Error('doorLookupCall: mode join needs banQuota');
  const q = quotaScriptArgs(keys, call.keyId, call.banQuota, call.nowMs);
  return { keys: [q.keys[0]], args: { bq: q.args.q, bf: q.args.qf, bx: q.args.qx, br: q.args.qr, bt: q.args.tf } };
}
