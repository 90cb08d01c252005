/**
 * `gis-admin workspaces import|export|settings`: load a whole org chart from one JSON file (all or nothing,
 * every problem listed), write it back out in the same format, and set the workspace's quota week
 * (src/workspace/workspace-import.ts, workspace-export.ts, workspace-settings.ts; format:
 * src/schemas/workspace-import.ts).
 */
import { readFile } from 'node:fs/promises';
import { ValidationError } from '../../../errors.js';
import { ImportRefusedError, importWorkspace } from '../../../workspace/workspace-import.js';
import { exportWorkspace } from '../../../workspace/workspace-export.js';
import { setWeekSettings } from '../../../workspace/workspace-settings.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatFields } from '../format.js';

/** Reads and parses JSON file `path`. @throws {ValidationError} `unreadable_file` or `invalid_json`. */
async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ValidationError(`cannot read ${path}: ${(err as Error).message}`, 'unreadable_file');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ValidationError(`${path} is not valid JSON: ${(err as Error).message}`, 'invalid_json');
  }
}

/**
 * `workspaces import --workspace W --file F.json` → `{ workspaceId, organizations, units, positions, members,
 * assignments, operations, records, settingsUpdated }` (rows created). A refused file exits 1 with
 * `invalid_import` and every problem (one per line on stderr in readable mode); nothing is written.
 */
const importCmd: AdminCommand = {
  group: 'workspaces',
  name: 'import',
  summary: 'Load an org chart (orgs, units, positions, members, operations, records) from a JSON file, all or nothing',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace to import into' },
    file: { type: 'string', required: true, valueName: 'PATH', description: 'the JSON file (format: README "Workspace import file")' },
  },
  async run(ctx) {
    const workspaceId = ctx.args.uuid('workspace');
    const data = await readJson(ctx.args.string('file'));
    try {
      const s = await importWorkspace(ctx.db(), workspaceId, data, doorInvalidation(ctx), new Date(ctx.nowMs));
      return {
        json: { ...s },
        text: formatFields([
          ['workspace', s.workspaceId],
          ['organizations', s.organizations],
          ['units', s.units],
          ['positions', s.positions],
          ['members', s.members],
          ['assignments', s.assignments],
          ['operations', s.operations],
          ['records', s.records],
          ['settings updated', s.settingsUpdated],
        ]),
      };
    } catch (err) {
      if (err instanceof ImportRefusedError) for (const p of err.problems) ctx.notice(`  ${p}`);
      throw err;
    }
  },
};

/** `workspaces export --workspace W` → the workspace file itself (one JSON object; pretty-printed without --json). */
const exportCmd: AdminCommand = {
  group: 'workspaces',
  name: 'export',
  summary: 'Print the org chart of a workspace in the import format',
  options: { workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' } },
  async run(ctx) {
    const file = await exportWorkspace(ctx.db(), ctx.args.uuid('workspace'));
    return { json: { ...file }, text: JSON.stringify(file, null, 2) };
  },
};

/**
 * `workspaces settings --workspace W [--time-zone TZ] [--week-starts-on 1-7]` → `{ id, name, timeZone,
 * weekStartsOn }`. @throws {ValidationError} `invalid_time_zone`, weekday outside 1–7, nothing given.
 */
const settings: AdminCommand = {
  group: 'workspaces',
  name: 'settings',
  summary: 'Set the time zone and start day of the quota week',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    'time-zone': { type: 'string', valueName: 'TZ', description: 'IANA time zone, e.g. Europe/Berlin (default UTC)' },
    'week-starts-on': { type: 'string', valueName: 'N', description: 'ISO weekday the week starts on: 1 = Monday (default) ... 7 = Sunday' },
  },
  async run(ctx) {
    const ws = await setWeekSettings(ctx.db(), ctx.args.uuid('workspace'), {
      timeZone: ctx.args.optionalString('time-zone')?.trim(),
      weekStartsOn: ctx.args.optionalInt('week-starts-on'),
    });
    return { json: { ...ws }, text: formatFields([['workspace', ws.id], ['time zone', ws.timeZone], ['week starts on', ws.weekStartsOn]]) };
  },
};

export const workspaceFileCommands: AdminCommand[] = [importCmd, exportCmd, settings];
