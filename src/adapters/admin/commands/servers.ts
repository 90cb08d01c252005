/**
 * `admin servers list|roster`: the live server view of a game (Redis, see src/presence/server-view.ts)
 * and, with `--all`, servers declared gone (Postgres `GameServer.goneAt`). sdkVersion is flagged stale
 * when older than the newest version among the game's live servers (spec: Versioning rule 4).
 */
import { getRoster, isStaleSdkVersion, listLiveServers, newestSdkVersion } from '../../../presence/server-view.js';
import type { AdminCommand } from '../command.js';
import { formatDuration, formatTable } from '../format.js';
import { requireGame } from './games.js';

/** One row of `servers list`; fields only a live server has are null for gone ones. */
export interface ServerRow {
  externalServerId: string;
  externalScopeId: string | null;
  region: string | null;
  playerCount: number | null;
  maxPlayers: number;
  sdkVersion: string;
  stale: boolean;
  /** As reported in the last heartbeat; null for gone servers. */
  uptimeSeconds: number | null;
  secondsSinceLastHeartbeat: number;
  lastHeartbeatAt: Date;
  heartbeatIntervalSeconds: number | null;
  rosterSize: number | null;
  state: 'live' | 'gone';
  goneAt: Date | null;
}

/**
 * `servers list --game G [--all]` → `{ servers: ServerRow[] }`: live servers sorted by id, then (with
 * --all) gone ones, most recently gone first. A server live again in Redis is listed once, as live.
 * @throws {NotFoundError} unknown game.
 */
const list: AdminCommand = {
  group: 'servers',
  name: 'list',
  summary: 'Show the live servers of a game (--all adds servers declared gone)',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    all: { type: 'boolean', description: 'include gone servers from the durable record' },
  },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const db = ctx.db();
    await requireGame(db, gameId);
    const live = await listLiveServers(ctx.redis(), ctx.keySpace, gameId, ctx.nowMs);
    const rows: ServerRow[] = live.map((s) => ({
      externalServerId: s.externalServerId,
      externalScopeId: s.externalScopeId,
      region: s.region,
      playerCount: s.playerCount,
      maxPlayers: s.maxPlayers,
      sdkVersion: s.sdkVersion,
      stale: s.stale,
      uptimeSeconds: s.uptimeSeconds,
      secondsSinceLastHeartbeat: s.secondsSinceLastHeartbeat,
      lastHeartbeatAt: s.lastHeartbeatAt,
      heartbeatIntervalSeconds: s.heartbeatIntervalSeconds,
      rosterSize: s.rosterSize,
      state: 'live',
      goneAt: null,
    }));
    if (ctx.args.flag('all')) {
      const liveIds = new Set(live.map((s) => s.externalServerId));
      const newest = newestSdkVersion(live.map((s) => s.sdkVersion));
      const gone = await db.gameServer.findMany({
        where: { gameId, goneAt: { not: null } },
        orderBy: [{ goneAt: 'desc' }, { externalServerId: 'asc' }],
      });
      for (const g of gone) {
        if (liveIds.has(g.externalServerId)) continue;
        rows.push({
          externalServerId: g.externalServerId,
          externalScopeId: g.externalScopeId,
          region: g.region,
          playerCount: null,
          maxPlayers: g.maxPlayers,
          sdkVersion: g.sdkVersion,
          stale: isStaleSdkVersion(g.sdkVersion, newest),
          uptimeSeconds: null,
          secondsSinceLastHeartbeat: Math.max(0, Math.floor((ctx.nowMs - g.lastSeenAt.getTime()) / 1000)),
          lastHeartbeatAt: g.lastSeenAt,
          heartbeatIntervalSeconds: null,
          rosterSize: null,
          state: 'gone',
          goneAt: g.goneAt,
        });
      }
    }
    return {
      json: { servers: rows },
      text: formatTable(
        ['SERVER', 'SCOPE', 'REGION', 'PLAYERS', 'SDK', 'UPTIME', 'LAST HEARTBEAT', 'STATE'],
        rows.map((r) => [
          r.externalServerId,
          r.externalScopeId,
          r.region,
          `${r.playerCount ?? '-'}/${r.maxPlayers}`,
          r.stale ? `${r.sdkVersion} (stale)` : r.sdkVersion,
          r.uptimeSeconds === null ? null : formatDuration(r.uptimeSeconds),
          `${formatDuration(r.secondsSinceLastHeartbeat)} ago`,
          r.state,
        ]),
        '(no servers)',
      ),
    };
  },
};

/**
 * `servers roster --game G --server S` → `{ externalServerId, players: [{ externalId, username, team,
 * openedAt, sessionSeconds }] }` for a live server; empty when it is unknown or gone.
 * @throws {NotFoundError} unknown game.
 */
const roster: AdminCommand = {
  group: 'servers',
  name: 'roster',
  summary: 'Show who is on one live server',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    server: { type: 'string', required: true, valueName: 'EXTERNAL_SERVER_ID', description: 'the externalServerId the game reports' },
  },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const externalServerId = ctx.args.string('server');
    await requireGame(ctx.db(), gameId);
    const players = await getRoster(ctx.redis(), ctx.keySpace, gameId, externalServerId, ctx.nowMs);
    return {
      json: { externalServerId, players },
      text: formatTable(
        ['EXTERNAL ID', 'USERNAME', 'TEAM', 'SESSION'],
        players.map((p) => [p.externalId, p.username, p.team, formatDuration(p.sessionSeconds)]),
        '(nobody online on this server)',
      ),
    };
  },
};

export const serverCommands: AdminCommand[] = [list, roster];
