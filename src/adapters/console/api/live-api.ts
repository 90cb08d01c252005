/**
 * The console's live view (issue #7: live servers, a server's roster, commands and their states):
 *
 * - `GET /console/api/games` → `{ games: [{ id, name, workspaceId, workspaceName, heartbeatIntervalSeconds }], serverTime }`
 *   (the games of the workspaces where the caller holds an account; every game for the operator).
 * - `GET /console/api/games/:gameId/live[?server=<externalServerId>]` → `{ game, servers, roster, commands,
 *   serverTime }`: the live servers (src/presence/server-view.ts: occupancy, region, sdkVersion with
 *   `stale`, uptimeSeconds, secondsSinceLastHeartbeat), the roster of `server` (each player's
 *   `sessionSeconds`; null without `server`) and the game's {@link LIVE_COMMANDS} newest commands with
 *   their status and transitions (src/commands/command-query.ts). The page gets these views pushed by the
 *   live feed (src/adapters/console/api/live-stream-api.ts) and polls this route only while that stream is down.
 *
 * Errors: 404 `unknown_game`.
 */
import { Router } from 'express';
import type { Db } from '../../../store/prisma.js';
import type { AppRedis } from '../../../store/redis.js';
import { getRoster, listLiveServers } from '../../../presence/server-view.js';
import { listCommands } from '../../../commands/command-query.js';
import { gameAccess, visibleWorkspaces } from './console-request.js';
import type { KeySpace } from '../../../store/keyspace/key-space.js';

/** Commands the live view returns, newest first. */
export const LIVE_COMMANDS = 50;

/** Routes `GET /games` and `GET /games/:gameId/live` (see the module comment); mounted under /console/api. */
export function liveApi(deps: { db: Db; redis: AppRedis; keySpace: KeySpace }): Router {
  const router = Router();

  router.get('/games', async (_req, res) => {
    const workspaces = visibleWorkspaces(res);
    const games = await deps.db.game.findMany({
      where: workspaces === null ? {} : { workspaceId: { in: workspaces } },
      select: { id: true, name: true, workspaceId: true, heartbeatIntervalSeconds: true, workspace: { select: { name: true } } },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: 500,
    });
    res.json({
      games: games.map((g) => ({ id: g.id, name: g.name, workspaceId: g.workspaceId, workspaceName: g.workspace.name, heartbeatIntervalSeconds: g.heartbeatIntervalSeconds })),
      serverTime: new Date().toISOString(),
    });
  });

  router.get('/games/:gameId/live', async (req, res) => {
    const { game } = await gameAccess(req, res, deps.db, 'console.read');
    const nowMs = Date.now();
    const server = typeof req.query.server === 'string' && req.query.server ? req.query.server : null;
    const [servers, players, commands] = await Promise.all([
      listLiveServers(deps.redis, deps.keySpace, game.id, nowMs),
      server ? getRoster(deps.redis, deps.keySpace, game.id, server, nowMs) : Promise.resolve(null),
      listCommands(deps.db, deps.redis, deps.keySpace, { gameId: game.id, limit: LIVE_COMMANDS }),
    ]);
    res.json({
      game,
      servers,
      roster: server && players ? { externalServerId: server, players } : null,
      commands,
      serverTime: new Date(nowMs).toISOString(),
    });
  });

  return router;
}
