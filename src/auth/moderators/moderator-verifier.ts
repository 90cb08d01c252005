/**
 * Resolves a personal access token `gmod_<prefix>.<secret>` to its moderator account id, verified the
 * way server keys are (src/auth/key-verifier.ts, issue #16) and built from the same parts, so a flood of
 * wrong secrets on a (public) prefix never locks the real token out:
 * 1. the process cache: SHA-256 of the secret, one constant-time compare;
 * 2. the shared keyed digest in Redis (src/auth/verified-digests.ts, under `gmod_<prefix>`), written when
 *    the token is issued: a secret that does not match it is wrong, refused with one HMAC, no argon2;
 * 3. only without a shared digest (Redis lost it): argon2id against the stored hash inside a
 *    {@link VerifyBudget}, single-flight per (prefix, secret), wrong secrets negative-cached.
 * Only step 3 can be throttled, so wrong secrets never refuse a right one the service has seen.
 * The row of a prefix is read at most once per {@link ROW_TTL_MS}. Rotation and disabling publish
 * `moderator:<id>`; {@link ModeratorTokenVerifier.invalidate} drops that account's entries.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../store/prisma.js';
import { AuthError } from '../../errors.js';
import { keyedDigest, sameDigest, type VerifiedDigests } from '../verified-digests.js';
import { BudgetExceeded, VerifyBudget } from '../verify-budget.js';
import { parseModeratorToken, sharedDigestName } from './moderator-token.js';

interface TokenRow {
  id: string;
  tokenHash: string;
}
interface PrefixState {
  row: TokenRow | false;
  shared: Buffer | null;
}

/** How long a prefix's row and shared digest are reused, ms. */
export const ROW_TTL_MS = 5_000;
/** How long a verified token is trusted from the process cache before the row is read again, ms. */
export const VERIFIED_TTL_MS = 30_000;
const NEGATIVE_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

/** Counts of how tokens were checked (tests and metrics read them). */
export interface TokenCheckCounts {
  cached: number;
  sharedDigest: number;
  argon2: number;
  refused: number;
}

/**
 * One per API process (console listener), owned by src/adapters/console/console-auth.ts: verifies moderator
 * personal access tokens as the module comment describes. `verify` resolves to the account id or throws
 * {@link AuthError} (`malformed_token`, `unknown_token`, `bad_token`, `token_throttled`).
 */
export class ModeratorTokenVerifier {
  private readonly verified = new LRUCache<string, { moderatorId: string; digest: Buffer }>({ max: MAX_ENTRIES, ttl: VERIFIED_TTL_MS });
  private readonly prefixes = new LRUCache<string, PrefixState>({ max: MAX_ENTRIES, ttl: ROW_TTL_MS });
  private readonly badSecrets = new LRUCache<string, true>({ max: MAX_ENTRIES, ttl: NEGATIVE_TTL_MS });
  private readonly loads = new Map<string, Promise<PrefixState>>();
  private readonly inflight = new Map<string, Promise<boolean>>();
  private readonly budget = new VerifyBudget();
  /** How secrets were checked since start. */
  readonly counts: TokenCheckCounts = { cached: 0, sharedDigest: 0, argon2: 0, refused: 0 };

  /** @param shared the Redis digests every process shares; null where there is no Redis. */
  constructor(
    private readonly db: Db,
    private readonly shared: VerifiedDigests | null,
  ) {}

  /**
   * The account id of `token`.
   * @throws {AuthError} 401 `malformed_token`, `unknown_token` or `bad_token` (also for a rotated token),
   *   `token_throttled` (a secret nobody verified while the prefix's argon2 budget is spent).
   *   Postgres errors propagate.
   */
  async verify(token: string): Promise<string> {
    const parsed = parseModeratorToken(token);
    if (!parsed) throw new AuthError('malformed_token', 'a moderator token looks like gmod_<prefix>.<secret>');
    const { prefix, secret } = parsed;
    const digest = hash('sha256', secret, 'buffer');
    const cached = this.verified.get(prefix);
    if (cached) {
      this.counts.cached++;
      if (!timingSafeEqual(cached.digest, digest)) throw new AuthError('bad_token', 'invalid moderator token');
      return cached.moderatorId;
    }
    const state = await this.prefixState(prefix);
    if (!state.row) throw new AuthError('unknown_token', 'invalid moderator token');
    const row = state.row;
    const keyed = keyedDigest(row.tokenHash, secret);
    if (state.shared) {
      this.counts.sharedDigest++;
      if (!sameDigest(state.shared, keyed)) throw new AuthError('bad_token', 'invalid moderator token');
      return this.admit(prefix, row.id, digest);
    }
    const attempt = `${prefix}:${digest.toString('hex')}`;
    if (this.badSecrets.has(attempt)) throw new AuthError('bad_token', 'invalid moderator token');
    let pending = this.inflight.get(attempt);
    if (!pending) {
      this.counts.argon2++;
      pending = this.budget.run(prefix, () => argon2.verify(row.tokenHash, secret).catch(() => false)).finally(() => this.inflight.delete(attempt));
      this.inflight.set(attempt, pending);
    }
    let ok: boolean;
    try {
      ok = await pending;
    } catch (err) {
      if (!(err instanceof BudgetExceeded)) throw err;
      this.counts.refused++;
      throw new AuthError('token_throttled', 'too many invalid attempts for this token; try again later');
    }
    if (!ok) {
      this.badSecrets.set(attempt, true);
      throw new AuthError('bad_token', 'invalid moderator token');
    }
    state.shared = keyed;
    this.shared?.set(sharedDigestName(prefix), keyed).catch(() => undefined);
    return this.admit(prefix, row.id, digest);
  }

  /** Drops what is cached for account `moderatorId` (published change), or everything with `null`. */
  invalidate(moderatorId: string | null): void {
    if (moderatorId === null) {
      this.verified.clear();
      this.prefixes.clear();
      return;
    }
    for (const [prefix, entry] of this.verified.entries()) if (entry.moderatorId === moderatorId) this.verified.delete(prefix);
    for (const [prefix, state] of this.prefixes.entries()) if (state.row && state.row.id === moderatorId) this.prefixes.delete(prefix);
  }

  private admit(prefix: string, moderatorId: string, digest: Buffer): string {
    this.verified.set(prefix, { moderatorId, digest });
    return moderatorId;
  }

  private async prefixState(prefix: string): Promise<PrefixState> {
    const known = this.prefixes.get(prefix);
    if (known) return known;
    let loading = this.loads.get(prefix);
    if (!loading) {
      loading = (async () => {
        const [row, shared] = await Promise.all([
          this.db.moderator.findUnique({ where: { tokenPrefix: prefix }, select: { id: true, tokenHash: true } }),
          this.shared ? this.shared.get(sharedDigestName(prefix)).catch(() => null) : Promise.resolve(null),
        ]);
        const state: PrefixState = { row: row ?? false, shared };
        this.prefixes.set(prefix, state);
        return state;
      })().finally(() => this.loads.delete(prefix));
      this.loads.set(prefix, loading);
    }
    return loading;
  }
}
