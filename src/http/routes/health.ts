/**
 * GET /healthz (the process is alive) and GET /readyz (Redis and Postgres answer; 503 otherwise).
 * Outside the game prefix and unauthenticated; both carry serverTime like every response.
 */
import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Db } from '../../store/prisma.js';
import { sendError } from '../error-handler.js';
import { UnavailableError } from '../errors.js';

export function healthRoutes(deps: { redis: Redis; db: Db }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', serverTime: new Date().toISOString() });
  });
  router.get('/readyz', async (_req, res) => {
    const [redisOk, dbOk] = await Promise.all([
      deps.redis.ping().then(() => true, () => false),
      deps.db.$queryRaw`select 1`.then(() => true, () => false),
    ]);
    if (!redisOk || !dbOk) {
      sendError(res, new UnavailableError(`not ready: redis ${redisOk ? 'ok' : 'down'}, postgres ${dbOk ? 'ok' : 'down'}`));
      return;
    }
    res.json({ status: 'ready', redis: 'ok', postgres: 'ok', serverTime: new Date().toISOString() });
  });
  return router;
}
