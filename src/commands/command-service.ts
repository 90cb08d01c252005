/**
 * Issuing moderation commands (spec: Command types; States › Command lifecycle, "(new) → pending").
 * Used by the operator CLI and by other concerns that need the game to act (doors, bans).
 *
 * Routing:
 * - `--server S`: the command goes to S's queue. S must be live (heartbeating, not yet declared gone),
 *   else 404 `server_not_live`: a command for a server that is gone could never be delivered.
 * - `--user U`: the command goes to the server whose roster holds U right now. If U is not online in the
 *   game it waits, pending, in U's queue until U appears in a roster of that game (then it moves to that
 *   server) or until it expires. If U leaves before the command was delivered, or U's server goes away
 *   before acking, the command follows U (back to U's queue, then to U's next server).
 * - Each command reaches at most one server, always one of its own game: every queue is under the game's
 *   key tag, and a heartbeat only sees its own game's keys.
 *
 * Expiry: `expiresInSeconds` defaults to {@link DEFAULT_EXPIRY_SECONDS} (5 minutes: at the longest
 * heartbeat interval, 60 s, that is five chances to deliver and ack), from {@link MIN_EXPIRY_SECONDS} to
 * {@link MAX_EXPIRY_SECONDS}. A command not acked or reported failed by then becomes `expired`.
 *
 * Queue cap: a server holds at most {@link SERVER_QUEUE_CAP} open commands (pending + dispatched and not
 * yet acked); a user who is not online at most {@link USER_QUEUE_CAP}. Beyond that, issuing fails with
 * 429 `command_queue_full` and nothing is stored. When a waiting user joins, their commands move to the
 * server even if that briefly puts it over the cap (by at most {@link USER_QUEUE_CAP}).
 *
 * Order of writes: the Postgres row (status `pending`, with a `pending` transition naming nobody but the
 * issuer) and a `command.issue` audit row (src/audit/audit-chain.ts) in one transaction first, then the
 * Redis state, so every later transition the workers flush finds its row. A refusal by the Redis script
 * deletes the row again and appends `command.refused` (the audit chain only grows); a crash in between
 * leaves a row without Redis state, which the expiry worker's reconciliation marks expired
 * (src/commands/command-expiry.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { COMMAND_HASH_GRACE_SECONDS } from '../store/keys.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { COMMAND_TARGETS, validateCommandPayload, type CommandType } from '../schemas/commands.js';
import { log } from '../log.js';
import { appendAudit } from '../audit/audit-chain.js';
import { CommandQueueFullError } from './command-errors.js';
import type { NudgeRequester } from './nudge-queue.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { issueCommandCall } from '../store/lua/issue-command.js';

/** Default time to live of a command, seconds. */
export const DEFAULT_EXPIRY_SECONDS = 300;
/** Shortest allowed expiry, seconds. */
export const MIN_EXPIRY_SECONDS = 5;
/** Longest allowed expiry, seconds (one day). */
export const MAX_EXPIRY_SECONDS = 86_400;
/** Most open commands (pending + dispatched) one server's queue holds. */
export const SERVER_QUEUE_CAP = 100;
/** Most commands waiting for one user who is not online. */
export const USER_QUEUE_CAP = 20;

/** Who a command is for: one running server, or one user wherever they are in the game. */
export type CommandTarget = { externalServerId: string; externalId?: undefined } | { externalId: string; externalServerId?: undefined };

export interface IssueCommandInput {
  gameId: string;
  /** One of the command types (src/schemas/commands.ts). */
  type: string;
  /** The per-type payload; omitted means `{}`. */
  payload?: unknown;
  target: CommandTarget;
  /** Seconds until the command expires; default {@link DEFAULT_EXPIRY_SECONDS}. */
  expiresInSeconds?: number;
  /** Who issued it (e.g. `cli:alice`); kept on the durable record and shown with every transition. */
  issuedBy: string;
  /** Server time of issuing, ms; default now. */
  nowMs?: number;
}

export interface IssuedCommand {
  id: string;
  gameId: string;
  type: CommandType;
  status: 'pending';
  target: { externalServerId: string | null; externalId: string | null };
  /** The server whose queue holds the command now, or null while it waits for its user. */
  routedTo: string | null;
  issuedAt: Date;
  expiresAt: Date;
  /** True when a nudge of the game's servers was requested. */
  nudgeRequested: boolean;
}

export interface CommandServiceDeps {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  /** Where nudges are requested; without one no nudge is sent. */
  nudges?: NudgeRequester;
}

const ID_MAX = 128;

function checkTarget(type: CommandType, target: CommandTarget): { server: string; user: string } {
  const server = target.externalServerId ?? '';
  const user = target.externalId ?? '';
  if ((server === '') === (user === '')) throw new ValidationError('give exactly one target: a server (externalServerId) or a user (externalId)', 'invalid_target');
  const value = server || user;
  if (value.length > ID_MAX) throw new ValidationError(`target id is longer than ${ID_MAX} characters`, 'invalid_target');
  const kind = COMMAND_TARGETS[type];
  if (kind === 'user' && !user) throw new ValidationError(`${type} is aimed at a user; give a user, not a server`, 'invalid_target');
  if (kind === 'server' && !server) throw new ValidationError(`${type} is aimed at a server; give a server, not a user`, 'invalid_target');
  return { server, user };
}

function checkExpiry(seconds: number | undefined): number {
  const s = seconds ?? DEFAULT_EXPIRY_SECONDS;
  if (!Number.isInteger(s) || s < MIN_EXPIRY_SECONDS || s > MAX_EXPIRY_SECONDS) {
    throw new ValidationError(`expiry must be an integer from ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS} seconds`, 'invalid_expiry');
  }
  return s;
}

