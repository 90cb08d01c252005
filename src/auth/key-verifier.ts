/**
 * Resolves `Authorization: Bearer svc_live_<prefix>.<secret>` to a key without paying argon2 per request.
 *
 * argon2id verify costs ~130 ms here, so after one successful verify the process caches the key's
 * metadata and a SHA-256 digest of the verified secret (never the secret): a warm key costs one hash and
 * one constant-time compare. Cold verifies are single-flight per (prefix, secret digest). Wrong secrets
 * are negative-cached, and after {@link MAX_FAILED_VERIFIES} failed verifies in a minute a prefix gets
 * no more argon2 work until the minute is over, so nobody can make the API run argon2 in a loop.
 * Revocation: the operator CLI publishes on a Redis channel every API process listens to (effect in
 * milliseconds); entries are also reloaded from Postgres in the background every {@link REFRESH_MS}.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';
import type { Db } from '../store/prisma.js';
import { AuthError } from '../http/errors.js';
import { log } from '../log.js';
import { parseServerKey } from './server-key.js';
import type { Scope } from './scopes.js';

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

interface CacheEntry {
  meta: Omit<VerifiedKey, 'secret'>;
  secretHash: string;
  digest: Buffer;
  revoked: boolean;
  loadedAt: number;
}

/** Background reload period of a cached key, ms. */
export const REFRESH_MS = 30_000;
/** Failed argon2 verifies per prefix per minute before the prefix is throttled. */
export const MAX_FAILED_VERIFIES = 5;
const NEGATIVE_TTL_MS = 60_000;
const UNKNOWN_PREFIX_TTL_MS = 5_000;

export class KeyVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly unknownPrefix = new Map<string, number>();
  private readonly badSecrets = new Map<string, number>();
  private readonly failures = new Map<string, { windowStart: number; count: number }>();
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  private readonly refreshing = new Set<string>();

  constructor(private readonly db: Db) {}

  /**
   * Authenticates an Authorization header value.
   * @throws {AuthError} 401 `missing_key`, `malformed_key`, `unknown_key`, `revoked_key`, `bad_key`,
   *   or `key_throttled` (too many wrong secrets for this prefix in the last minute).
   */
  async authenticate(header: string | undefined): Promise<VerifiedKey> {
    if (!header) throw new AuthError('missing_key', 'Authorization header is required');
    const parsed = header.startsWith('Bearer ') ? parseServerKey(header.slice(7).trim()) : null;
    if (!parsed) throw new AuthError('malformed_key', 'Authorization must be "Bearer svc_live_<prefix>.<secret>"');
    const { prefix, secret } = parsed;
    const digest = createHash('sha256').update(secret).digest();
    const now = Date.now();

    const cached = this.cache.get(prefix);
    if (cached) {
      if (now - cached.loadedAt > REFRESH_MS) this.refresh(prefix);
      if (cached.revoked) throw new AuthError('revoked_key', 'this key has been revoked');
      if (!timingSafeEqual(cached.digest, digest)) throw new AuthError('bad_key', 'invalid key');
      return { ...cached.meta, secret };
    }
    if ((this.unknownPrefix.get(prefix) ?? 0) > now) throw new AuthError('unknown_key', 'invalid key');
    const badKey = `${prefix}:${digest.toString('hex')}`;
    if ((this.badSecrets.get(badKey) ?? 0) > now) throw new AuthError('bad_key', 'invalid key');
    const f = this.failures.get(prefix);
    if (f && now - f.windowStart < 60_000 && f.count >= MAX_FAILED_VERIFIES) {
      throw new AuthError('key_throttled', 'too many invalid attempts for this key; try again later');
    }

    let pending = this.inflight.get(badKey);
    if (!pending) {
      pending = this.verifyCold(prefix, secret, digest).finally(() => this.inflight.delete(badKey));
      this.inflight.set(badKey, pending);
    }
    const entry = await pending;
    if (entry.revoked) throw new AuthError('revoked_key', 'this key has been revoked');
    return { ...entry.meta, secret };
  }

  /** Drops everything cached for `prefix` (pub/sub `key:<prefix>`), or for a game (`game:<id>`). */
  invalidate(message: string): void {
    const [kind, id] = message.split(':', 2);
    if (kind === 'key' && id) {
      this.cache.delete(id);
      this.unknownPrefix.delete(id);
    } else if (kind === 'game' && id) {
      for (const [p, e] of this.cache) if (e.meta.gameId === id) this.cache.delete(p);
    } else if (kind === 'all') {
      this.cache.clear();
      this.unknownPrefix.clear();
    }
  }

  private async load(prefix: string) {
    return this.db.apiKey.findUnique({
      where: { prefix },
      include: { game: { select: { workspaceId: true, heartbeatIntervalSeconds: true } } },
    });
  }

  private async verifyCold(prefix: string, secret: string, digest: Buffer): Promise<CacheEntry> {
    const row = await this.load(prefix);
    const now = Date.now();
    if (!row) {
      this.unknownPrefix.set(prefix, now + UNKNOWN_PREFIX_TTL_MS);
      throw new AuthError('unknown_key', 'invalid key');
    }
    if (row.revokedAt) throw new AuthError('revoked_key', 'this key has been revoked');
    const ok = await argon2.verify(row.secretHash, secret).catch(() => false);
    if (!ok) {
      this.badSecrets.set(`${prefix}:${digest.toString('hex')}`, now + NEGATIVE_TTL_MS);
      const f = this.failures.get(prefix);
      if (!f || now - f.windowStart >= 60_000) this.failures.set(prefix, { windowStart: now, count: 1 });
      else f.count += 1;
      this.sweepNegatives(now);
      throw new AuthError('bad_key', 'invalid key');
    }
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
      loadedAt: now,
    };
    this.cache.set(prefix, entry);
    return entry;
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

  private sweepNegatives(now: number): void {
    if (this.badSecrets.size < 10_000) return;
    for (const [k, until] of this.badSecrets) if (until <= now) this.badSecrets.delete(k);
  }
}
