/**
 * The console's operator token (issue #7: "its own operator token"). One shared bearer token for the
 * whole console listener, separate from server keys: it grants every moderator action on every game, so
 * it is compared in constant time and never logged when it was configured.
 *
 * Provision: `CONSOLE_TOKEN` (24–256 printable ASCII characters). When unset, the process generates a
 * random token at boot (32 bytes, base64url) and logs the console address with it once, at info level,
 * as a URL fragment (`http://host:port/#token=…`): the fragment never reaches a server log or a
 * Referer header, and the page moves it into sessionStorage and strips it from the address bar. A
 * generated token changes on every restart; production sets `CONSOLE_TOKEN`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { DomainError } from '../errors.js';

/** The token in force and whether this process made it up. */
export interface ConsoleToken {
  value: string;
  generated: boolean;
}

/** The configured token, or a fresh random one (32 bytes, base64url) when `configured` is null. */
export function resolveConsoleToken(configured: string | null): ConsoleToken {
  if (configured !== null) return { value: configured, generated: false };
  return { value: randomBytes(32).toString('base64url'), generated: true };
}

/** 401 `console_unauthorized`: missing or wrong operator token. */
export class ConsoleAuthError extends DomainError {
  constructor() {
    super('unauthenticated', 'console_unauthorized', 'console requests need "Authorization: Bearer <operator token>"');
  }
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * Middleware admitting requests that carry `Authorization: Bearer <token>`; anything else gets 401
 * `console_unauthorized` (envelope via the console's error handler). Digests of equal length are
 * compared, so the comparison time says nothing about the token.
 */
export function requireOperator(token: string): RequestHandler {
  const expected = digest(token);
  return (req, res, next) => {
    const header = req.get('authorization') ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!given || !timingSafeEqual(digest(given), expected)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="console"');
      return next(new ConsoleAuthError());
    }
    next();
  };
}
