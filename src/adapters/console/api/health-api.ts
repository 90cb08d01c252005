/**
 * Ingest health in the console (issue #7: "the ingest health warnings"; spec: Events, persistent
 * throttling):
 *
 * `GET /console/api/games/:gameId/health` → `{ warnings: HealthWarningView[], throttling:
 * ThrottledMinute[], streams: Record<stream, { entries, lagSeconds }>, deadLetters: DeadLetterSummary,
 * serverTime }`: the game's open warnings and those resolved in the last day (src/limits/ingest-health.ts),
 * its 429s per minute over the last ten minutes, how far the flushers are behind on its streams
 * (src/runtime/stream-backlog.ts), and the rows Postgres refused and the flushers set aside
 * (src/store/dead-letters.ts: counts per stream, the five newest with rows cut to 300 characters).
 *
 * Errors: 404 `unknown_game`.
 */
import { Router } from 'express';
import type { Db } from '../../../store/prisma.js';
import type { AppRedis } from '../../../store/redis.js';
import { listHealthWarnings, throttleHistory } from '../../../limits/ingest-health.js';
import { streamBacklogs } from '../../../runtime/stream-backlog.js';
import { DeadLetters } from '../../../store/dead-letters.js';
import { gameAccess } from './console-request.js';
import type { KeySpace } from '../../../store/keyspace/key-space.js';

/** The health view of one game at `nowMs` (ms): the body of `GET /games/:gameId/health` and of the live feed's `health` event. */
export async function gameHealth(deps: { db: Db; redis: AppRedis; keySpace: KeySpace }, gameId: string, nowMs: number) {
  const [warnings, throttling, backlogs, deadLetters] = await Promise.all([
    listHealthWarnings(deps.db, gameId, nowMs),
    throttleHistory(deps.redis, deps.keySpace, gameId, nowMs),
    streamBacklogs(deps.redis, deps.keySpace, [gameId], nowMs),
    new DeadLetters(deps.redis, deps.keySpace).summary(gameId),
  ]);
  return { warnings, throttling, streams: backlogs.get(gameId)!, deadLetters, serverTime: new Date(nowMs).toISOString() };
}

/** Route `GET /games/:gameId/health` (see the module comment); mounted under /console/api. */
export function healthApi(deps: { db: Db; redis: AppRedis; keySpace: KeySpace }): Router {
  const router = Router();

  router.get('/games/:gameId/health', async (req, res) => {
    const { game } = await gameAccess(req, res, deps.db, 'console.read');
    res.json(await gameHealth(deps, game.id, Date.now()));
  });

  return router;
}
