/**
 * Resolves a personal access token `gmod_<prefix>.<secret>` to its moderator account id, verified the
 * way server keys are (src/auth/key-verifier.ts, issue #16) by the same core, so a flood of wrong secrets
 * on a (public) prefix never locks the real token out:
 * 1. the process cache: SHA-256 of the secret, one constant-time compare, trusted for {@link VERIFIED_TTL_MS};
 * 2. {@link SecretVerifier} (src/auth/secret-verifier.ts): the shared keyed digest in Redis (under
 *    `gmod_<prefix>`), written when the token is issued, refuses a wrong secret with one HMAC, no argon2;
 *    only without a shared digest (Redis lost it), argon2id inside the argon2 budget, single-flight per
 *    (prefix, secret), wrong secrets negative-cached.
 * Only argon2 can be throttled, so wrong secrets never refuse a right one the service has seen.
 * Rotation and disabling publish `moderator:<id>`; {@link ModeratorTokenVerifier.invalidate} drops that
 * account's entries.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../store/prisma.js';
import { AuthError } from '../../errors.js';
import type { VerifiedDigests } from '../verified-digests.js';
import { SecretVerifier } from '../secret-verifier.js';
import { parseModeratorToken, sharedDigestName } from './moderator-token.js';

/** A token as the verifier needs it: its account and the argon2id hash of its secret. */
interface TokenRow {
  id: string;
  tokenHash: string;
}

/** How long a verified token is trusted from the process cache before the row is read again, ms. */
export const VERIFIED_TTL_MS = 30_000;
/** Verified tokens one process remembers. */
const MAX_VERIFIED = 10_000;

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
  private readonly verified = new LRUCache<string, { moderatorId: string; digest: Buffer }>({ max: MAX_VERIFIED, ttl: VERIFIED_TTL_MS });
  private readonly secrets: SecretVerifier<TokenRow>;
  /** How secrets were checked since start (`argon2`: verifies asked of the budget, refused ones included). */
  readonly counts: TokenCheckCounts = { cached: 0, sharedDigest: 0, argon2: 0, refused: 0 };

  /** @param shared the Redis digests every process shares; null where there is no Redis. */
  constructor(db: Db, shared: VerifiedDigests | null) {
    this.secrets = new SecretVerifier<TokenRow>(
      {
        load: (prefix) => db.moderator.findUnique({ where: { tokenPrefix: prefix }, select: { id: true, tokenHash: true } }),
        secretHash: (row) => row.tokenHash,
        sharedName: sharedDigestName,
      },
      shared,
      {
        unknown: () => new AuthError('unknown_token', 'invalid moderator token'),
        bad: () => new AuthError('bad_token', 'invalid moderator token'),
        throttled: () => new AuthError('token_throttled', 'too many invalid attempts for this token; try again later'),
      },
      {
        checked: (via) => {
          if (via === 'shared-digest') this.counts.sharedDigest++;
        },
        argon2Started: () => this.counts.argon2++,
        refused: () => this.counts.refused++,
      },
    );
  }

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
    const row = await this.secrets.verify(prefix, secret, digest);
    this.verified.set(prefix, { moderatorId: row.id, digest });
    return row.id;
  }

  /** Drops what is cached for account `moderatorId` (published change), or everything with `null`. */
  invalidate(moderatorId: string | null): void {
    if (moderatorId === null) {
      this.verified.clear();
      this.secrets.forgetAll();
      return;
    }
    for (const [prefix, entry] of this.verified.entries()) if (entry.moderatorId === moderatorId) this.verified.delete(prefix);
    this.secrets.forgetWhere((row) => row.id === moderatorId);
  }
}
