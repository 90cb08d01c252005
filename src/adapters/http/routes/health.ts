/**
 * GET /healthz (the process is alive) and GET /readyz (this process can serve heartbeats; issue #29).
 * Outside the game prefix and unauthenticated; both carry serverTime like every response.
 *
 * /readyz is readiness per capability, for a load balancer or a Kubernetes readiness probe: 200 when what
 * a heartbeat needs is up, that is Redis and, where the process verifies keys from Redis records
 * (src/auth/key-records.ts; src/server.ts), those records copied from Postgres at least once. Postgres
 * down does not fail it: heartbeats of known keys keep answering 200 from Redis, so pulling every API out
 * of a load balancer would turn a database blip into a full outage. Bodies:
 * - 200 `{status:"ready"|"degraded", dependencies:{redis:"up", postgres:"up"|"down", keyRecords?:"synced"}}`
 *   (`degraded`: Postgres is down; cold paths such as door cache misses answer 503 meanwhile);
 * - 503 the error envelope (`unavailable`, Retry-After) plus `status:"unavailable"` and the same map,
 *   `redis:"down"` or `keyRecords:"missing"`.
 * `GET /readyz?full=1` is the operators' full dependency view: the same body, but 503 whenever any
 * dependency is down (Postgres included), as /readyz answered before issue #29.
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
import type { Db } from '../../../store/prisma.js';
import type { PersistenceStatus } from '../../../store/redis-persistence.js';
import type { KeyRecords } from '../../../auth/key-records.js';
import { UnavailableError } from '../../../errors.js';
import { applyErrorHead, errorEnvelope } from '../error-status.js';

type DependencyState = 'up' | 'down';

/** Routes of the health endpoints; `persistence` adds the Redis persistence reading, `keyRecords` the records' sync state. */
export function healthRoutes(deps: { redis: Redis; db: Db; persistence?: PersistenceStatus; keyRecords?: KeyRecords }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', serverTime: new Date().toISOString() });
  });
  router.get('/readyz', async (req, res) => {
    const state = (ok: boolean): DependencyState => (ok ? 'up' : 'down');
    const records = deps.keyRecords;
    // With records, their sync stamp is the Redis probe: one command says "Redis answers" and "the key data is there".
    const redisProbe: Promise<{ redis: DependencyState; keyRecords?: 'synced' | 'missing' }> = records
      ? records.syncedAt().then((at) => ({ redis: 'up', keyRecords: at ? 'synced' : 'missing' }), () => ({ redis: 'down' }))
      : deps.redis.ping().then(() => ({ redis: state(true) }), () => ({ redis: state(false) }));
    const [probe, postgres] = await Promise.all([
      redisProbe,
      deps.db.$queryRaw`select 1`.then(() => state(true), () => state(false)),
    ]);
    const redis = probe.redis;
    const dependencies = { redis, postgres, ...(probe.keyRecords ? { keyRecords: probe.keyRecords } : {}) };
    const p = deps.persistence;
    const reading = p?.current;
    const redisPersistence = p && reading ? { mode: reading.mode, durable: reading.durable, durability: p.durability, checkedAt: reading.checkedAt } : undefined;
    const belowRequired = p?.durability === 'required' && reading?.durable === false;
    const full = req.query.full !== undefined && req.query.full !== '0';
    const missing = probe.keyRecords === 'missing';
    if (redis === 'down' || missing || belowRequired || (full && postgres === 'down')) {
      const why = redis === 'down' || postgres === 'down' || missing
        ? `not ready: redis ${redis}, postgres ${postgres}${missing ? ', key records never synced from postgres' : ''}`
        : `not ready: redis persistence is ${reading?.mode}, below REDIS_DURABILITY=required`;
      const err = new UnavailableError(why);
      applyErrorHead(res, err);
      res.json({ status: 'unavailable', dependencies, redisPersistence, ...errorEnvelope(res, err) });
      return;
    }
    res.json({ status: postgres === 'up' ? 'ready' : 'degraded', dependencies, redisPersistence, serverTime: new Date().toISOString() });
  });
  return router;
}
