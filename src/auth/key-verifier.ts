/**
 * Resolves `Authorization: Bearer svc_live_<prefix>.<secret>` to a key without paying argon2 per request,
 * and so that no flood of wrong secrets on a (public) prefix can lock the real key out (issue #16).
 *
 * A correct secret is recognised, in this order, by:
 * 1. the process cache of verified keys: SHA-256 of the secret, one hash and one constant-time compare;
 * 2. the shared keyed digest in Redis (src/auth/verified-digests.ts), written when the key was created and
 *    by whichever process last verified it with argon2, so a restarted or new process needs no argon2 for
 *    a known key; it is keyed by the stored argon2 hash and a key has exactly one secret, so a secret that
 *    does not match it is wrong: refused with one HMAC, no argon2, no budget spent;
 * 3. only for a prefix with no shared digest (a key created without Redis, or a Redis that lost it):
 *    argon2id against the stored hash, inside {@link VerifyBudget}: counted before it starts,
 *    single-flight per (prefix, secret), bounded per prefix and per process.
 * Only secrets that reach step 3 can be throttled, so wrong secrets never refuse a right one that is known.
 * The Postgres row and the shared digest of a prefix are read once per {@link ROW_TTL_MS} and shared by all
 * requests on it (unknown prefixes too), in bounded LRU maps: a random-prefix flood costs bounded memory.
 * Revocation: the Postgres row is checked before any digest; the operator CLI also publishes on a Redis
 * channel every API process listens to (effect in milliseconds), and cached keys are reloaded from
 * Postgres in the background every {@link REFRESH_MS}.
 *
 * Postgres down (issue #29): where Postgres cannot be reached, the row comes from the key's Redis record
 * (src/auth/key-records.ts: the same argon2id hash, scopes, game, revoked state), so a process with a
 * cold memory still verifies known keys, and a revoked one stays refused. A prefix Redis has no record of
 * gets the Postgres error (503: it may be a key created moments ago), never a 401.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';
import { LRUCache } from 'lru-cache';
import type { Db } from '../store/prisma.js';
import { AuthError } from '../errors.js';
import { log } from '../log.js';
import { parseServerKey } from './server-key.js';
import type { Scope } from './scopes.js';
import { keyedDigest, sameDigest, type VerifiedDigests } from './verified-digests.js';
import type { KeyRecords, KeyRow } from './key-records.js';
import { isDependencyUnavailable } from '../store/dependency-errors.js';
import { BudgetExceeded, VerifyBudget, type BudgetRefusal } from './verify-budget.js';

export { MAX_FAILED_VERIFIES } from './verify-budget.js';

/** What a request knows about its key once authenticated. */
export interface VerifiedKey {
  keyId: string;
  prefix: string;
  gameId: string;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  /** Heartbeat interval of the key's game in seconds (spec: Heartbeat › Interval). */
  heartbeatIntervalSeconds: number;
  /** The secret, needed for the HMAC; lives only in the request, never in the cache. */
  secret: string;
}

/** Notified of every verification outcome that costs or saves argon2 work (the API's /metrics). */
export interface VerifierObserver {
  /** A secret was checked: `via` says how; `ok` whether it was right. */
  verified(via: 'argon2' | 'shared-digest', ok: boolean): void;
  /** A secret was refused without argon2 because the budget was spent. */
  refused(reason: BudgetRefusal): void;
}

interface CacheEntry {
  meta: Omit<VerifiedKey, 'secret'>;
  secretHash: string;
  digest: Buffer;
  revoked: boolean;
  loadedAt: number;
}

/** A prefix as Postgres and Redis know it: its row (false: no such key) and the shared digest. */
interface PrefixState {
  row: KeyRow | false;
  shared: Buffer | null;
}

/** Background reload period of a cached key, ms. */
export const REFRESH_MS = 30_000;
/** How long a prefix's row and shared digest are reused before reading them again, ms. */
export const ROW_TTL_MS = 5_000;
const NEGATIVE_TTL_MS = 60_000;
/** Entries of each bounded map (prefix states, wrong-secret digests). */
const MAX_ENTRIES = 10_000;

