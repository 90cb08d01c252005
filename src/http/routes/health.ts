/**
 * GET /healthz (the process is alive) and GET /readyz (Redis and Postgres answer; 503 otherwise).
 * Outside the game prefix and unauthenticated; both carry serverTime like every response.
 * /readyz names each dependency's state: 200 `{status:"ready", dependencies:{redis:"up",postgres:"up"}}`;
 * 503 the error envelope (`unavailable`, Retry-After) plus `status:"unavailable"` and the same
 * `dependencies` map with `"down"` for each one that did not answer (README "Dependency outages").
 *
 * When the process runs a Redis persistence check (src/store/redis-persistence.ts; the API always does),
 * both answers also carry `redisPersistence: {mode, durable, durability, checkedAt}`: `mode` one of
 * `aof-always|aof-everysec|aof-no|rdb|none|unknown`, `durability` the REDIS_DURABILITY policy, `checkedAt`
 * the time of the reading (ISO 8601, null before the first). Under `required`, a reading that is not
 * durable (Redis re-configured or restarted with less since boot) makes /readyz 503 as well
 * (README "Durability").
 */
import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Db } from '../../store/prisma.js';
import type { PersistenceStatus } from '../../store/redis-persistence.js';
import { UnavailableError } from '../../errors.js';
import { applyErrorHead, errorEnvelope } from '../error-status.js';

type DependencyState = 'up' | 'down';

/** Routes of the health endpoints; `persistence` adds the Redis persistence reading to /readyz. */
export function healthRoutes(deps: { redis: Redis; db: Db; persistence?: PersistenceStatus }): Router {
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
    const p = deps.persistence;
    const reading = p?.current;
    const redisPersistence = p && reading ? { mode: reading.mode, durable: reading.durable, durability: p.durability, checkedAt: reading.checkedAt } : undefined;
    const belowRequired = p?.durability === 'required' && reading?.durable === false;
    if (redis === 'down' || postgres === 'down' || belowRequired) {
      const why = belowRequired && redis === 'up' && postgres === 'up'
        ? `not ready: redis persistence is ${reading.mode}, below REDIS_DURABILITY=required`
        : `not ready: redis ${redis}, postgres ${postgres}`;
      const err = new UnavailableError(why);
      applyErrorHead(res, err);
      res.json({ status: 'unavailable', dependencies, redisPersistence, ...errorEnvelope(res, err) });
      return;
    }
    res.json({ status: 'ready', dependencies, redisPersistence, serverTime: new Date().toISOString() });
  });
  return router;
}
