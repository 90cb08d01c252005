/**
 * `admin commands issue|list|show`: moderation commands (spec: Command types, Command lifecycle). Issue
 * routes a command to a server or to wherever a user is (src/commands/command-service.ts documents the
 * routing, the default expiry and the queue cap); list and show tell the moderator where each command
 * stands, including expired and failed ones with who issued them.
 */
import { DEFAULT_EXPIRY_SECONDS, MAX_EXPIRY_SECONDS, MIN_EXPIRY_SECONDS } from '../../../commands/command-service.js';
import { issueModeratorCommand } from '../../../commands/moderator-commands.js';
import { listCommands, showCommand, type CommandView } from '../../../commands/command-query.js';
import { NudgeQueue } from '../../../commands/nudge-queue.js';
import { setNudges } from '../../../commands/nudge-settings.js';
import { COMMAND_STATUSES, COMMAND_TYPES, type CommandStatus } from '../../../schemas/commands.js';
import { UsageError, type AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';

function targetText(t: CommandView['target']): string {
  return t.externalId ? `user ${t.externalId}` : `server ${t.externalServerId ?? '-'}`;
}

/** `--payload` as JSON. @throws {UsageError} when it does not parse. */
function parsePayload(raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw new UsageError(`--payload is not valid JSON (${(err as Error).message})`);
  }
}

/** `--status a,b` as statuses. @throws {UsageError} for an unknown status. */
function parseStatuses(raw: string | undefined): CommandStatus[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((n) => !(COMMAND_STATUSES as readonly string[]).includes(n));
  if (bad.length || !names.length) throw new UsageError(`--status takes a comma-separated list of: ${COMMAND_STATUSES.join(',')}`);
  return names as CommandStatus[];
}

/**
 * `commands issue --game G --type T (--server S | --user U) [--payload JSON] [--expires-in SECONDS]` →
 * `{ id, gameId, type, status: "pending", target, routedTo, issuedAt, expiresAt, nudgeRequested, door? }`.
 * `door_set_state` records the door's forced state when issued (`door: { key, from, forcedState,
 * doorsVersion }`; src/doors/door-admin-service.ts `issueDoorSetState`), then delivers the command.
 * @throws {UsageError} both or neither of --server/--user, unparsable --payload or --expires-in (exit 2).
 * @throws {ValidationError} unknown type, bad payload, wrong kind of target, expiry out of range.
 * @throws {NotFoundError} unknown game, a server that is not live, or (door_set_state) `unknown_door`.
 * @throws {CommandQueueFullError} the destination queue is at its cap.
 */
const issue: AdminCommand = {
  group: 'commands',
  name: 'issue',
  summary: 'Issue a moderation command to a server or a user (waits for the user if offline)',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    type: { type: 'string', required: true, valueName: 'TYPE', description: `one of: ${COMMAND_TYPES.join(', ')}` },
    server: { type: 'string', valueName: 'SERVER', description: 'externalServerId of a live server (or --user)' },
    user: { type: 'string', valueName: 'USER', description: 'externalId of a user, wherever they are in the game (or --server)' },
    payload: { type: 'string', valueName: 'JSON', description: 'the per-type payload, e.g. \'{"reason":"spam"}\' (default {})' },
    'expires-in': {
      type: 'string',
      valueName: 'SECONDS',
      description: `expire if not acked by then, ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS} (default ${DEFAULT_EXPIRY_SECONDS})`,
    },
  },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const server = ctx.args.optionalString('server');
    const user = ctx.args.optionalString('user');
    if ((server === undefined) === (user === undefined)) throw new UsageError('give exactly one of --server or --user');
    const payload = parsePayload(ctx.args.optionalString('payload'));
    const expiresInSeconds = ctx.args.optionalInt('expires-in');
    const nudges = new NudgeQueue(ctx.redis(), ctx.keySpace);
    try {
      const c = await issueModeratorCommand(
        { db: ctx.db(), redis: ctx.redis(), keySpace: ctx.keySpace, nudges },
        {
          gameId,
          type: ctx.args.string('type'),
          payload,
          target: server !== undefined ? { externalServerId: server } : { externalId: user! },
          expiresInSeconds,
          issuedBy: ctx.actor,
        },
      );
      if (!c.routedTo) ctx.notice(`user ${c.target.externalId} is not online; the command waits until they join a server or it expires`);
      return {
        json: { ...c },
        text: formatFields([
          ['id', c.id],
          ['type', c.type],
          ['target', targetText(c.target)],
          ['status', c.status],
          ['queued on', c.routedTo ?? '(waiting for the user)'],
          ['expires', c.expiresAt],
          ['nudge', c.nudgeRequested ? 'requested' : 'no'],
          ...(c.door ? ([['door', `${c.door.key}: ${c.door.from} -> ${c.door.forcedState} (doors version ${c.door.doorsVersion}, in force now)`]] as [string, string][]) : []),
        ]),
      };
    } finally {
      await nudges.close();
    }
  },
};

