/**
 * Server key format (spec: Resources › Server key): `svc_live_<prefix>.<secret>`. The prefix is public
 * (logs, audit trail, key list); the secret is shown once and stored only as an argon2id hash.
 */
import { randomBytes } from 'node:crypto';

const KEY_RE = /^svc_live_([a-z0-9]{12})\.([A-Za-z0-9_-]{43})$/;
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface ParsedKey {
  prefix: string;
  secret: string;
}

/** Parses a full key; returns null when it does not have the documented shape. */
export function parseServerKey(key: string): ParsedKey | null {
  const m = KEY_RE.exec(key);
  return m ? { prefix: m[1]!, secret: m[2]! } : null;
}

/** Generates a fresh key: 12-character lowercase prefix, 32 random bytes of secret (base64url, 43 chars). */
export function generateServerKey(): ParsedKey & { key: string } {
  const bytes = randomBytes(12);
  let prefix = '';
  for (const b of bytes) prefix += PREFIX_ALPHABET[b % PREFIX_ALPHABET.length];
  const secret = randomBytes(32).toString('base64url');
  return { prefix, secret, key: `svc_live_${prefix}.${secret}` };
}
