/**
 * Who is calling the console API (issue #31), decided once per request and kept in `res.locals.caller`:
 *
 * | credential | caller |
 * | --- | --- |
 * | `Authorization: Bearer <CONSOLE_TOKEN>` | the operator (break-glass; every workspace; recorded as `operator`) |
 * | `Authorization: Bearer gmod_<prefix>.<secret>` | that moderator account (scripts, bots) |
 * | cookie {@link SESSION_COOKIE} | the accounts the session signed in as (src/auth/moderators/console-sessions.ts) |
 *
 * Anything else is 401 with the envelope: `console_unauthorized` (no credential, wrong operator token),
 * `malformed_token` / `unknown_token` / `bad_token` / `token_throttled` (a moderator token),
 * `moderator_disabled`, `session_expired` (unknown, expired or tampered cookie), `session_revoked` (every
 * account of the session was disabled or its token rotated since sign-in). Nothing secret is logged.
 *
 * CSRF (cookie sessions only; a bearer token is never sent by a browser on its own): the cookie is
 * `SameSite=Strict`, and a state-changing request (anything but GET/HEAD/OPTIONS) must also come from the
 * console's own origin (`Sec-Fetch-Site: same-origin` when the browser sends it, `Origin` equal to the
 * console's host when it sends that) and echo the session's synchronizer token in `X-CSRF-Token`;
 * otherwise 403 `csrf_refused`. Layered because SameSite alone trusts every sibling subdomain.
 *
 * Revocation: {@link ConsoleAuth.invalidate} takes the messages of the auth invalidation channel
 * (`moderator:<id>`, `all`): the account's cached state and token are dropped, so the next request on
 * this process reads Postgres, and that account's open live streams are closed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { AuthError, DomainError } from '../../errors.js';
import type { Redis } from 'ioredis';
import type { Db } from '../../store/prisma.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';
import { VerifiedDigests } from '../../auth/verified-digests.js';
import { ModeratorDirectory, type ModeratorAccount } from '../../auth/moderators/moderator-directory.js';
import { ModeratorTokenVerifier } from '../../auth/moderators/moderator-verifier.js';
import { ConsoleSessions, type ConsoleSession } from '../../auth/moderators/console-sessions.js';
import { MODERATOR_TOKEN_MARKER } from '../../auth/moderators/moderator-token.js';
import { ConsoleAuthError } from './console-token.js';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'gis_console_session';

/** The authenticated caller of a console request. */
export type ConsoleCaller =
  | { kind: 'operator' }
  | {
      kind: 'moderator';
      /** The accounts the caller acts as (one per workspace), each enabled and current. */
      accounts: ModeratorAccount[];
      /** The session and its cookie value, when signed in by cookie. */
      session: { id: string; data: ConsoleSession } | null;
    };

/** 403 `csrf_refused`: a cookie-authenticated change not proven to come from the console page. */
export class CsrfError extends DomainError {
  constructor(reason: string) {
    super('forbidden', 'csrf_refused', `cross-site request refused: ${reason}`);
  }
}

/** Reads cookie `name` from the Cookie header; undefined when absent. */
export function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses a request that a browser says comes from another site: `Sec-Fetch-Site` other than
 * `same-origin`/`none`, or an `Origin` whose host is not the request's Host.
 * @throws {CsrfError}
 */
export function requireSameOrigin(req: Request): void {
  const site = req.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') throw new CsrfError(`Sec-Fetch-Site is ${site}`);
  const origin = req.get('origin');
  if (origin !== undefined) {
    if (!URL.canParse(origin) || new URL(origin).host !== req.get('host')) throw new CsrfError('Origin is not this console');
  }
}

/** A process's console authentication: the operator token, moderator tokens, sessions and open streams. */
export class ConsoleAuth {
  private readonly operator: Buffer;
  private readonly streams = new Map<string, Set<() => void>>();

  constructor(
    operatorToken: string,
    readonly deps: { tokens: ModeratorTokenVerifier; directory: ModeratorDirectory; sessions: ConsoleSessions },
  ) {
    this.operator = digest(operatorToken);
  }

  /** Middleware: sets `res.locals.caller` or fails with 401/403 (see the module comment). */
  readonly authenticate: RequestHandler = (req, res, next) => {
    this.callerOf(req).then((caller) => {
      res.locals.caller = caller;
      next();
    }, next);
  };

