/**
 * The replay cache (spec: Authentication rule 3: a signature is accepted once; 409 `replayed_signature`
 * when the same signature comes again while its timestamp is inside the ±300 s window).
 *
 * Compact form (issue #15 item 5): instead of one key per signature (~200 B each), a claim is a 6-byte
 * tag (8 base64 characters) appended to one field of a per-game hash per {@link REPLAY_BUCKET_SECONDS}-s bucket of server time.
 * The tag is the first 7 bytes of SHA-256(keyId, signature): byte 0 picks one of {@link REPLAY_SHARDS}
 * fields (keeping each field short to scan), bytes 1–6 are the tag. The same key and signature always
 * give the same tag, so a replay is always refused; two different signatures share a tag with
 * probability 2⁻⁴⁸ per pair, a spurious 409 the client answers by re-signing.
 *
 * Soundness of the window: a signature accepted at server time t₁ can only be accepted again while its
 * timestamp is within 300 s of the server's clock, i.e. until t₁ + 600 s. A claim at t₂ reads the buckets
 * of floor(t₂/120 s) back to floor((t₂ − 600 s)/120 s) ({@link REPLAY_BUCKETS_CHECKED} buckets), and a
 * bucket lives until 600 s after its end, so t₁'s bucket is read and still there for every t₂ ≤ t₁ + 600 s.
 * The scripts run the check (src/store/lua/lib/common.lua `claimReplay`).
 */
import { hash } from 'node:crypto';
import { REPLAY_BUCKET_SECONDS, REPLAY_BUCKETS_CHECKED, REPLAY_TTL_SECONDS, type GameKeys } from '../../keys.js';

/** Fields per replay bucket hash. */
export const REPLAY_SHARDS = 64;
/** Bytes of one replay tag (before base64). */
export const REPLAY_TAG_BYTES = 6;

/** The KEYS and named arguments (`rs`, `rt`, `rx`) of one replay claim inside a script. */
export interface ReplayClaim {
  /** Replay bucket hashes, the current bucket first. */
  keys: string[];
  args: { rs: string; rt: string; rx: number };
}

/** The claim of `signature` (hex, as sent) by key `keyId` at server time `nowMs` (ms) in `keys`' game. */
export function replayClaim(keys: GameKeys, keyId: string, signature: string, nowMs: number): ReplayClaim {
  const digest = hash('sha256', `${keyId}\n${signature}`, 'buffer');
  const bucketMs = REPLAY_BUCKET_SECONDS * 1000;
  const bucket = Math.floor(nowMs / bucketMs);
  const buckets: string[] = [];
  for (let i = 0; i < REPLAY_BUCKETS_CHECKED; i++) buckets.push(keys.replayBucket(bucket - i));
  return {
    keys: buckets,
    args: {
      rs: String(digest[0]! % REPLAY_SHARDS),
      // base64 (6 bytes = 8 characters, no padding): Redis's cmsgpack does not decode msgpack bin
      rt: digest.subarray(1, 1 + REPLAY_TAG_BYTES).toString('base64'),
      // the current bucket lives until REPLAY_TTL_SECONDS after its end (+1 s for clock rounding)
      rx: (bucket + 1) * bucketMs + REPLAY_TTL_SECONDS * 1000 + 1000 - nowMs,
    },
  };
}
