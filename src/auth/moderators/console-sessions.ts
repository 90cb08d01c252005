/**
 * Console sign-in sessions, held server-side in Redis (issue #31). The browser holds only a random id
 * (32 bytes, base64url) in an HttpOnly cookie; Redis holds the session under SHA-256 of that id, so a
 * copy of the store yields no usable cookie. A session expires after {@link IDLE_MS} without use and
 * {@link ABSOLUTE_MS} after sign-in, whichever comes first; sign-out deletes it.
 *
 * A session names the accounts it signed in as, each with the account's `credentialEpoch` at the time:
 * when an account is disabled or its token rotated the epoch moves on and the session stops acting as it
 * (src/adapters/console/console-auth.ts). It also holds the CSRF token the page must echo on every change.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { KeySpace } from '../../store/keyspace/key-space.js';

/** A session ends this long after its last use, ms (12 h). */
export const IDLE_MS = 12 * 3_600_000;
/** A session ends this long after sign-in whatever its use, ms (7 days). */
export const ABSOLUTE_MS = 7 * 24 * 3_600_000;
/** The idle expiry is pushed back at most this often, ms (saves a write per request). */
export const TOUCH_EVERY_MS = 60_000;

/** One account a session acts as, with its credential epoch at sign-in. */
export interface SessionAccount {
  id: string;
  epoch: number;
}

/** What a session holds. */
export interface ConsoleSession {
  /** How it was opened: a pasted personal access token, or an OpenID Connect sign-in. */
  via: 'token' | 'oidc';
  accounts: SessionAccount[];
  /** The identity of an OIDC sign-in. */
  identity?: { issuer: string; subject: string };
  /** Synchronizer token the page sends in `X-CSRF-Token` (base64url, 32 bytes). */
  csrf: string;
  /** ms since the epoch. */
  createdAt: number;
  /** Last time the idle expiry was pushed back, ms since the epoch. */
  touchedAt: number;
}

const ID_RE = /^[A-Za-z0-9_-]{43}$/;
const digestOf = (id: string): string => createHash('sha256').update(id).digest('hex');

/** Creates, reads, refreshes and deletes sessions. */
export class ConsoleSessions {
  constructor(
    private readonly redis: Redis,
    private readonly keySpace: KeySpace,
  ) {}

  /** Opens a session; returns the cookie value (shown to the browser only) and the session. */
  async create(input: Pick<ConsoleSession, 'via' | 'accounts' | 'identity'>, nowMs = Date.now()): Promise<{ id: string; session: ConsoleSession }> {
    const id = randomBytes(32).toString('base64url');
    const session: ConsoleSession = { ...input, csrf: randomBytes(32).toString('base64url'), createdAt: nowMs, touchedAt: nowMs };
    await this.redis.set(this.keySpace.global.consoleSession(digestOf(id)), JSON.stringify(session), 'PX', IDLE_MS);
    return { id, session };
  }

  /**
   * The live session of cookie value `id`, its idle expiry pushed back; null when the value is malformed,
   * unknown, expired (idle or absolute) or tampered with.
   */
  async get(id: string, nowMs = Date.now()): Promise<ConsoleSession | null> {
    if (!ID_RE.test(id)) return null;
    const key = this.keySpace.global.consoleSession(digestOf(id));
    const raw = await this.redis.get(key);
    if (!raw) return null;
    let session: ConsoleSession;
    try {
      session = JSON.parse(raw) as ConsoleSession;
    } catch {
      return null;
    }
    const left = session.createdAt + ABSOLUTE_MS - nowMs;
    if (left <= 0) {
      await this.redis.del(key);
      return null;
    }
    if (nowMs - session.touchedAt >= TOUCH_EVERY_MS) {
      session.touchedAt = nowMs;
      await this.redis.set(key, JSON.stringify(session), 'PX', Math.min(IDLE_MS, left));
    }
    return session;
  }

  /** Ends the session of cookie value `id` (no-op when there is none). */
  async delete(id: string): Promise<void> {
    if (ID_RE.test(id)) await this.redis.del(this.keySpace.global.consoleSession(digestOf(id)));
  }
}