export class KeyVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly prefixes = new LRUCache<string, PrefixState>({ max: MAX_ENTRIES, ttl: ROW_TTL_MS });
  private readonly badSecrets = new LRUCache<string, true>({ max: MAX_ENTRIES, ttl: NEGATIVE_TTL_MS });
  private readonly prefixLoads = new Map<string, Promise<PrefixState>>();
  private readonly inflight = new Map<string, Promise<boolean>>();
  private readonly refreshing = new Set<string>();
  private readonly budget = new VerifyBudget();
  private sharedDown = false;
  private recordsInUse = false;

  /**
   * @param shared the Redis digests every process shares; null only where no Redis exists (then a
   *   restart makes every key cold again).
   * @param records the keys' Redis records, read when Postgres is unreachable and refreshed from every
   *   row read from Postgres; without them a cold process answers every key 503 during a Postgres outage.
   */
  constructor(
    private readonly db: Db,
    private readonly shared: VerifiedDigests | null,
    private readonly observer?: VerifierObserver,
    private readonly records?: KeyRecords,
  ) {}

  /**
   * Authenticates an Authorization header value.
   * @throws {AuthError} 401 `missing_key`, `malformed_key`, `unknown_key`, `revoked_key`, `bad_key`,
   *   or `key_throttled` (a secret no process has verified, while this prefix's or this process's
   *   argon2 budget is spent). Postgres errors propagate (the error handler maps outages).
   */
  async authenticate(header: string | undefined): Promise<VerifiedKey> {
    if (!header) throw new AuthError('missing_key', 'Authorization header is required');
    const parsed = header.startsWith('Bearer ') ? parseServerKey(header.slice(7).trim()) : null;
    if (!parsed) throw new AuthError('malformed_key', 'Authorization must be "Bearer svc_live_<prefix>.<secret>"');
    const { prefix, secret } = parsed;
    const digest = hash('sha256', secret, 'buffer');

    const cached = this.cache.get(prefix);
    if (cached) {
      if (Date.now() - cached.loadedAt > REFRESH_MS) this.refresh(prefix);
      if (cached.revoked) throw new AuthError('revoked_key', 'this key has been revoked');
      if (!timingSafeEqual(cached.digest, digest)) throw new AuthError('bad_key', 'invalid key');
      return { ...cached.meta, secret };
    }

    const state = await this.prefixState(prefix);
    if (!state.row) throw new AuthError('unknown_key', 'invalid key');
    const row = state.row;
    if (row.revokedAt) throw new AuthError('revoked_key', 'this key has been revoked');
    const keyed = keyedDigest(row.secretHash, secret);
    if (state.shared) {
      // The digest is keyed by this row's hash and a key has one secret: a mismatch is a wrong secret.
      const ok = sameDigest(state.shared, keyed);
      this.observer?.verified('shared-digest', ok);
      if (!ok) throw new AuthError('bad_key', 'invalid key');
      return this.admit(prefix, row, digest, secret);
    }

    const attempt = `${prefix}:${digest.toString('hex')}`;
    if (this.badSecrets.has(attempt)) throw new AuthError('bad_key', 'invalid key');
    let pending = this.inflight.get(attempt);
    if (!pending) {
      pending = this.budget
        .run(prefix, () => argon2.verify(row.secretHash, secret).catch(() => false))
        .finally(() => this.inflight.delete(attempt));
      this.inflight.set(attempt, pending);
    }
    let ok: boolean;
    try {
      ok = await pending;
    } catch (err) {
      if (!(err instanceof BudgetExceeded)) throw err;
      this.observer?.refused(err.reason);
      throw new AuthError('key_throttled', 'too many invalid attempts for this key; try again later');
    }
    this.observer?.verified('argon2', ok);
    if (!ok) {
      this.badSecrets.set(attempt, true);
      throw new AuthError('bad_key', 'invalid key');
    }
    state.shared = keyed;
    this.share(prefix, keyed);
    return this.admit(prefix, row, digest, secret);
  }

  /** Drops everything cached for `prefix` (pub/sub `key:<prefix>`), or for a game (`game:<id>`), or `all`. */
  invalidate(message: string): void {
    const [kind, id] = message.split(':', 2);
    if (kind === 'key' && id) {
      this.cache.delete(id);
      this.prefixes.delete(id);
    } else if (kind === 'game' && id) {
      for (const [p, e] of this.cache) if (e.meta.gameId === id) this.cache.delete(p);
      for (const [p, s] of this.prefixes.entries()) if (s.row && s.row.gameId === id) this.prefixes.delete(p);
    } else if (kind === 'all') {
      this.cache.clear();
      this.prefixes.clear();
    }
  }

  /**
   * The key's row: from Postgres (then its Redis record is brought up to date), or, when Postgres is
   * unreachable, from the Redis record. null: Postgres has no such key.
   * @throws the Postgres error when Postgres is unreachable and Redis has no usable record either.
   */
  private async load(prefix: string): Promise<KeyRow | null> {
    let row;
    try {
      row = await this.db.apiKey.findUnique({
        where: { prefix },
        include: { game: { select: { id: true, workspaceId: true, heartbeatIntervalSeconds: true, platform: true, universeId: true, nativeBans: true } } },
      });
    } catch (err) {
      if (!this.records || !isDependencyUnavailable(err)) throw err;
      const record = await this.records.load(prefix).catch(() => null);
      if (!record) throw err;
      this.noteRecords(true);
      return record;
    }
    this.noteRecords(false);
    // Read repair: a key created while Redis was down, or before records existed, gets its records here.
    if (row && this.records) {
      const records = this.records;
      void Promise.all([records.putKey(prefix, row), records.putGame(row.game)]).catch(() => undefined);
    }
    return row;
  }

  /** One log line when keys start being verified from their Redis records (Postgres unreachable) and one when that stops. */
  private noteRecords(inUse: boolean): void {
    if (inUse === this.recordsInUse) return;
    this.recordsInUse = inUse;
    if (inUse) log.warn('postgres unreachable: verifying keys from their redis records');
    else log.info('postgres reachable again: keys verified from postgres');
  }

  /** The prefix's row and shared digest: read once per {@link ROW_TTL_MS}, single-flight. */
  private async prefixState(prefix: string): Promise<PrefixState> {
    const known = this.prefixes.get(prefix);
    if (known) return known;
    let loading = this.prefixLoads.get(prefix);
    if (!loading) {
      loading = (async () => {
        const [row, shared] = await Promise.all([this.load(prefix), this.readShared(prefix)]);
        const state: PrefixState = { row: row ?? false, shared };
        this.prefixes.set(prefix, state);
        return state;
      })().finally(() => this.prefixLoads.delete(prefix));
      this.prefixLoads.set(prefix, loading);
    }
    return loading;
  }

  /** The shared digest, or null when there is none or Redis cannot say (argon2 then decides). */
  private async readShared(prefix: string): Promise<Buffer | null> {
    if (!this.shared) return null;
    try {
      const digest = await this.shared.get(prefix);
      this.noteShared(true);
      return digest;
    } catch (err) {
      this.noteShared(false, err);
      return null;
    }
  }

  private share(prefix: string, keyed: Buffer): void {
    this.shared?.set(prefix, keyed).then(() => this.noteShared(true), (err: unknown) => this.noteShared(false, err));
  }

  /** One log line per change of the shared digests' reachability, not one per request. */
  private noteShared(up: boolean, err?: unknown): void {
    if (up === !this.sharedDown) return;
    this.sharedDown = !up;
    if (up) log.info('verified key digests reachable again');
    else log.warn('verified key digests unreachable: keys not cached in this process need argon2', { err: String(err) });
  }

  private admit(prefix: string, row: KeyRow, digest: Buffer, secret: string): VerifiedKey {
    const entry: CacheEntry = {
      meta: {
        keyId: row.id,
        prefix,
        gameId: row.gameId,
        workspaceId: row.game.workspaceId,
        scopes: new Set(row.scopes as Scope[]),
        heartbeatIntervalSeconds: row.game.heartbeatIntervalSeconds,
      },
      secretHash: row.secretHash,
      digest,
      revoked: false,
      loadedAt: Date.now(),
    };
    this.cache.set(prefix, entry);
    return { ...entry.meta, secret };
  }

  /** Reloads a cached entry from Postgres without blocking the request that noticed it was due. */
  private refresh(prefix: string): void {
    if (this.refreshing.has(prefix)) return;
    this.refreshing.add(prefix);
    this.load(prefix)
      .then((row) => {
        const entry = this.cache.get(prefix);
        if (!entry) return;
        if (!row || row.secretHash !== entry.secretHash) {
          this.cache.delete(prefix);
          return;
        }
        entry.revoked = row.revokedAt !== null;
        entry.meta = { ...entry.meta, scopes: new Set(row.scopes as Scope[]), heartbeatIntervalSeconds: row.game.heartbeatIntervalSeconds };
        entry.loadedAt = Date.now();
      })
      .catch((err: unknown) => log.warn('key refresh failed', { prefix, err: String(err) }))
      .finally(() => this.refreshing.delete(prefix));
  }
}
