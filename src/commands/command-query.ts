/**
 * Where commands stand, for moderators (operator CLI `commands list|show`). The durable record (Command,
 * CommandTransition) says who issued what and every recorded transition with its time; the live Redis
 * hash, while it exists, gives the current status without waiting for the flusher (≈ 1 s behind). So
 * `status` here is the live one, and a transition the flusher has not written yet shows up in `status`
 * before it shows up in `transitions`.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { GameKeys } from '../store/keys.js';
import { NotFoundError } from '../errors.js';
import type { CommandStatus } from '../schemas/commands.js';

/** One command as a moderator sees it. Times are Dates (printed as ISO 8601). */
export interface CommandView {
  id: string;
  gameId: string;
  type: string;
  target: { externalServerId: string | null; externalId: string | null };
  /** Live status when Redis still holds the command, else the recorded one. */
  status: string;
  /** Server whose queue holds the command or that it was delivered to; null while waiting for its user. */
  server: string | null;
  issuedBy: string;
  issuedAt: Date;
  expiresAt: Date;
  /** Reason of a failure report (status `failed`). */
  failureReason: string | null;
}

/** One recorded state change. */
export interface TransitionView {
  toStatus: string;
  at: Date;
  externalServerId: string | null;
  reason: string | null;
}

export interface CommandDetail extends CommandView {
  payload: unknown;
  transitions: TransitionView[];
}

export interface ListFilter {
  gameId: string;
  /** Only these (live) statuses; default all. */
  statuses?: readonly CommandStatus[];
  /** Only commands aimed at this user. */
  externalId?: string;
  /** Only commands issued by this issuer. */
  issuedBy?: string;
  /** Most rows, newest first; default 100. */
  limit?: number;
}

type Row = {
  id: string;
  gameId: string;
  type: string;
  externalServerId: string | null;
  externalId: string | null;
  status: string;
  issuedBy: string;
  issuedAt: Date;
  expiresAt: Date;
  failureReason: string | null;
};

const OPEN = ['pending', 'dispatched'];

/** Overlays the live hash state (status, server, failure reason) on recorded rows. */
async function withLiveState(redis: AppRedis, redisPrefix: string, rows: Row[]): Promise<CommandView[]> {
  const pipeline = redis.pipeline();
  for (const r of rows) pipeline.hmget(new GameKeys(redisPrefix, r.gameId).command(r.id), 'status', 'server', 'reason');
  const live = rows.length ? ((await pipeline.exec()) ?? []) : [];
  return rows.map((r, i) => {
    const [status, server, reason] = (live[i]?.[1] ?? []) as (string | null)[];
    const liveStatus = status ?? r.status;
    return {
      id: r.id,
      gameId: r.gameId,
      type: r.type,
      // A user command's row gets the server it was delivered to, so the target is the user alone.
      target: r.externalId ? { externalServerId: null, externalId: r.externalId } : { externalServerId: r.externalServerId, externalId: null },
      status: liveStatus,
      server: (status ? server : r.externalServerId) || null,
      issuedBy: r.issuedBy,
      issuedAt: r.issuedAt,
      expiresAt: r.expiresAt,
      failureReason: liveStatus === 'failed' ? (r.failureReason ?? reason ?? null) : null,
    };
  });
}

/**
 * Commands of a game, newest first, filtered by live status, target user and issuer. With a status
 * filter, the newest `limit` rows whose recorded status matches or is still open are read and then
 * filtered by their live status, so fewer than `limit` may come back.
 * @throws {NotFoundError} unknown game.
 */
export async function listCommands(db: Db, redis: AppRedis, redisPrefix: string, filter: ListFilter): Promise<CommandView[]> {
  if (!(await db.game.findUnique({ where: { id: filter.gameId }, select: { id: true } }))) throw new NotFoundError(`game ${filter.gameId} not found`);
  const wanted = filter.statuses?.length ? new Set<string>(filter.statuses) : null;
  // A recorded open row may already be terminal in Redis (flush lag), so open rows are always fetched.
  const recorded = wanted ? [...new Set([...wanted, ...OPEN])] : undefined;
  const rows = await db.command.findMany({
    where: {
      gameId: filter.gameId,
      ...(recorded ? { status: { in: recorded } } : {}),
      ...(filter.externalId ? { externalId: filter.externalId } : {}),
      ...(filter.issuedBy ? { issuedBy: filter.issuedBy } : {}),
    },
    orderBy: [{ issuedAt: 'desc' }, { id: 'asc' }],
    take: filter.limit ?? 100,
  });
  const views = await withLiveState(redis, redisPrefix, rows);
  return wanted ? views.filter((v) => wanted.has(v.status)) : views;
}

/**
 * One command with its payload and every recorded transition, oldest first.
 * @throws {NotFoundError} `unknown_command` when no command has that id.
 */
export async function showCommand(db: Db, redis: AppRedis, redisPrefix: string, id: string): Promise<CommandDetail> {
  const row = await db.command.findUnique({ where: { id }, include: { transitions: { orderBy: [{ at: 'asc' }, { id: 'asc' }] } } });
  if (!row) throw new NotFoundError(`command ${id} not found`, 'unknown_command');
  const [view] = await withLiveState(redis, redisPrefix, [row]);
  return {
    ...view!,
    payload: row.payload,
    transitions: row.transitions.map((t) => ({ toStatus: t.toStatus, at: t.at, externalServerId: t.externalServerId, reason: t.reason })),
  };
}