  /**
   * The caller of `req`.
   * @throws {AuthError|ConsoleAuthError} 401. @throws {CsrfError} 403. Redis/Postgres errors propagate.
   */
  async callerOf(req: Request): Promise<ConsoleCaller> {
    const header = req.get('authorization');
    if (header !== undefined) {
      const given = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
      if (given.startsWith(MODERATOR_TOKEN_MARKER)) return { kind: 'moderator', accounts: [await this.accountOfToken(given)], session: null };
      if (given && timingSafeEqual(digest(given), this.operator)) return { kind: 'operator' };
      throw new ConsoleAuthError();
    }
    const id = cookieValue(req, SESSION_COOKIE);
    if (id === undefined) throw new ConsoleAuthError();
    const data = await this.deps.sessions.get(id);
    if (!data) throw new AuthError('session_expired', 'the console session has expired or is not valid; sign in again');
    const accounts = await this.current(data);
    if (!accounts.length) {
      await this.deps.sessions.delete(id);
      throw new AuthError('session_revoked', 'the accounts of this session were disabled or their tokens rotated; sign in again');
    }
    if (!SAFE_METHODS.has(req.method)) {
      requireSameOrigin(req);
      const csrf = req.get('x-csrf-token') ?? '';
      if (!timingSafeEqual(digest(csrf), digest(data.csrf))) throw new CsrfError('X-CSRF-Token is missing or wrong');
    }
    return { kind: 'moderator', accounts, session: { id, data } };
  }

  /**
   * The enabled account of personal access token `token`.
   * @throws {AuthError} 401 as for a bearer token (see the module comment).
   */
  async accountOfToken(token: string): Promise<ModeratorAccount> {
    const account = await this.deps.directory.get(await this.deps.tokens.verify(token));
    if (!account) throw new AuthError('unknown_token', 'invalid moderator token');
    if (account.disabled) throw new AuthError('moderator_disabled', 'this moderator account is disabled');
    return account;
  }

  /** The session's accounts that are still enabled and signed in under their current credential epoch. */
  async current(session: ConsoleSession): Promise<ModeratorAccount[]> {
    const rows = await Promise.all(session.accounts.map((a) => this.deps.directory.get(a.id)));
    return rows.filter((row, i): row is ModeratorAccount => row !== null && !row.disabled && row.credentialEpoch === session.accounts[i]!.epoch);
  }

  /**
   * Registers `close` as an open live stream of `accountIds`; returns the function that unregisters it.
   * A published change to any of the accounts calls `close`.
   */
  trackStream(accountIds: readonly string[], close: () => void): () => void {
    for (const id of accountIds) {
      let set = this.streams.get(id);
      if (!set) this.streams.set(id, (set = new Set()));
      set.add(close);
    }
    return () => {
      for (const id of accountIds) {
        const set = this.streams.get(id);
        set?.delete(close);
        if (set && !set.size) this.streams.delete(id);
      }
    };
  }

  /** Handles a message of the auth invalidation channel: `moderator:<id>` or `all`; others are ignored. */
  invalidate(message: string): void {
    if (message === 'all') {
      this.deps.directory.invalidate(null);
      this.deps.tokens.invalidate(null);
      return;
    }
    const [kind, id] = message.split(':', 2);
    if (kind !== 'moderator' || !id) return;
    this.deps.directory.invalidate(id);
    this.deps.tokens.invalidate(id);
    for (const close of [...(this.streams.get(id) ?? [])]) close();
  }
}

/** The caller that {@link ConsoleAuth.authenticate} stored on `res`. */
export function callerOf(res: Response): ConsoleCaller {
  return res.locals.caller as ConsoleCaller;
}

/** The process's {@link ConsoleAuth} over its Postgres and Redis. */
export function createConsoleAuth(operatorToken: string, deps: { db: Db; redis: Redis; keySpace: KeySpace }): ConsoleAuth {
  return new ConsoleAuth(operatorToken, {
    tokens: new ModeratorTokenVerifier(deps.db, new VerifiedDigests(deps.redis, deps.keySpace)),
    directory: new ModeratorDirectory(deps.db),
    sessions: new ConsoleSessions(deps.redis, deps.keySpace),
  });
}

/**
 * Wires `auth` to the auth invalidation channel on `subscriber` (a dedicated connection: it enters
 * subscriber mode). Messages published while the connection was down are lost, so every reconnect
 * forgets everything cached.
 */
export async function subscribeConsoleInvalidations(subscriber: Redis, auth: ConsoleAuth, keySpace: KeySpace): Promise<void> {
  const channel = keySpace.global.authChannel();
  subscriber.on('message', (ch: string, message: string) => {
    if (ch === channel) auth.invalidate(message);
  });
  subscriber.on('ready', () => auth.invalidate('all'));
  await subscriber.subscribe(channel);
}
