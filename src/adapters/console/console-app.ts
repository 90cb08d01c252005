/**
 * Express app of the console listener (issue #7), a separate listener from the game one (which keeps
 * exactly the five game endpoints plus health). Bound to 127.0.0.1 by default (`CONSOLE_HOST`), port
 * `CONSOLE_PORT`; started by src/server.ts next to the game listener, so `/metrics` sees that API
 * process's own counters.
 *
 * | path | auth | what |
 * | --- | --- | --- |
 * | `GET /`, `/assets/*`, `/vendor/*` | none | the page (src/adapters/console/console-page.ts) |
 * | `GET /openapi.json` | none | the OpenAPI 3.1 document of the game endpoints (src/adapters/openapi/) |
 * | `GET /console/openapi.json` | none | the OpenAPI 3.1 document of the console API (src/adapters/openapi/console-openapi-document.ts) |
 * | `GET /healthz` | none | `{status, serverTime}` |
 * | `GET /metrics` | operator token | Prometheus text format (src/adapters/metrics/) |
 * | `GET /console/auth/providers`, `/console/auth/oidc/*` | none | OpenID Connect sign-in (src/adapters/console/console-oidc.ts) |
 * | `POST /console/api/session` | a moderator token in the body | sign-in: exchanges it for a session cookie (src/adapters/console/api/session-api.ts) |
 * | `/console/api/*` | operator token, moderator token or session cookie | JSON for the page (src/adapters/console/api/*.ts), and the live feed (Server-Sent Events, src/adapters/console/api/live-stream-api.ts) |
 *
 * Who may call what: src/adapters/console/console-auth.ts (credentials, CSRF) and the permission table
 * src/auth/moderators/console-permissions.ts (roles, tenancy; checked in src/adapters/console/api/console-request.ts).
 *
 * Errors use the same envelope as the game listener: `{error:{code,message,requestId}, serverTime}`
 * (401, 403 `forbidden` / `csrf_refused`, 400, 404, 429, 503; never a stack trace).
 */
import express, { type Express } from 'express';
import type { Registry } from 'prom-client';
import { requestId } from '../http/request-id.js';
import { errorHandler, notFoundHandler } from '../http/error-handler.js';
import { createConsoleAuth, type ConsoleAuth } from './console-auth.js';
import { authorizeGlobal } from './api/console-request.js';
import { sessionApi, signInApi } from './api/session-api.js';
import { moderatorsApi } from './api/moderators-api.js';
import { oidcApi } from './console-oidc.js';
import { VerifiedDigests } from '../../auth/verified-digests.js';
import { consolePage, securityHeaders } from './console-page.js';
import type { ConsoleServices } from './console-services.js';
import { liveApi } from './api/live-api.js';
import { moderationApi } from './api/moderation-api.js';
import { doorsApi } from './api/doors-api.js';
import { bansApi } from './api/bans-api.js';
import { healthApi } from './api/health-api.js';
import { chartsApi } from './api/charts-api.js';
import { gameSettingsApi } from './api/game-settings-api.js';
import { liveStreamApi } from './api/live-stream-api.js';
import type { LiveHub } from './live/live-hub.js';

/** Largest console request body, bytes (a ban reason or a command payload; the command cap is 2 KiB). */
export const CONSOLE_BODY_LIMIT_BYTES = 64 * 1024;

export interface ConsoleAppDeps {
  services: ConsoleServices;
  /** The operator token (src/adapters/console/console-token.ts). */
  token: string;
  /** Served at /metrics. */
  metrics: Registry;
  /** Served at /openapi.json. */
  openapi: object;
  /** Served at /console/openapi.json: the console API's own document (src/adapters/openapi/console-openapi-document.ts). */
  consoleOpenapi?: object;
  /** The process's live feed; without it `GET …/live/stream` is 404 and the page polls. */
  live?: LiveHub;
  /**
   * The process's console authentication (src/adapters/console/console-auth.ts), wired to the invalidation channel
   * by the caller; made here over `services` when absent (then nothing revokes its caches but their TTLs).
   */
  auth?: ConsoleAuth;
  /** Mark the session cookie `Secure` even when the request reached this process over plain HTTP (TLS ends at a proxy). */
  secureCookies?: boolean;
  /** OpenID Connect sign-in (config `oidc`) and the console's public address; without both there is none. */
  oidc?: { issuer: string; clientId: string; clientSecret: string } | null;
  publicUrl?: string | null;
}

/** Builds the console listener's app. */
export function createConsoleApp(deps: ConsoleAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestId);
  app.use(securityHeaders);
  const auth = deps.auth ?? createConsoleAuth(deps.token, deps.services);
  const secureCookies = deps.secureCookies ?? false;

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', serverTime: new Date().toISOString() });
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(deps.openapi);
  });
  if (deps.consoleOpenapi) {
    const doc = deps.consoleOpenapi;
    app.get('/console/openapi.json', (_req, res) => {
      res.json(doc);
    });
  }
  app.get('/metrics', auth.authenticate, async (_req, res) => {
    authorizeGlobal(res, 'operator.only');
    res.setHeader('Cache-Control', 'no-store');
    res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
  });

  const api = express.Router();
  api.use(express.json({ limit: CONSOLE_BODY_LIMIT_BYTES }), (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  const { db, redis, keySpace } = deps.services;
  api.use(signInApi({ db, auth, secureCookies }));
  api.use(auth.authenticate);
  api.use(sessionApi({ db, auth, secureCookies }));
  const reads = { db, redis, keySpace };
  if (deps.live) api.use(liveStreamApi({ db, hub: deps.live, auth }));
  api.use(moderatorsApi({ db, redis, keySpace, digests: new VerifiedDigests(redis, keySpace) }));
  api.use(liveApi(reads), moderationApi(deps.services), doorsApi(deps.services), bansApi(deps.services), healthApi(reads), chartsApi(reads), gameSettingsApi(deps.services));
  app.use('/console/api', api);
  app.use(oidcApi({ oidc: deps.oidc ?? null, publicUrl: deps.publicUrl ?? null, db, redis, keySpace, auth, secureCookies }));

  app.use(consolePage());
  app.use(notFoundHandler);
  app.use(errorHandler(CONSOLE_BODY_LIMIT_BYTES));
  return app;
}
