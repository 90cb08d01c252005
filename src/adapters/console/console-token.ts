/**
 * The console's operator token (issue #7: "its own operator token"). One shared bearer token for the
 * whole console listener, separate from server keys: it grants every moderator action on every game, so
 * it is compared in constant time (src/adapters/console/console-auth.ts) and never logged when it was configured.
 * Since moderators sign in as themselves (issue #31) it is the operator's break-glass, recorded as
 * `operator`.
 *
 * Provision: `CONSOLE_TOKEN` (24–256 printable ASCII characters). When unset, the process generates a
 * random token at boot (32 bytes, base64url) and logs the console address with it once, at info level,
 * as a URL fragment (`http://host:port/#token=…`): the fragment never reaches a server log or a
 * Referer header, and the page moves it into sessionStorage and strips it from the address bar. A
 * generated token changes on every restart; production sets `CONSOLE_TOKEN`.
 */
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../errors.js';

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

/** 401 `console_unauthorized`: no credential, or a wrong operator token. */
export class ConsoleAuthError extends DomainError {
  constructor() {
    super('unauthenticated', 'console_unauthorized', 'console requests need a session (sign in), "Authorization: Bearer gmod_<moderator token>" or the operator token');
  }
}
