/**
 * Sign-in to the console with OpenID Connect (issue #31): authorization code flow with PKCE (S256),
 * `state` and `nonce`, through `openid-client`, against any issuer set by OIDC_ISSUER / OIDC_CLIENT_ID /
 * OIDC_CLIENT_SECRET (Sign in with Roblox, a Discord bridge, a studio's own IdP). The redirect URI is
 * `<CONSOLE_PUBLIC_URL>/console/auth/oidc/callback`, registered with the IdP.
 *
 * - `GET /console/auth/providers` → `{ oidc: boolean, serverTime }`: whether the page offers the button.
 * - `GET /console/auth/oidc/start[?invite=<code>]` → 302 to the IdP. The PKCE verifier, nonce and
 *   invitation code wait in Redis under the random `state` for 10 minutes, read once.
 * - `GET /console/auth/oidc/callback` → 302 to `/` with the session cookie when the identity (issuer,
 *   subject) is linked to at least one enabled account (`admin moderators link`, or the invitation code
 *   given at start, redeemed here: src/auth/moderators/moderator-invitations.ts); otherwise 302 to
 *   `/?signin_error=<code>` where the page shows the reason: `invalid_state` (unknown, reused or expired
 *   state), `oidc_failed` (the IdP's error, a wrong nonce or issuer, a bad code or token: openid-client
 *   checks them all), `identity_not_linked`. Nothing is changed and nothing secret is logged on failure.
 *
 * Discovery runs on first use and again after a failure, so a console starts while the IdP is down.
 * `http:` issuers are accepted only on loopback addresses (a local test provider); anything else must be
 * `https:`.
 */
import { Router, type Request, type Response } from 'express';
import * as client from 'openid-client';
import type { Redis } from 'ioredis';
import type { Db } from '../../store/prisma.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';
import { log } from '../../log.js';
import { accountsOfIdentity, redeemInvitation } from '../../auth/moderators/moderator-invitations.js';
import type { ModeratorAccount } from '../../auth/moderators/moderator-directory.js';
import type { ConsoleAuth } from './console-auth.js';
import { openSession } from './api/session-api.js';

/** How long a started sign-in may take, seconds. */
export const LOGIN_TTL_SECONDS = 600;
/** Path of the redirect URI on the console. */
export const CALLBACK_PATH = '/console/auth/oidc/callback';

/** What a started sign-in left in Redis. */
interface PendingLogin {
  verifier: string;
  nonce: string;
  invite: string | null;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The sign-in routes; `oidc` null (not configured) leaves only `/console/auth/providers` answering false. */
export function oidcApi(deps: {
  oidc: { issuer: string; clientId: string; clientSecret: string } | null;
  publicUrl: string | null;
  db: Db;
  redis: Redis;
  keySpace: KeySpace;
  auth: ConsoleAuth;
  secureCookies: boolean;
}): Router {
  const router = Router();
  const { oidc, publicUrl } = deps;
  router.get('/console/auth/providers', (_req, res) => {
    res.json({ oidc: oidc !== null && publicUrl !== null, serverTime: new Date().toISOString() });
  });
  if (!oidc || !publicUrl) return router;

  const issuer = new URL(oidc.issuer);
  const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname);
  const redirectUri = `${publicUrl}${CALLBACK_PATH}`;
  let discovered: Promise<client.Configuration> | null = null;
  const configuration = (): Promise<client.Configuration> => {
    discovered ??= client
      .discovery(issuer, oidc.clientId, oidc.clientSecret, undefined, insecure ? { execute: [client.allowInsecureRequests] } : undefined)
      .catch((err: unknown) => {
        discovered = null;
        throw err;
      });
    return discovered;
  };
  const fail = (res: Response, code: string) => {
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, `/?signin_error=${code}`);
  };

  router.get('/console/auth/oidc/start', async (req, res) => {
    const config = await configuration();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    const invite = typeof req.query.invite === 'string' && req.query.invite.trim() ? req.query.invite.trim().slice(0, 64) : null;
    const pending: PendingLogin = { verifier, nonce, invite };
    await deps.redis.set(deps.keySpace.global.oidcLogin(state), JSON.stringify(pending), 'EX', LOGIN_TTL_SECONDS);
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, url.href);
  });

  router.get(CALLBACK_PATH, async (req: Request, res) => {
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const raw = /^[A-Za-z0-9_-]{1,128}$/.test(state) ? await deps.redis.getdel(deps.keySpace.global.oidcLogin(state)) : null;
    if (!raw) return fail(res, 'invalid_state');
    const pending = JSON.parse(raw) as PendingLogin;
    let claims: { iss: string; sub: string };
    try {
      const tokens = await client.authorizationCodeGrant(await configuration(), new URL(req.originalUrl, publicUrl), {
        pkceCodeVerifier: pending.verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const c = tokens.claims();
      if (!c) throw new Error('no ID token');
      claims = { iss: c.iss, sub: c.sub };
    } catch (err) {
      // The library's message names what failed (state, nonce, issuer, code); never a token.
      log.warn('oidc sign-in refused', { reason: err instanceof Error ? err.message.slice(0, 200) : 'unknown' });
      return fail(res, 'oidc_failed');
    }
    const linked = await accountsOfIdentity(deps.db, claims.iss, claims.sub);
    if (pending.invite) {
      const redeemed = await redeemInvitation(deps.db, pending.invite, claims.iss, claims.sub);
      if (redeemed && !linked.includes(redeemed)) linked.push(redeemed);
    }
    const accounts = (await Promise.all(linked.map((id) => deps.auth.deps.directory.get(id)))).filter((a): a is ModeratorAccount => a !== null && !a.disabled);
    if (!accounts.length) return fail(res, 'identity_not_linked');
    await openSession(deps.auth, req, res, deps.secureCookies, { via: 'oidc', accounts, identity: { issuer: claims.iss, subject: claims.sub } });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, '/');
  });
  return router;
}
