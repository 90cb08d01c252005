/**
 * The replay cache (spec: Authentication rule 3: a signature is accepted once; 409 `replayed_signature`
 * when the same signature comes again while its timestamp is inside the ±300 s window).
 *
 * A claim is one integer m < 2⁵³ (the first 53 bits of SHA-256(keyId, signature)) in the claims of the
 * {@link REPLAY_BUCKET_SECONDS}-s bucket of server time it was made in. A bucket's claims are sets spread by
 * linear hashing on m (src/store/lua/lib/replay.lua `replayAdd`): each shard an intset of ~192 integers
 * (8 B each), one SISMEMBER per bucket to check, one SADD to claim (issue #32 item 2). The layout before
 * (issue #15 item 5, until 2026-11-29) concatenated 8-character tags in one field of 64 per bucket: a
 * claim read six fields of up to ~14 KB into Lua, scanned them and rewrote one, which went whole to the AOF:
 * 110–140 µs of Redis CPU and ~2 KB of AOF per claim at 60,000 claims per bucket (a game making ~500
 * signed requests a second), ~50 µs and ~380 B now (`npm run bench:replay`). The same key and signature always give the same m,
 * so a replay is always refused; two different signatures share m with probability 2⁻⁵³ per pair, a
 * spurious 409 the client answers by re-signing.
 *
 * Soundness of the window: a signature with timestamp ts accepted at server time t₁ can only be accepted
 * again at a t₂ ≤ ts + 300 s (the window check of src/adapters/http/authenticate.ts), and ts ≤ t₁ + 300 s, so
 * t₂ ≤ t₁ + 600 s. A claim at t₂ reads the buckets of floor(t₂/120 s) back to floor((t₂ − 600 s)/120 s)
 * ({@link REPLAY_BUCKETS_CHECKED} buckets), so t₁'s bucket is read; its claim must still be there, i.e. live
 * until ts + 300 s. Each claim raises (never lowers) the expiry of the keys it writes to at least ts + 300 s +
 * {@link REPLAY_MARGIN_SECONDS} (with 10 s of headroom), and a split gives the new shard the expiry of the one it came from.
 *
 * Upgrading (docs/running.md "Upgrading"): every process reads both layouts; `LEGACY_LAYOUT_WRITES`
 * makes it write the old one. A rolling upgrade from a version before 2026-11-29 first rolls out with it
 * set (old processes see every claim), then without it (the processes of step one read the sets).
 */
import { hash } from 'node:crypto';
import { REPLAY_BUCKET_SECONDS, REPLAY_BUCKETS_CHECKED, REPLAY_MARGIN_SECONDS, REPLAY_TTL_SECONDS, type GameKeys } from '../../keys.js';

/**
 * The signed timestamp's acceptance window, ± s: SIGNATURE_WINDOW_SECONDS of src/auth/signature.ts, which
 * the store does not import; {@link REPLAY_TTL_SECONDS} is twice it (test/limits/replay-window.test.ts holds them together).
 */
const SIGNATURE_WINDOW_SECONDS = REPLAY_TTL_SECONDS / 2;

/** Fields per bucket hash of the layout before 2026-11-29 (read always, written with `LEGACY_LAYOUT_WRITES`). */
const LEGACY_SHARDS = 64;
/** Bytes of one tag of that layout (before base64). */
const LEGACY_TAG_BYTES = 6;

/** The KEYS and named arguments of one replay claim inside a script (src/store/lua/lib/replay.lua `claimReplay`). */
export interface ReplayClaim {
  /** The checked buckets' claim counters, the current bucket first, then the same buckets' legacy hashes. */
  keys: string[];
  /**
   * `rm`: the claim, a decimal integer < 2⁵³; `rs`, `rt`: its legacy field and tag; `rx`: ms from now the
   * keys written must live at least (the script only raises expiries); `rl`: write the legacy layout.
   */
  args: { rm: string; rs: string; rt: string; rx: number; rl: boolean };
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
  const sets: string[] = [];
  const legacy: string[] = [];
  for (let i = 0; i < REPLAY_BUCKETS_CHECKED; i++) {
    sets.push(keys.replayClaims(bucket - i));
    legacy.push(keys.replayBucket(bucket - i));
  }
  return {
    keys: [...sets, ...legacy],
    args: {
      // 48 + 5 bits: exact in Lua's doubles, an 8-byte intset member in Redis
      rm: String(digest.readUIntBE(0, 6) * 32 + (digest[6]! >> 3)),
      rs: String(digest[0]! % LEGACY_SHARDS),
      // base64 (6 bytes = 8 characters, no padding): Redis's cmsgpack does not decode msgpack bin
      rt: digest.subarray(1, 1 + LEGACY_TAG_BYTES).toString('base64'),
      // the keys live at least until this request's window closes (+ margin); never ≤ 0, which would delete them
      rx: Math.max(1000, Math.ceil(((signedAtSeconds ?? nowMs / 1000 + SIGNATURE_WINDOW_SECONDS) + SIGNATURE_WINDOW_SECONDS + REPLAY_MARGIN_SECONDS) * 1000 - nowMs)),
      rl: keys.legacyWrites,
    },
  };
}
