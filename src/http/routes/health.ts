/**
 * GET /healthz (the process is alive) and GET /readyz (Redis and Postgres answer; 503 otherwise).
 * Outside the game prefix and unauthenticated; both carry serverTime like every response.
 * /readyz names each dependency's state: 200 `{status:"ready", dependencies:{redis:"up",postgres:"up"}}`;
 * 503 the error envelope (`unavailable`, Retry-After) plus `status:"unavailable"` and the same
 * `dependencies` map with `"down"` for each one that did not answer (README "Dependency outages").
 */
import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Db } from '../../store/prisma.js';
import { UnavailableError } from '../errors.js';

type DependencyState = 'up' | 'down';

export function healthRoutes(deps: { redis: Redis; db: Db }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', serverTime: new Date().toISOString() });
  });
  router.get('/readyz', async (_req, res) => {
    const state = (ok: boolean): DependencyState => (ok ? 'up' : 'down');
    const [redis, postgres] = await Promise.all([
      deps.redis.ping().then(() => state(true), () => state(false)),
      deps.db.$queryRaw`select 1`.then(() => state(true), () => state(false)),
    ]);
    const dependencies = { redis, postgres };
    const serverTime = new Date().toISOString();
    if (redis === 'down' || postgres === 'down') {
      const err = new UnavailableError(`not ready: redis ${redis}, postgres ${postgres}`);
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      res.status(err.status).json({ status: 'unavailable', dependencies, error: { code: err.code, message: err.message, requestId: String(res.locals.requestId ?? '') }, serverTime });
      return;
    }
    res.json({ status: 'ready', dependencies, serverTime });
  });
  return router;
}
