/**
 * Resolves `Authorization: Bearer svc_live_<prefix>.<secret>` to a key without paying argon2 per request,
 * and so that no flood of wrong secrets on a (public) prefix can lock the real key out (issue #16).
 *
 * A correct secret is recognised, in this order, by:
 * 1. the process cache of verified keys: SHA-256 of the secret, one hash and one constant-time compare;
 * 2. {@link SecretVerifier} (src/auth/secret-verifier.ts): the shared keyed digest in Redis
 *    (src/auth/verified-digests.ts), written when the key was created and by whichever process last
 *    verified it with argon2, so a restarted or new process needs no argon2 for a known key, and a secret
 *    that does not match it is refused with one HMAC; only for a prefix with no shared digest (a key
 *    created without Redis, or a Redis that lost it), argon2id inside the argon2 budget
 *    (src/auth/verify-budget.ts).
 * Only secrets that reach argon2 can be throttled, so wrong secrets never refuse a right one that is known.
 * The Postgres row and the shared digest of a prefix are read once per RECORD_TTL_MS (5 s) and shared by
 * all requests on it (unknown prefixes too), in bounded LRU maps: a random-prefix flood costs bounded memory.
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
import type { Db } from '../store/prisma.js';
import { AuthError } from '../errors.js';
import { log } from '../log.js';
import { parseServerKey } from './server-key.js';
import type { Scope } from './scopes.js';
import type { VerifiedDigests } from './verified-digests.js';
import type { KeyRecords, KeyRow } from './key-records.js';
import { isDependencyUnavailable } from '../store/dependency-errors.js';
import type { BudgetRefusal } from './verify-budget.js';
import { SecretVerifier } from './secret-verifier.js';

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

/** Background reload period of a cached key, ms. */
export const REFRESH_MS = 30_000;

/** One per API process: verifies server keys as the module comment describes, caching verified keys in memory. */
export class KeyVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly secrets: SecretVerifier<KeyRow>;
  private readonly refreshing = new Set<string>();
  private recordsInUse = false;

  /**
   * @param shared the Redis digests every process shares; null only where no Redis exists (then a
   *   restart makes every key cold again).
   * @param records the keys' Redis records, read when Postgres is unreachable and refreshed from every
   *   row read from Postgres; without them a cold process answers every key 503 during a Postgres outage.
   */
  constructor(
    private readonly db: Db,
    shared: VerifiedDigests | null,
    observer?: VerifierObserver,
    private readonly records?: KeyRecords,
  ) {
    this.secrets = new SecretVerifier<KeyRow>(
      {
        load: (prefix) => this.load(prefix),
        secretHash: (row) => row.secretHash,
        sharedName: (prefix) => prefix,
        admit: (row) => {
          if (row.revokedAt) throw new AuthError('revoked_key', 'this key has been revoked');
        },
      },
      shared,
      {
        unknown: () => new AuthError('unknown_key', 'invalid key'),
        bad: () => new AuthError('bad_key', 'invalid key'),
        throttled: () => new AuthError('key_throttled', 'too many invalid attempts for this key; try again later'),
      },
      {
        checked: (via, ok) => observer?.verified(via, ok),
        refused: (reason) => observer?.refused(reason),
        sharedReachable: (up, err) => {
          if (up) log.info('verified key digests reachable again');
          else log.warn('verified key digests unreachable: keys not cached in this process need argon2', { err: String(err) });
        },
      },
    );
  }

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
    const row = await this.secrets.verify(prefix, secret, digest);
    return this.admit(prefix, row, digest, secret);
  }

  /** Drops everything cached for `prefix` (pub/sub `key:<prefix>`), or for a game (`game:<id>`), or `all`. */
  invalidate(message: string): void {
    const [kind, id] = message.split(':', 2);
    if (kind === 'key' && id) {
      this.cache.delete(id);
      this.secrets.forget(id);
    } else if (kind === 'game' && id) {
      for (const [p, e] of this.cache) if (e.meta.gameId === id) this.cache.delete(p);
      this.secrets.forgetWhere((row) => row.gameId === id);
    } else if (kind === 'all') {
      this.cache.clear();
      this.secrets.forgetAll();
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
