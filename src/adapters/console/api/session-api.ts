/**
 * Signing in to the console in the browser without an identity provider, and who is signed in (issue #31):
 *
 * - `POST /console/api/session` body `{ token: "gmod_…" }` → 201 `{ caller, csrfToken, serverTime }` and
 *   the session cookie (`HttpOnly; SameSite=Strict; Path=/`, `Secure` over TLS; Max-Age 7 days, the
 *   absolute expiry). The personal access token is pasted once and exchanged for a server-side session
 *   (src/auth/moderators/console-sessions.ts); the page never stores it. Refused from another origin
 *   (403 `csrf_refused`: no signing a victim's browser in as someone else). 400 `invalid_request` for a
 *   body without a token; 401 `malformed_token`, `unknown_token`, `bad_token`, `token_throttled`,
 *   `moderator_disabled`.
 * - `GET /console/api/session` (any credential) → `{ caller, csrfToken, serverTime }`: `caller` is
 *   `{ kind: "operator", permissions }` or `{ kind: "moderator", via, accounts: [{ id, name, role,
 *   workspaceId, workspaceName, permissions }] }`; `csrfToken` (sessions only, else null) is what the
 *   page sends in `X-CSRF-Token` on every change.
 * - `DELETE /console/api/session` (cookie, with the CSRF token) → 204; the session is deleted in Redis and
 *   the cookie cleared.
 */
import { Router, type Request, type Response } from 'express';
import type { Db } from '../../../store/prisma.js';
import { ValidationError } from '../../../errors.js';
import { ABSOLUTE_MS } from '../../../auth/moderators/console-sessions.js';
import { permissionsOf, PERMISSIONS, type Permission } from '../../../auth/moderators/console-permissions.js';
import type { ModeratorAccount } from '../../../auth/moderators/moderator-directory.js';
import { callerOf, requireSameOrigin, SESSION_COOKIE, type ConsoleAuth, type ConsoleCaller } from '../console-auth.js';

/** Cookie attributes of the session cookie; `Secure` when the console is served over TLS. */
export function sessionCookieOptions(req: Request, secure: boolean) {
  return { httpOnly: true, sameSite: 'strict' as const, path: '/', secure: secure || req.secure };
}

/** The body of `GET /session` for `caller`. */
async function describe(db: Db, caller: ConsoleCaller) {
  if (caller.kind === 'operator') return { kind: 'operator' as const, permissions: Object.keys(PERMISSIONS) as Permission[] };
  const names = await db.workspace.findMany({ where: { id: { in: caller.accounts.map((a) => a.workspaceId) } }, select: { id: true, name: true } });
  const nameOf = new Map(names.map((w) => [w.id, w.name]));
  return {
    kind: 'moderator' as const,
    via: caller.session ? caller.session.data.via : ('bearer' as const),
    accounts: caller.accounts.map((a: ModeratorAccount) => ({
      id: a.id,
      name: a.name,
      role: a.role,
      workspaceId: a.workspaceId,
      workspaceName: nameOf.get(a.workspaceId) ?? null,
      permissions: permissionsOf(a.role),
    })),
  };
}

/**
 * Opens a session for `accounts` and sets its cookie on `res`; resolves to the CSRF token.
 * Shared with the OpenID Connect callback.
 */
export async function openSession(
  auth: ConsoleAuth,
  req: Request,
  res: Response,
  secure: boolean,
  input: { via: 'token' | 'oidc'; accounts: ModeratorAccount[]; identity?: { issuer: string; subject: string } },
): Promise<{ id: string; csrf: string }> {
  const { id, session } = await auth.deps.sessions.create({
    via: input.via,
    accounts: input.accounts.map((a) => ({ id: a.id, epoch: a.credentialEpoch })),
    ...(input.identity ? { identity: input.identity } : {}),
  });
  res.cookie(SESSION_COOKIE, id, { ...sessionCookieOptions(req, secure), maxAge: ABSOLUTE_MS });
  return { id, csrf: session.csrf };
}

/** `POST /session`: mounted before the console's authentication (it is how a caller gets a credential). */
export function signInApi(deps: { db: Db; auth: ConsoleAuth; secureCookies: boolean }): Router {
  const router = Router();
  router.post('/session', async (req, res) => {
    requireSameOrigin(req);
    const token: unknown = (req.body as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || !token.trim()) throw new ValidationError('body must be {"token": "gmod_…"}');
    const account = await deps.auth.accountOfToken(token.trim());
    const { id, csrf } = await openSession(deps.auth, req, res, deps.secureCookies, { via: 'token', accounts: [account] });
    const caller: ConsoleCaller = { kind: 'moderator', accounts: [account], session: { id, data: (await deps.auth.deps.sessions.get(id))! } };
    res.status(201).json({ caller: await describe(deps.db, caller), csrfToken: csrf, serverTime: new Date().toISOString() });
  });
  return router;
}

/** `GET /session` and `DELETE /session`: mounted after the console's authentication. */
export function sessionApi(deps: { db: Db; auth: ConsoleAuth; secureCookies: boolean }): Router {
  const router = Router();
  router.get('/session', async (_req, res) => {
    const caller = callerOf(res);
    const csrfToken = caller.kind === 'moderator' && caller.session ? caller.session.data.csrf : null;
    res.json({ caller: await describe(deps.db, caller), csrfToken, serverTime: new Date().toISOString() });
  });
  router.delete('/session', async (req, res) => {
    const caller = callerOf(res);
    if (caller.kind === 'moderator' && caller.session) await deps.auth.deps.sessions.delete(caller.session.id);
    res.clearCookie(SESSION_COOKIE, sessionCookieOptions(req, deps.secureCookies));
    res.status(204).end();
  });
  return router;
}
