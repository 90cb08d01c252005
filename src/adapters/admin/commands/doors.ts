/**
 * `admin doors create|list|delete|force` and `admin policies add|list|delete` (issue #5, "Model and
 * management"). Every change raises the game's doors version (new manifest ETag, cached decisions
 * retired at once on every API process) and writes an audit row; `doors force` also sends
 * `door_set_state` to every live server. `doors access-log` reads grants and denials
 * (src/doors/access-log-query.ts). Services: src/doors/door-admin-service.ts.
 */
import { NudgeQueue } from '../../../commands/nudge-queue.js';
import { addPolicy, createDoor, deleteDoor, deletePolicy, forceDoor, listDoors, listPolicies } from '../../../doors/door-admin-service.js';
import { ACCESS_LOG_PAGE_DEFAULT, ACCESS_LOG_PAGE_MAX, queryAccessLog } from '../../../doors/access-log-query.js';
import { SUBJECT_TYPES, type PolicyConditions } from '../../../doors/door-types.js';
import { WEEKDAYS } from '../../../schemas/doors.js';
import { UsageError, type AdminCommand, type ArgReader, type CommandContext } from '../command.js';
import { formatFields, formatTable } from '../format.js';

const game = { type: 'string', required: true, valueName: 'ID', description: 'game id' } as const;
const door = { type: 'string', required: true, valueName: 'KEY', description: 'door key' } as const;

function services(ctx: CommandContext) {
  return { db: ctx.db(), redis: ctx.redis(), keySpace: ctx.keySpace };
}

/**
 * `doors create --game G --key K --name N [--kind KIND] [--default allow|deny] [--fail-mode closed|open]`
 * → `{ key, name, kind, defaultEffect, failMode, forcedState, policies, createdAt, updatedAt, doorsVersion }`.
 * @throws {NotFoundError} unknown game. @throws {ValidationError} bad field or `door_exists`.
 */
const create: AdminCommand = {
  group: 'doors',
  name: 'create',
  summary: 'Create a door (door, locker, spawner, zone, ...) of a game',
  options: {
    game,
    key: { type: 'string', required: true, valueName: 'KEY', description: 'door key, unique in the game (no spaces)' },
    name: { type: 'string', required: true, valueName: 'NAME', description: 'display name' },
    kind: { type: 'string', valueName: 'KIND', description: 'door, locker, spawner, zone or any text (default door)' },
    default: { type: 'string', valueName: 'EFFECT', description: 'allow or deny when no policy applies (default deny)' },
    'fail-mode': { type: 'string', valueName: 'MODE', description: 'closed or open when the service is unreachable (default closed)' },
  },
  async run(ctx) {
    const d = await createDoor(
      services(ctx),
      {
        gameId: ctx.args.uuid('game'),
        key: ctx.args.string('key'),
        name: ctx.args.string('name'),
        kind: ctx.args.optionalString('kind'),
        defaultEffect: ctx.args.optionalString('default'),
        failMode: ctx.args.optionalString('fail-mode'),
      },
      ctx.actor,
    );
    return {
      json: { ...d },
      text: formatFields([['key', d.key], ['name', d.name], ['kind', d.kind], ['default', d.defaultEffect], ['fail mode', d.failMode], ['doors version', d.doorsVersion]]),
    };
  },
};

/** `doors list --game G` → `{ doors: [{ key, name, kind, defaultEffect, failMode, forcedState, policies, createdAt, updatedAt }] }`, key order. */
const list: AdminCommand = {
  group: 'doors',
  name: 'list',
  summary: 'List the doors of a game with their forced state and policy count',
  options: { game },
  async run(ctx) {
    const doors = await listDoors(ctx.db(), ctx.args.uuid('game'));
    return {
      json: { doors },
      text: formatTable(
        ['KEY', 'NAME', 'KIND', 'DEFAULT', 'FAIL MODE', 'FORCED', 'POLICIES'],
        doors.map((d) => [d.key, d.name, d.kind, d.defaultEffect, d.failMode, d.forcedState, d.policies]),
        '(no doors)',
      ),
    };
  },
};

/** `doors delete --game G --door K` → `{ key, doorsVersion }` (its policies go with it). @throws {NotFoundError} */
const remove: AdminCommand = {
  group: 'doors',
  name: 'delete',
  summary: 'Delete a door and its policies',
  destructive: 'deletes the door and its policies',
  options: { game, door },
  async run(ctx) {
    const r = await deleteDoor(services(ctx), ctx.args.uuid('game'), ctx.args.string('door'), ctx.actor);
    return { json: { ...r }, text: `door ${r.key} deleted (doors version ${r.doorsVersion})` };
  },
};

/**
 * `doors force --game G --door K --state locked|unlocked|auto` → `{ key, forcedState, doorsVersion,
 * commands: [{ externalServerId, commandId }], failures: [{ externalServerId, error }] }`. The state is
 * recorded first (manifest, decisions); then one door_set_state command goes to each live server.
 * @throws {NotFoundError} unknown game or door. @throws {ValidationError} bad state.
 */
