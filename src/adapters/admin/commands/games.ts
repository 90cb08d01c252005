/**
 * `admin games create|list|set-interval`: registered games and their heartbeat interval (spec: POST
 * heartbeat, "default 20 seconds, configurable 15 to 60 seconds"; the response dictates it).
 */
import { DEFAULT_INTERVAL_SECONDS, checkInterval, createGame, setHeartbeatInterval } from '../../../games/game-service.js';
import { NotFoundError } from '../../../errors.js';
import type { Db } from '../../../store/prisma.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';

/**
 * Loads the game `gameId` (id, name, workspaceId, heartbeatIntervalSeconds).
 * @throws {NotFoundError} when it does not exist.
 */
export async function requireGame(db: Db, gameId: string): Promise<{ id: string; name: string; workspaceId: string; heartbeatIntervalSeconds: number }> {
  const game = await db.game.findUnique({
    where: { id: gameId },
    select: { id: true, name: true, workspaceId: true, heartbeatIntervalSeconds: true },
  });
  if (!game) throw new NotFoundError(`game ${gameId} not found`);
  return game;
}

/**
 * `games create --workspace W --name N [--heartbeat-interval S]` → `{ id, name, workspaceId,
 * heartbeatIntervalSeconds }`. @throws {ValidationError} interval outside 15–60 s or empty name.
 * @throws {NotFoundError} unknown workspace.
 */
const create: AdminCommand = {
  group: 'games',
  name: 'create',
  summary: `Register a game in a workspace (heartbeat interval 15-60 s, default ${DEFAULT_INTERVAL_SECONDS})`,
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    name: { type: 'string', required: true, valueName: 'NAME', description: 'display name' },
    'heartbeat-interval': { type: 'string', valueName: 'SECONDS', description: `heartbeat interval, 15 to 60 (default ${DEFAULT_INTERVAL_SECONDS})` },
  },
  async run(ctx) {
    const workspaceId = ctx.args.uuid('workspace');
    const game = await createGame(ctx.db(), {
      workspaceId,
      name: ctx.args.string('name'),
      heartbeatIntervalSeconds: ctx.args.optionalInt('heartbeat-interval'),
    }, ctx.actor);
    const json = { id: game.id, name: game.name, workspaceId, heartbeatIntervalSeconds: game.heartbeatIntervalSeconds };
    return {
      json,
      text: formatFields([['id', game.id], ['name', game.name], ['workspace', workspaceId], ['heartbeat interval', `${game.heartbeatIntervalSeconds}s`]]),
    };
  },
};

/**
 * `games list [--workspace W]` → `{ games: [{ id, workspaceId, name, heartbeatIntervalSeconds,
 * createdAt }] }`, oldest first. @throws {NotFoundError} when --workspace names no workspace.
 */
const list: AdminCommand = {
  group: 'games',
  name: 'list',
  summary: 'List games, optionally of one workspace',
  options: { workspace: { type: 'string', valueName: 'ID', description: 'only games of this workspace' } },
  async run(ctx) {
    const workspaceId = ctx.args.optionalUuid('workspace');
    const db = ctx.db();
    if (workspaceId && !(await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true } }))) {
      throw new NotFoundError(`workspace ${workspaceId} not found`);
    }
    const games = await db.game.findMany({
      where: workspaceId ? { workspaceId } : {},
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: { id: true, workspaceId: true, name: true, heartbeatIntervalSeconds: true, createdAt: true },
    });
    return {
      json: { games },
      text: formatTable(
        ['ID', 'WORKSPACE', 'NAME', 'INTERVAL', 'CREATED'],
        games.map((g) => [g.id, g.workspaceId, g.name, `${g.heartbeatIntervalSeconds}s`, g.createdAt]),
        '(no games)',
      ),
    };
  },
};

/**
 * `games set-interval --game G --seconds S` → `{ id, heartbeatIntervalSeconds }`; API processes drop
 * cached data of the game at once (published invalidation), so the next response dictates the new value.
 * @throws {ValidationError} outside 15–60 s. @throws {NotFoundError} unknown game.
 */
const setInterval: AdminCommand = {
  group: 'games',
  name: 'set-interval',
  summary: 'Change the heartbeat interval a game is told to follow (15-60 s)',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    seconds: { type: 'string', required: true, valueName: 'SECONDS', description: 'new interval, 15 to 60' },
  },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const seconds = checkInterval(ctx.args.int('seconds'));
    await setHeartbeatInterval(ctx.db(), ctx.redis(), ctx.keySpace, gameId, seconds, ctx.actor);
    return {
      json: { id: gameId, heartbeatIntervalSeconds: seconds },
      text: `game ${gameId}: heartbeat interval set to ${seconds}s`,
    };
  },
};

export const gameCommands: AdminCommand[] = [create, list, setInterval];
