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
  mode: 'one' | 'all' | 'version';
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
}

/** KEYS and named arguments of `door-lookup.lua` for `call` in `keys`' game. */
export function doorLookupCall(keys: GameKeys, call: DoorLookupCall): ScriptCall {
  const replay = replayClaim(keys, call.keyId, call.signature, call.nowMs, call.signedAtSeconds);
  const quota = quotaScriptArgs(keys, call.keyId, call.quota, call.nowMs);
  return {
    keys: [keys.doorsVersion(), keys.doorSubjects(), keys.servers(), keys.accessStream(), ...quota.keys, ...replay.keys],
    args: {
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