const force: AdminCommand = {
  group: 'doors',
  name: 'force',
  summary: 'Force a door locked or unlocked (overrides every policy), or return it to auto',
  options: { game, door, state: { type: 'string', required: true, valueName: 'STATE', description: 'locked, unlocked or auto' } },
  async run(ctx) {
    const nudges = new NudgeQueue(ctx.redis(), ctx.keySpace);
    try {
      const deps = { ...services(ctx), commands: { ...services(ctx), nudges } };
      const r = await forceDoor(deps, ctx.args.uuid('game'), ctx.args.string('door'), ctx.args.string('state'), ctx.actor);
      for (const f of r.failures) ctx.notice(`warning: no door_set_state for server ${f.externalServerId}: ${f.error}`);
      return {
        json: { ...r },
        text: formatFields([
          ['door', r.key],
          ['forced state', r.forcedState],
          ['doors version', r.doorsVersion],
          ['commands sent', `${r.commands.length} live server(s)`],
          ['failures', r.failures.length],
        ]),
      };
    } finally {
      await nudges.close();
    }
  },
};

/**
 * `doors access-log --game G [--door K] [--user U] [--decision allow|deny] [--since T] [--limit N]
 * [--cursor C]` → `{ entries: [{ id, at, externalServerId, externalId, doorKey, decision, reason, policyId }],
 * nextCursor, since }`, newest first (src/doors/access-log-query.ts): why a user was let in or refused,
 * with the deciding policy. Keyset pagination: pass `nextCursor` back as `--cursor` for older rows.
 * @throws {UsageError} --limit not an integer. @throws {ValidationError} bad decision, limit, since or
 *   cursor. @throws {NotFoundError} `unknown_game`.
 */
const accessLog: AdminCommand = {
  group: 'doors',
  name: 'access-log',
  summary: 'Show grants and denials of a game, newest first, with the reason and deciding policy',
  options: {
    game,
    door: { type: 'string', valueName: 'KEY', description: 'only this door key' },
    user: { type: 'string', valueName: 'USER', description: 'only this user (externalId)' },
    decision: { type: 'string', valueName: 'allow|deny', description: 'only grants or only denials' },
    since: { type: 'string', valueName: 'T', description: 'only rows at or after T: RFC 3339 time, a date, or a span back from now (15m, 2h, 7d)' },
    limit: { type: 'string', valueName: 'N', description: `rows per page, 1 to ${ACCESS_LOG_PAGE_MAX} (default ${ACCESS_LOG_PAGE_DEFAULT})` },
    cursor: { type: 'string', valueName: 'C', description: 'nextCursor of the previous page (older rows)' },
  },
  async run(ctx) {
    const page = await queryAccessLog(
      ctx.db(),
      {
        gameId: ctx.args.uuid('game'),
        doorKey: ctx.args.optionalString('door'),
        externalId: ctx.args.optionalString('user'),
        decision: ctx.args.optionalString('decision'),
        since: ctx.args.optionalString('since'),
        limit: ctx.args.optionalInt('limit'),
        cursor: ctx.args.optionalString('cursor'),
      },
      ctx.nowMs,
    );
    const table = formatTable(
      ['TIME', 'SERVER', 'USER', 'DOOR', 'DECISION', 'REASON', 'POLICY'],
      page.entries.map((e) => [e.at.toISOString(), e.externalServerId, e.externalId, e.doorKey, e.decision, e.reason, e.policyId]),
      '(no access-log entries)',
    );
    return {
      json: { ...page },
      text: page.nextCursor ? `${table}
more: --cursor ${page.nextCursor}` : table,
    };
  },
};

/** Conditions from `--conditions JSON` plus the single-condition options (which win). @throws {UsageError} */
function conditionsFrom(args: ArgReader): PolicyConditions {
  const raw = args.optionalString('conditions');
  let c: Record<string, unknown> = {};
  if (raw !== undefined) {
    try {
      c = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      throw new UsageError('--conditions must be a JSON object');
    }
    if (!c || typeof c !== 'object' || Array.isArray(c)) throw new UsageError('--conditions must be a JSON object');
  }
  const clocked = args.optionalFlag('clocked-in');
  if (clocked !== undefined) c.clockedIn = clocked;
  const operation = args.optionalString('operation');
  if (operation !== undefined) c.operationType = operation;
  const record = args.optionalString('without-active-record');
  if (record !== undefined) c.noActiveRecordType = record;
  const tenure = args.optionalInt('min-tenure-days');
  if (tenure !== undefined) c.minTenureDays = tenure;
  const from = args.optionalString('window-from');
  const to = args.optionalString('window-to');
  const tz = args.optionalString('window-tz');
  const days = args.optionalString('window-days');
  if (from !== undefined || to !== undefined || tz !== undefined || days !== undefined) {
    if (from === undefined || to === undefined) throw new UsageError('a time window needs --window-from and --window-to (HH:MM)');
    c.timeWindow = { from, to, timeZone: tz ?? 'UTC', ...(days !== undefined ? { days: days.split(',').map((d) => d.trim().toLowerCase()) } : {}) };
  }
  return c;
}

