/**
 * `admin bans create|lift|list|reconcile`: workspace-scoped bans (issue #6; spec: What the service does,
 * item 5). The rules (scopes, expiry, history, kick on ban, platform writes) live in
 * src/bans/ban-service.ts; these commands parse options and print.
 */
import { Queue } from 'bullmq';
import { BanService, listBans, MAX_BAN_SECONDS, type BanView, type PlatformWriteView } from '../../../bans/ban-service.js';
import { Blocklist } from '../../../bans/blocklist.js';
import { commandKickIssuer } from '../../../bans/ban-kicks.js';
import { PLATFORM_BANS_QUEUE, PlatformWriteQueue, type PlatformBanJob } from '../../../bans/platform-write-queue.js';
import { reconcilePlatformBans } from '../../../bans/platform-reconcile.js';
import { BAN_SCOPES } from '../../../bans/ban-types.js';
import { NudgeQueue } from '../../../commands/nudge-queue.js';
import { absorbSharedConnectionErrors } from '../../../store/connection-state.js';
import { UsageError, type AdminCommand, type CommandContext } from '../command.js';
import { formatDate, formatFields, formatTable } from '../format.js';

/** Runs `fn` with a ban service wired to this process's connections, the platform queue and kicks; closes the queues after. */
async function withBans<T>(ctx: CommandContext, fn: (bans: BanService, writes: PlatformWriteQueue) => Promise<T>): Promise<T> {
  const redis = ctx.redis();
  const db = ctx.db();
  const { keySpace } = ctx;
  const queue = new Queue<PlatformBanJob>(PLATFORM_BANS_QUEUE, { connection: redis, prefix: keySpace.global.bullPrefix() });
  absorbSharedConnectionErrors(queue, `queue:${PLATFORM_BANS_QUEUE}`);
  const nudges = new NudgeQueue(redis, keySpace);
  try {
    const writes = new PlatformWriteQueue(queue, db);
    const bans = new BanService({
      db,
      redis,
      keySpace,
      blocklist: new Blocklist(redis, db, keySpace),
      platformWrites: writes,
      kick: commandKickIssuer({ db, redis, keySpace, nudges }),
    });
    return await fn(bans, writes);
  } finally {
    await Promise.allSettled([queue.close(), nudges.close()]);
  }
}

function targetText(b: BanView): string {
  if (b.scope === 'workspace') return 'every game';
  if (b.scope === 'game') return `game ${b.gameId}`;
  return `server ${b.externalServerId} of game ${b.gameId}`;
}

function writeText(w: PlatformWriteView | undefined): string {
  if (!w) return '-';
  const what = w.active ? `ban${w.durationSeconds === null ? '' : ` ${w.durationSeconds}s`}` : 'unban';
  const error = w.state === 'failed' && w.lastError ? `: ${w.lastError.slice(0, 60)}` : '';
  return `${what} ${w.state}${w.attempts > 1 ? ` (${w.attempts} attempts)` : ''}${error}`;
}

function banFields(b: BanView): [string, string | Date | null][] {
  return [
    ['id', b.id],
    ['user', b.externalId],
    ['scope', b.scope],
    ['covers', targetText(b)],
    ['reason', b.reason],
    ['issued', `${formatDate(b.issuedAt)} by ${b.issuedBy}`],
    ['expires', b.expiresAt ?? 'never (permanent)'],
    ['status', b.liftedAt ? `lifted ${formatDate(b.liftedAt)} by ${b.liftedBy}` : b.status],
  ];
}

/**
 * `bans create --workspace W --user U --scope server|game|workspace [--game G] [--server S]
 * [--expires-in SECONDS | --permanent] --reason R` → `{ ban, kicks: [{ gameId, externalServerId,
 * commandId }], platformWrites: [{ id, gameId, externalId, active, durationSeconds, state }] }`.
 * Without --expires-in the ban is permanent.
 * @throws {UsageError} both --expires-in and --permanent, or a non-integer --expires-in (exit 2).
 * @throws {ValidationError} bad scope, a game/server the scope does not take or lacks, expiry out of range.
 * @throws {NotFoundError} unknown workspace, or a game not in it.
 */
