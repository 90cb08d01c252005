/**
 * Chart data of the console (issue #7: "a chart of concurrent players over the last hour and of events
 * per type"):
 *
 * `GET /console/api/games/:gameId/charts` → `{ concurrency: [{ at, players, servers }], eventsByType:
 * [{ type, count }], windowSeconds, serverTime }`:
 * - `concurrency`: the one-minute samples of the last {@link CHART_WINDOW_MS} (ConcurrencySample, written
 *   by the `sample-concurrency` worker role), oldest first, then one point for now from the live rosters,
 *   so the line reaches the present even between samples;
 * - `eventsByType`: PlayerEvent rows of the game that occurred in the same window, counted per type,
 *   most frequent first (events reach Postgres about a second after their heartbeat).
 *
 * Errors: 404 `unknown_game`.
 */
import { Router } from 'express';
import type { Db } from '../../../store/prisma.js';
import type { AppRedis } from '../../../store/redis.js';
import { listLiveServers } from '../../../presence/server-view.js';
import { gameAccess } from './console-request.js';
import type { KeySpace } from '../../../store/keyspace/key-space.js';

/** The charts cover the last hour, ms. */
export const CHART_WINDOW_MS = 3_600_000;

/** Route `GET /games/:gameId/charts` (see the module comment); mounted under /console/api. */
export function chartsApi(deps: { db: Db; redis: AppRedis; keySpace: KeySpace }): Router {
  const router = Router();

  router.get('/games/:gameId/charts', async (req, res) => {
    const { game } = await gameAccess(req, res, deps.db, 'console.read');
    const nowMs = Date.now();
    const since = new Date(nowMs - CHART_WINDOW_MS);
    const [samples, byType, live] = await Promise.all([
      deps.db.concurrencySample.findMany({ where: { gameId: game.id, minute: { gte: since } }, orderBy: { minute: 'asc' } }),
      deps.db.playerEvent.groupBy({ by: ['type'], where: { gameId: game.id, occurredAt: { gte: since } }, _count: { _all: true } }),
      listLiveServers(deps.redis, deps.keySpace, game.id, nowMs),
    ]);
    const concurrency = samples.map((s) => ({ at: s.minute.toISOString(), players: s.players, servers: s.servers }));
    concurrency.push({ at: new Date(nowMs).toISOString(), players: live.reduce((n, s) => n + s.rosterSize, 0), servers: live.length });
    const eventsByType = byType.map((r) => ({ type: r.type, count: r._count._all })).sort((a, b) => b.count - a.count || (a.type < b.type ? -1 : 1));
    res.json({ concurrency, eventsByType, windowSeconds: CHART_WINDOW_MS / 1000, serverTime: new Date(nowMs).toISOString() });
  });

  return router;
}
