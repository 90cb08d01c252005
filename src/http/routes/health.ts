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
import { UnavailableError } from '../../errors.js';
import { applyErrorHead, errorEnvelope } from '../error-status.js';

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
    if (redis === 'down' || postgres === 'down') {
      const err = new UnavailableError(`not ready: redis ${redis}, postgres ${postgres}`);
      applyErrorHead(res, err);
      res.json({ status: 'unavailable', dependencies, ...errorEnvelope(res, err) });
      return;
    }
    res.json({ status: 'ready', dependencies, serverTime: new Date().toISOString() });
  });
  return router;
}