const create: AdminCommand = {
  group: 'bans',
  name: 'create',
  summary: 'Ban a user in a workspace (server, game or workspace scope); kicks them if online',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    user: { type: 'string', required: true, valueName: 'USER', description: 'externalId of the user' },
    scope: { type: 'string', required: true, valueName: 'SCOPE', description: BAN_SCOPES.join('|') },
    game: { type: 'string', valueName: 'ID', description: 'the game (scopes game and server)' },
    server: { type: 'string', valueName: 'SERVER', description: 'the externalServerId (scope server)' },
    'expires-in': { type: 'string', valueName: 'SECONDS', description: `ban length, 1 to ${MAX_BAN_SECONDS} (default: permanent)` },
    permanent: { type: 'boolean', description: 'no expiry (the default)' },
    reason: { type: 'string', required: true, valueName: 'TEXT', description: 'why; shown to moderators and sent with the kick' },
  },
  async run(ctx) {
    const expiresInSeconds = ctx.args.optionalInt('expires-in');
    if (expiresInSeconds !== undefined && ctx.args.flag('permanent')) throw new UsageError('give --expires-in or --permanent, not both');
    const input = {
      workspaceId: ctx.args.uuid('workspace'),
      externalId: ctx.args.string('user'),
      scope: ctx.args.string('scope'),
      gameId: ctx.args.optionalUuid('game') ?? null,
      externalServerId: ctx.args.optionalString('server') ?? null,
      expiresInSeconds: expiresInSeconds ?? null,
      reason: ctx.args.string('reason'),
      issuedBy: ctx.actor,
    };
    const result = await withBans(ctx, (bans) => bans.create(input, ctx.nowMs));
    for (const k of result.kicks) {
      ctx.notice(k.commandId ? `kick ${k.commandId} issued on server ${k.externalServerId} of game ${k.gameId}` : `could not kick on server ${k.externalServerId} of game ${k.gameId}: ${k.error}`);
    }
    return {
      json: { ...result },
      text: formatFields([
        ...banFields(result.ban),
        ['kicked on', result.kicks.filter((k) => k.commandId).map((k) => k.externalServerId).join(', ') || '(not online)'],
        ['platform writes', result.platformWrites.map((w) => `${w.gameId} queued`).join(', ') || '(none)'],
      ]),
    };
  },
};

/**
 * `bans lift --id B` → `{ ban, alreadyLifted, platformWrites }`. The row stays (history); lifting a lifted
 * ban reports the first lift. @throws {NotFoundError} unknown ban.
 */
const lift: AdminCommand = {
  group: 'bans',
  name: 'lift',
  summary: 'Lift a ban (kept in the history)',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'ban id' } },
  async run(ctx) {
    const banId = ctx.args.uuid('id');
    const result = await withBans(ctx, (bans) => bans.lift(banId, ctx.actor, ctx.nowMs));
    if (result.alreadyLifted) ctx.notice(`ban ${banId} was already lifted`);
    return { json: { ...result }, text: formatFields(banFields(result.ban)) };
  },
};

/**
 * `bans list --workspace W [--user U] [--active]` → `{ bans: [{ id, workspaceId, externalId, scope, gameId,
 * externalServerId, reason, issuedBy, issuedAt, expiresAt, liftedAt, liftedBy, status, platformWrites:
 * [{ id, gameId, active, durationSeconds, state, attempts, lastError, queuedAt, writtenAt }] }] }`, newest
 * first, history included unless --active. @throws {NotFoundError} unknown workspace.
 */
const list: AdminCommand = {
  group: 'bans',
  name: 'list',
  summary: 'List the bans of a workspace with their history and platform write states',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    user: { type: 'string', valueName: 'USER', description: 'only bans of this externalId' },
    active: { type: 'boolean', description: 'only bans in force now (not lifted, not expired)' },
  },
  async run(ctx) {
    const bans = await listBans(
      ctx.db(),
      { workspaceId: ctx.args.uuid('workspace'), externalId: ctx.args.optionalString('user'), activeOnly: ctx.args.flag('active') },
      ctx.nowMs,
    );
    return {
      json: { bans },
      text: formatTable(
        ['ID', 'USER', 'SCOPE', 'COVERS', 'STATUS', 'EXPIRES', 'ISSUED', 'REASON', 'PLATFORM'],
        bans.map((b) => [b.id, b.externalId, b.scope, targetText(b), b.status, b.expiresAt ?? 'never', b.issuedAt, b.reason, writeText(b.platformWrites[0])]),
        '(no bans)',
      ),
    };
  },
};

/**
 * `bans reconcile --game G` → `{ gameId, checked, drift: [{ externalId, desired, lastWritten,
 * queuedWriteId }], rescheduled: [externalId] }`: re-queues a write for every user whose platform state
 * differs from their bans. @throws {NotFoundError} unknown game. @throws {ValidationError} the game does
 * not ban natively.
 */
const reconcile: AdminCommand = {
  group: 'bans',
  name: 'reconcile',
  summary: 'Compare a native-ban game\'s bans with what was written to the platform; re-queue drift',
  options: { game: { type: 'string', required: true, valueName: 'ID', description: 'game id' } },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const result = await withBans(ctx, (_bans, writes) => reconcilePlatformBans(ctx.db(), writes, gameId, ctx.nowMs));
    return {
      json: { ...result },
      text: [
        `game ${gameId}: ${result.checked} user(s) checked, ${result.drift.length} drifted (write queued), ${result.rescheduled.length} with a write already queued`,
        ...result.drift.map((d) => `  ${d.externalId}: platform ${d.lastWritten?.active ? 'banned' : 'not banned'}, should be ${d.desired.active ? 'banned' : 'not banned'}`),
      ].join('\n'),
    };
  },
};

export const banCommands: AdminCommand[] = [create, lift, list, reconcile];
