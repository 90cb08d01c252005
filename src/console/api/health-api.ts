/**
 * Ingest health in the console (issue #7: "the ingest health warnings"; spec: Events, persistent
 * throttling):
 *
 * `GET /console/api/games/:gameId/health` → `{ warnings: HealthWarningView[], throttling:
 * ThrottledMinute[], streams: Record<stream, { entries, lagSeconds }>, serverTime }`: the game's open
 * warnings and those resolved in the last day (src/limits/ingest-health.ts), its 429s per minute over the
 * last ten minutes, and how far the flushers are behind on its streams (src/ops/stream-backlog.ts).
 *
 * Errors: 404 `unknown_game`.
 */
import { Router } from 'express';
import type { Db } from '../../store/prisma.js';
import type { AppRedis } from '../../store/redis.js';
import { listHealthWarnings, throttleHistory } from '../../limits/ingest-health.js';
import { streamBacklogs } from '../../ops/stream-backlog.js';
import { gameOf } from './console-request.js';

/** The health view of one game at `nowMs` (ms): the body of `GET /games/:gameId/health` and of the live feed's `health` event. */
export async function gameHealth(deps: { db: Db; redis: AppRedis; redisPrefix: string }, gameId: string, nowMs: number) {
  const [warnings, throttling, backlogs] = await Promise.all([
    listHealthWarnings(deps.db, gameId, nowMs),
    throttleHistory(deps.redis, deps.redisPrefix, gameId, nowMs),
    streamBacklogs(deps.redis, deps.redisPrefix, [gameId], nowMs),
  ]);
  return { warnings, throttling, streams: backlogs.get(gameId)!, serverTime: new Date(nowMs).toISOString() };
}

/** Route `GET /games/:gameId/health` (see the module comment); mounted under /console/api. */
export function healthApi(deps: { db: Db; redis: AppRedis; redisPrefix: string }): Router {
  const router = Router();

  router.get('/games/:gameId/health', async (req, res) => {
    const game = await gameOf(req, deps.db);
    res.json(await gameHealth(deps, game.id, Date.now()));
  });

  return router;
}