/**
 * `policies add --game G --door K --effect allow|deny --subject TYPE [--ids a,b] [--include-descendants]
 * [--priority N] [conditions]` → the policy `{ id, doorKey, effect, priority, subjectType, subjectIds,
 * includeDescendants, conditions, createdAt, doorsVersion }`.
 * @throws {NotFoundError} unknown game or door. @throws {ValidationError} bad subject or conditions.
 */
const addCommand: AdminCommand = {
  group: 'policies',
  name: 'add',
  summary: 'Add an allow/deny policy to a door (deny wins; then highest priority; then the default)',
  options: {
    game,
    door,
    effect: { type: 'string', required: true, valueName: 'EFFECT', description: 'allow or deny' },
    subject: { type: 'string', required: true, valueName: 'TYPE', description: SUBJECT_TYPES.join(', ') },
    ids: { type: 'string', valueName: 'LIST', description: 'comma-separated position/unit/organization ids, or user externalIds' },
    'include-descendants': { type: 'boolean', description: 'units: also every unit below them' },
    priority: { type: 'string', valueName: 'N', description: 'integer, higher first (default 0)' },
    'clocked-in': { type: 'boolean', negatable: true, description: 'condition: clocked in (--no-clocked-in: not clocked in)' },
    operation: { type: 'string', valueName: 'TYPE', description: 'condition: during an operation of this type' },
    'without-active-record': { type: 'string', valueName: 'TYPE', description: 'condition: no active record of this type' },
    'min-tenure-days': { type: 'string', valueName: 'N', description: 'condition: at least N days since joining' },
    'window-from': { type: 'string', valueName: 'HH:MM', description: 'condition: time window opens (local time)' },
    'window-to': { type: 'string', valueName: 'HH:MM', description: 'time window closes (next day when earlier than from)' },
    'window-days': { type: 'string', valueName: 'LIST', description: `days the window opens: ${WEEKDAYS.join(',')} (default every day)` },
    'window-tz': { type: 'string', valueName: 'ZONE', description: 'IANA time zone of the window (default UTC)' },
    conditions: { type: 'string', valueName: 'JSON', description: 'conditions as JSON (the options above override it)' },
  },
  // `--no-x` means "x is false" across the CLI, so a value-taking option may not start with `no-`.
  retiredOptions: { 'no-active-record': 'was renamed: write --without-active-record TYPE' },
  async run(ctx) {
    const ids = ctx.args.optionalString('ids');
    const p = await addPolicy(
      services(ctx),
      {
        gameId: ctx.args.uuid('game'),
        doorKey: ctx.args.string('door'),
        effect: ctx.args.string('effect'),
        priority: ctx.args.optionalInt('priority'),
        subjectType: ctx.args.string('subject'),
        subjectIds: ids === undefined ? [] : ids.split(','),
        includeDescendants: ctx.args.flag('include-descendants'),
        conditions: conditionsFrom(ctx.args),
      },
      ctx.actor,
    );
    return {
      json: { ...p },
      text: formatFields([
        ['id', p.id],
        ['door', p.doorKey],
        ['effect', p.effect],
        ['priority', p.priority],
        ['subject', `${p.subjectType}${p.subjectIds.length ? ` ${p.subjectIds.join(',')}` : ''}${p.includeDescendants ? ' (+descendants)' : ''}`],
        ['conditions', JSON.stringify(p.conditions)],
        ['doors version', p.doorsVersion],
      ]),
    };
  },
};

/** `policies list --game G [--door K]` → `{ policies: [...] }`, per door in evaluation tie order. */
const listCommand: AdminCommand = {
  group: 'policies',
  name: 'list',
  summary: 'List the policies of a game or of one door, in evaluation order',
  options: { game, door: { ...door, required: false } },
  async run(ctx) {
    const policies = await listPolicies(ctx.db(), ctx.args.uuid('game'), ctx.args.optionalString('door'));
    return {
      json: { policies },
      text: formatTable(
        ['ID', 'DOOR', 'EFFECT', 'PRIORITY', 'SUBJECT', 'CONDITIONS'],
        policies.map((p) => [p.id, p.doorKey, p.effect, p.priority, `${p.subjectType} ${p.subjectIds.join(',')}${p.includeDescendants ? ' +desc' : ''}`.trim(), JSON.stringify(p.conditions)]),
        '(no policies)',
      ),
    };
  },
};

/** `policies delete --game G --id P` → `{ id, doorKey, doorsVersion }`. @throws {NotFoundError} `unknown_policy`. */
const deleteCommand: AdminCommand = {
  group: 'policies',
  name: 'delete',
  summary: 'Delete a policy by id',
  destructive: 'deletes the policy',
  options: { game, id: { type: 'string', required: true, valueName: 'ID', description: 'policy id' } },
  async run(ctx) {
    const r = await deletePolicy(services(ctx), ctx.args.uuid('game'), ctx.args.uuid('id'), ctx.actor);
    return { json: { ...r }, text: `policy ${r.id} of door ${r.doorKey} deleted (doors version ${r.doorsVersion})` };
  },
};

export const doorCommands: AdminCommand[] = [create, list, remove, force, accessLog, addCommand, listCommand, deleteCommand];