/** What {@link checkIssueInput} returns: the input checked and normalised. */
export interface CheckedIssue {
  type: CommandType;
  payload: unknown;
  /** Target server, or '' for a user command. */
  server: string;
  /** Target user, or '' for a server command. */
  user: string;
  /** Seconds until expiry. */
  expiresIn: number;
  issuedBy: string;
}

/**
 * Checks everything about a command that needs no state (type, payload, target kind, expiry, issuer),
 * so a caller with side effects of its own (src/doors/door-admin-service.ts `issueDoorSetState`) can
 * refuse before making them.
 * @throws {ValidationError} 400 `invalid_command_type`, `invalid_payload`, `invalid_target`,
 *   `invalid_expiry`, or an empty issuer.
 */
export function checkIssueInput(input: Omit<IssueCommandInput, 'gameId' | 'nowMs'>): CheckedIssue {
  const { type, payload } = validateCommandPayload(input.type, input.payload);
  const { server, user } = checkTarget(type, input.target);
  const expiresIn = checkExpiry(input.expiresInSeconds);
  const issuedBy = input.issuedBy.trim();
  if (!issuedBy) throw new ValidationError('the issuer is required');
  return { type, payload, server, user, expiresIn, issuedBy };
}

/**
 * Issues one command: validates it, records it (Postgres, then Redis), routes it (see the module
 * comment), and requests a nudge when it went to a live server of a game with nudges enabled.
 * @returns the command as issued; its status is `pending`.
 * @throws {ValidationError} 400 `invalid_command_type`, `invalid_payload`, `invalid_target`,
 *   `invalid_expiry`, or an empty issuer.
 * @throws {NotFoundError} 404 unknown game, or `server_not_live` for a server target that is not live.
 * @throws {CommandQueueFullError} 429 `command_queue_full` when the destination queue is at its cap.
 */
export async function issueCommand(deps: CommandServiceDeps, input: IssueCommandInput): Promise<IssuedCommand> {
  const { type, payload, server, user, expiresIn, issuedBy } = checkIssueInput(input);
  const game = await deps.db.game.findUnique({
    where: { id: input.gameId },
    select: { id: true, workspaceId: true, nudgesEnabled: true, heartbeatIntervalSeconds: true },
  });
  if (!game) throw new NotFoundError(`game ${input.gameId} not found`);

  const id = randomUUID();
  const nowMs = input.nowMs ?? Date.now();
  const issuedAt = new Date(nowMs);
  const expiresAt = new Date(nowMs + expiresIn * 1000);
  const target = { externalServerId: server || null, externalId: user || null };
  await deps.db.$transaction(async (tx) => {
    await tx.command.create({
      data: {
        id,
        gameId: game.id,
        type,
        // Prisma's JSON input type refuses Record<string, unknown>; the payload was validated as a JSON object.
         
        payload: payload as object,
        ...target,
        status: 'pending',
        issuedBy,
        issuedAt,
        expiresAt,
        updatedAt: issuedAt,
        transitions: { create: { toStatus: 'pending', at: issuedAt } },
      },
    });
    await appendAudit(tx, {
      workspaceId: game.workspaceId,
      gameId: game.id,
      actor: issuedBy,
      action: 'command.issue',
      detail: { commandId: id, type, target, payload: payload as object, expiresAt: expiresAt.toISOString() },
    }, nowMs);
  });

  const keys = deps.keySpace.game(game.id);
  // Key order matters: the heartbeat script appends `"target"` by replacing the closing brace.
  const entry = JSON.stringify({ id, type, payload, issuedAt: issuedAt.toISOString(), expiresAt: expiresAt.toISOString() });
  const call = issueCommandCall(keys, {
    id,
    entryJson: entry,
    issuedAtMs: nowMs,
    expiresAtMs: expiresAt.getTime(),
    server,
    user,
    serverCap: SERVER_QUEUE_CAP,
    userCap: USER_QUEUE_CAP,
    ttlSeconds: expiresIn + COMMAND_HASH_GRACE_SECONDS,
  });
  const result = (await deps.redis.runScript('issueCommand', call.keys, call.args)) as [string, (string | number)?, string?];
  if (result[0] !== 'ok') {
    // The attempt is already in the audit chain, which only grows: record why it was refused.
    await deps.db.$transaction(async (tx) => {
      await tx.command.delete({ where: { id } });
      await appendAudit(tx, { workspaceId: game.workspaceId, gameId: game.id, actor: issuedBy, action: 'command.refused', detail: { commandId: id, reason: String(result[0]) } });
    });
    if (result[0] === 'server_not_live') throw new NotFoundError(`server ${server} is not live in game ${game.id}`, 'server_not_live');
    const full = result[2] ?? '';
    throw new CommandQueueFullError(
      full ? `server ${full}` : `the waiting queue of user ${user}`,
      Number(result[1]),
      full ? SERVER_QUEUE_CAP : USER_QUEUE_CAP,
      game.heartbeatIntervalSeconds,
    );
  }
  const routedTo = result[1] ? String(result[1]) : null;
  await deps.redis.zadd(deps.keySpace.global.commandExpiryIndex(), expiresAt.getTime(), `${game.id}:${id}`);

  let nudgeRequested = false;
  if (routedTo && game.nudgesEnabled && deps.nudges) {
    try {
      await deps.nudges.request(game.id);
      nudgeRequested = true;
    } catch (err) {
      // The nudge is only an optimisation (spec: Urgent nudge): the command is delivered on the next heartbeat.
      log.warn('could not request a nudge', { gameId: game.id, commandId: id, err: String(err) });
    }
  }
  return {
    id,
    gameId: game.id,
    type,
    status: 'pending',
    target: { externalServerId: server || null, externalId: user || null },
    routedTo,
    issuedAt,
    expiresAt,
    nudgeRequested,
  };
}