/**
 * `commands list --game G [--status a,b] [--user U] [--issued-by NAME] [--limit N]` →
 * `{ commands: [{ id, gameId, type, target, status, statusAt, server, issuedBy, issuedAt, expiresAt,
 * failureReason, transitions, source }] }`, newest first; status and transitions from one source each. @throws {NotFoundError} unknown game.
 */
const list: AdminCommand = {
  group: 'commands',
  name: 'list',
  summary: 'List the commands of a game and where each stands (newest first)',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    status: { type: 'string', valueName: 'LIST', description: `only these statuses: ${COMMAND_STATUSES.join(',')}` },
    user: { type: 'string', valueName: 'USER', description: 'only commands aimed at this user' },
    'issued-by': { type: 'string', valueName: 'NAME', description: 'only commands issued by this issuer (e.g. cli:alice)' },
    limit: { type: 'string', valueName: 'N', description: 'most commands to show, 1 to 1000 (default 100)' },
  },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const statuses = parseStatuses(ctx.args.optionalString('status'));
    const limit = ctx.args.int('limit', 100);
    if (limit < 1 || limit > 1000) throw new UsageError('--limit must be from 1 to 1000');
    const commands = await listCommands(ctx.db(), ctx.redis(), ctx.keySpace, {
      gameId,
      statuses,
      externalId: ctx.args.optionalString('user'),
      issuedBy: ctx.args.optionalString('issued-by'),
      limit,
    });
    return {
      json: { commands },
      text: formatTable(
        ['ID', 'TYPE', 'TARGET', 'STATUS', 'SERVER', 'ISSUED BY', 'ISSUED', 'EXPIRES', 'FAILURE'],
        commands.map((c) => [c.id, c.type, targetText(c.target), c.status, c.server, c.issuedBy, c.issuedAt, c.expiresAt, c.failureReason]),
        '(no commands)',
      ),
    };
  },
};

/**
 * `commands show --id C` → `{ id, gameId, type, payload, target, status, statusAt, server, issuedBy,
 * issuedAt, expiresAt, failureReason, transitions: [{ toStatus, at, externalServerId, reason }], source:
 * "live"|"recorded" }`: status and transitions from one source (src/commands/command-query.ts), so the
 * transition that set the status is always listed.
 * @throws {NotFoundError} `unknown_command`.
 */
const show: AdminCommand = {
  group: 'commands',
  name: 'show',
  summary: 'Show one command with its payload and every transition with its time',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'command id' } },
  async run(ctx) {
    const c = await showCommand(ctx.db(), ctx.redis(), ctx.keySpace, ctx.args.uuid('id'));
    return {
      json: { ...c },
      text: [
        formatFields([
          ['id', c.id],
          ['game', c.gameId],
          ['type', c.type],
          ['payload', JSON.stringify(c.payload)],
          ['target', targetText(c.target)],
          ['status', `${c.status} since ${c.statusAt.toISOString()} (${c.source === 'live' ? 'live state' : 'recorded'})`],
          ['server', c.server],
          ['issued by', c.issuedBy],
          ['issued', c.issuedAt],
          ['expires', c.expiresAt],
          ['failure', c.failureReason],
        ]),
        '',
        formatTable(
          ['TRANSITION', 'AT', 'SERVER', 'REASON'],
          c.transitions.map((t) => [t.toStatus, t.at.toISOString(), t.externalServerId, t.reason]),
          '(no transitions)',
        ),
      ].join('\n'),
    };
  },
};

/**
 * `commands nudges --game G (--enabled | --no-enabled)` → `{ gameId, nudgesEnabled, universeId,
 * cloudApiBaseUrl, topic }`: whether issuing a command for a live server publishes an urgent nudge on the
 * game's topic. @throws {UsageError} neither given (or the retired --enable / --disable). @throws {ValidationError}
 * `push_not_configured` when enabling before `games set-platform` stored a universe and an API key.
 * @throws {NotFoundError} unknown game.
 */
const nudges: AdminCommand = {
  group: 'commands',
  name: 'nudges',
  summary: 'Turn urgent nudges on or off for a game (needs its universe and cloud API key)',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    enabled: {
      type: 'boolean',
      negatable: true,
      description: 'publish a nudge when a command is issued for a live server (--no-enabled: servers wait for their next heartbeat)',
    },
  },
  retiredOptions: { enable: 'was renamed: write --enabled', disable: 'was renamed: write --no-enabled' },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const on = ctx.args.optionalFlag('enabled');
    if (on === undefined) throw new UsageError('give --enabled or --no-enabled');
    const view = await setNudges(ctx.db(), gameId, on, ctx.actor);
    return {
      json: { ...view },
      text: `game ${view.gameId}: nudges ${view.nudgesEnabled ? `on (topic ${view.topic} of universe ${view.universeId} at ${view.cloudApiBaseUrl})` : 'off'}`,
    };
  },
};

export const commandCommands: AdminCommand[] = [issue, list, show, nudges];
