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
 * Soundness of the window: a signature with timestamp ts accepted at server time t₁ can only be accepted
 * again at a t₂ ≤ ts + 300 s (the window check of src/adapters/http/authenticate.ts), and ts ≤ t₁ + 300 s, so
 * t₂ ≤ t₁ + 600 s. A claim at t₂ reads the buckets of floor(t₂/120 s) back to floor((t₂ − 600 s)/120 s)
 * ({@link REPLAY_BUCKETS_CHECKED} buckets), so t₁'s bucket is read; it must still be there, i.e. live until
 * ts + 300 s. Each claim raises (never lowers) its bucket's expiry to ts + 300 s + {@link REPLAY_MARGIN_SECONDS}
 * (issue #32 item 4): a bucket lives until the latest of its claims' windows closes, about 300 s after
 * its end for well-clocked servers instead of 600 s, and up to 630 s for a client 300 s ahead. Rolling
 * deploy: the versions before (2026-11-28) read the same buckets and set a bucket's expiry to 601 s after
 * its end unconditionally, which is still after ts + 300 s for every claim in it (ts ≤ t₁ + 300 s, t₁ before
 * the end), so old and new processes refuse each other's signatures for the whole window. The scripts run
 * the check (src/store/lua/lib/common.lua `claimReplay`).
 */
import { hash } from 'node:crypto';
import { REPLAY_BUCKET_SECONDS, REPLAY_BUCKETS_CHECKED, REPLAY_MARGIN_SECONDS, REPLAY_TTL_SECONDS, type GameKeys } from '../../keys.js';

/**
 * The signed timestamp's acceptance window, ± s: SIGNATURE_WINDOW_SECONDS of src/auth/signature.ts, which
 * the store does not import; {@link REPLAY_TTL_SECONDS} is twice it (test/limits/replay-window.test.ts holds them together).
 */
const SIGNATURE_WINDOW_SECONDS = REPLAY_TTL_SECONDS / 2;

/** Fields per replay bucket hash. */
export const REPLAY_SHARDS = 64;
/** Bytes of one replay tag (before base64). */
export const REPLAY_TAG_BYTES = 6;

/** The KEYS and named arguments (`rs`, `rt`, `rx`) of one replay claim inside a script. */
export interface ReplayClaim {
  /** Replay bucket hashes, the current bucket first. */
  keys: string[];
  /** `rx`: ms from now the current bucket must live at least (the script only raises its expiry). */
  args: { rs: string; rt: string; rx: number };
}

/**
 * The claim of `signature` (hex, as sent) by key `keyId` at server time `nowMs` (ms) in `keys`' game.
 * `signedAtSeconds` is the request's signed timestamp (s), inside ±{@link SIGNATURE_WINDOW_SECONDS} s of
 * `nowMs`; absent, the latest the window accepts (nowMs + 300 s), so the claim is kept as long as any.
 */
export function replayClaim(keys: GameKeys, keyId: string, signature: string, nowMs: number, signedAtSeconds?: number): ReplayClaim {
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
      // the bucket lives at least until this request's window closes (+ margin); never ≤ 0, which would delete it
      rx: Math.max(1000, Math.ceil(((signedAtSeconds ?? nowMs / 1000 + SIGNATURE_WINDOW_SECONDS) + SIGNATURE_WINDOW_SECONDS + REPLAY_MARGIN_SECONDS) * 1000 - nowMs)),
    },
  };
}
