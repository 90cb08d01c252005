/**
 * Express app factory for the game listener: exactly the five `/api/v1/game/` endpoints plus
 * `/healthz` and `/readyz` (spec: Endpoints). Stateless: everything it knows lives in Redis and Postgres,
 * apart from the key-verification cache. Used by src/server.ts and by the tests (supertest).
 */
import express, { type Express, type Router } from 'express';
import type { Db } from './store/prisma';
import type { AppRedis } from './store/redis';
import type { Config } from './config';
import type { KeyVerifier } from './auth/key-verifier';
import { HeartbeatService } from './presence/heartbeat-service';
import { requestId } from './http/request-id';
import { errorHandler, notFoundHandler } from './http/error-handler';
import { heartbeatRoute } from './http/routes/heartbeat';
import { healthRoutes } from './http/routes/health';

export interface AppDeps {
  config: Readonly<Config>;
  redis: AppRedis;
  db: Db;
  verifier: KeyVerifier;
}

/** Builds the game listener app. Routes of later concerns register on `game` (see `gameRouter`). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use(healthRoutes(deps));

  // Raw bytes first: the signature covers the exact body; over the limit → 413 before any parsing.
  const raw = express.raw({ type: () => true, limit: deps.config.maxEnvelopeBytes });
  const game: Router = express.Router();
  const heartbeats = new HeartbeatService(deps.redis, deps.config.redisPrefix);
  game.post('/heartbeat', raw, heartbeatRoute({ verifier: deps.verifier, heartbeats }));
  app.use('/api/v1/game', game);

  app.use(notFoundHandler);
  app.use(errorHandler(deps.config.maxEnvelopeBytes));
  return app;
}
