/**
 * The typed builder of a `ban-check-claim.lua` call (the replay claim and per-(key, user) quota of POST
 * bans/check): KEYS = the quota count's two keys, then the replay buckets; arguments of both (lib/).
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';
import { quotaScriptArgs, type QuotaCount } from './lib/quota-count.js';
import { replayClaim } from './lib/replay-claim.js';

/**
 * KEYS and named arguments of `ban-check-claim.lua`: key `keyId`'s `signature` (hex), signed at
 * `signedAtSeconds` (s; absent: the claim is kept as long as any), and `quota`, at server time `nowMs` (ms).
 */
export function banCheckClaimCall(keys: GameKeys, call: { keyId: string; signature: string; signedAtSeconds?: number; quota: QuotaCount; nowMs: number }): ScriptCall {
  const replay = replayClaim(keys, call.keyId, call.signature, call.nowMs, call.signedAtSeconds);
  const quota = quotaScriptArgs(keys, call.keyId, call.quota, call.nowMs);
  return { keys: [...quota.keys, ...replay.keys], args: { ...replay.args, ...quota.args } };
}
