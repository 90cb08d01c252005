/**
 * Personal access token of a console moderator (issue #31): `gmod_<prefix>.<secret>`, the same shape as
 * a server key (src/auth/server-key.ts) under its own marker, so neither can be mistaken for the other.
 * The prefix is public (the account list, the audit trail); the secret, 32 random bytes, is shown once
 * and stored only as an argon2id hash.
 */
import { randomBytes } from 'node:crypto';

const TOKEN_RE = /^gmod_([a-z0-9]{12})\.([A-Za-z0-9_-]{43})$/;
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** What every moderator token starts with. */
export const MODERATOR_TOKEN_MARKER = 'gmod_';

/** A token split into its public prefix and its secret. */
export interface ParsedModeratorToken {
  prefix: string;
  secret: string;
}

/** Parses a full token; null when it does not have the documented shape. */
export function parseModeratorToken(token: string): ParsedModeratorToken | null {
  const m = TOKEN_RE.exec(token);
  return m ? { prefix: m[1]!, secret: m[2]! } : null;
}

/** A fresh token: 12-character lowercase prefix, 32 random bytes of secret (base64url, 43 characters). */
export function generateModeratorToken(): ParsedModeratorToken & { token: string } {
  let prefix = '';
  for (const b of randomBytes(12)) prefix += PREFIX_ALPHABET[b % PREFIX_ALPHABET.length];
  const secret = randomBytes(32).toString('base64url');
  return { prefix, secret, token: `${MODERATOR_TOKEN_MARKER}${prefix}.${secret}` };
}

/**
 * The name under which the token's verified digest is shared in Redis (src/auth/verified-digests.ts):
 * marked, so a moderator prefix never shares a slot with a server key's prefix.
 */
export function sharedDigestName(prefix: string): string {
  return `${MODERATOR_TOKEN_MARKER}${prefix}`;
}
