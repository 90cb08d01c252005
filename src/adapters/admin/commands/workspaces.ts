/**
 * `gis-admin workspaces create|list`: the tenants games belong to (spec: "a workspace that holds its org
 * chart, rules, schedule and records"). The same group's import|export|settings live in workspace-file.ts.
 */
import { createWorkspace } from '../../../games/game-service.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';

/** `workspaces create --name N` → `{ id, name }`. @throws {ValidationError} on an empty name. */
const create: AdminCommand = {
  group: 'workspaces',
  name: 'create',
  summary: 'Create a workspace',
  options: { name: { type: 'string', required: true, valueName: 'NAME', description: 'display name' } },
  async run(ctx) {
    const ws = await createWorkspace(ctx.db(), ctx.args.string('name'));
    return { json: { id: ws.id, name: ws.name }, text: formatFields([['id', ws.id], ['name', ws.name]]) };
  },
};

/** `workspaces list` → `{ workspaces: [{ id, name, createdAt, games }] }`, oldest first; games = count. */
const list: AdminCommand = {
  group: 'workspaces',
  name: 'list',
  summary: 'List workspaces with their number of games',
  options: {},
  async run(ctx) {
    const rows = await ctx.db().workspace.findMany({
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: { id: true, name: true, createdAt: true, _count: { select: { games: true } } },
    });
    const workspaces = rows.map((w) => ({ id: w.id, name: w.name, createdAt: w.createdAt, games: w._count.games }));
    return {
      json: { workspaces },
      text: formatTable(['ID', 'NAME', 'GAMES', 'CREATED'], workspaces.map((w) => [w.id, w.name, w.games, w.createdAt]), '(no workspaces)'),
    };
  },
};

export const workspaceCommands: AdminCommand[] = [create, list];
