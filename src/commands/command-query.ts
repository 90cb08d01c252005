/**
 * Where commands stand, for moderators (operator CLI `commands list|show`, the console). Issue #21
 * "Consistent command view": a command's status and its transitions always come from **one** source, so
 * a status is never shown without the transition that set it.
 *
 * - **live** — the command's Redis hash while it exists (until `COMMAND_HASH_GRACE_SECONDS` after it
 *   ends): the Lua scripts that change `status` write the transition beside it in the same command
 *   (`t:<status>` = `<ms>|<server>|<reason>`), so one HGETALL reads both as of one instant, without
 *   waiting for the flusher (≈ 1 s behind).
 * - **recorded** — Postgres (`Command.status` and `CommandTransition`), once the hash is gone, or for a
 *   hash that predates the `t:` fields: the flusher writes a status and its transition in one
 *   transaction (src/commands/command-log-flusher.ts), and the issuer the row with its `pending`
 *   transition.
 *
 * Like `CommandTransition`, the live view keeps the first transition into each status: a user command
 * that follows its user to another server is re-dispatched without a second `dispatched` transition.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { NotFoundError } from '../errors.js';
import { COMMAND_STATUSES, type CommandStatus } from '../schemas/commands.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** One state change. */
export interface TransitionView {
  toStatus: string;
  at: Date;
  externalServerId: string | null;
  reason: string | null;
}

/** One command as a moderator sees it. Times are Dates (printed as ISO 8601). */
export interface CommandView {
  id: string;
  gameId: string;
  type: string;
  target: { externalServerId: string | null; externalId: string | null };
  /** The current status, from {@link source}. */
  status: string;
  /** When the transition that set {@link status} happened (always one of {@link transitions}). */
  statusAt: Date;
  /** Server whose queue holds the command or that it was delivered to; null while waiting for its user. */
  server: string | null;
  issuedBy: string;
  issuedAt: Date;
  expiresAt: Date;
  /** Reason of a failure report (status `failed`). */
  failureReason: string | null;
  /** Every transition so far, oldest first, from the same source as {@link status}. */
  transitions: TransitionView[];
  /** `live` (the Redis command hash) or `recorded` (Postgres); see the module comment. */
  source: 'live' | 'recorded';
}

export interface CommandDetail extends CommandView {
  payload: unknown;
}

export interface ListFilter {
  gameId: string;
  /** Only these statuses; default all. */
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
  payload: unknown;
  externalServerId: string | null;
  externalId: string | null;
  status: string;
  issuedBy: string;
  issuedAt: Date;
  expiresAt: Date;
  failureReason: string | null;
  transitions: { toStatus: string; at: Date; externalServerId: string | null; reason: string | null }[];
};

const OPEN = ['pending', 'dispatched'];
const RANK = new Map<string, number>(COMMAND_STATUSES.map((s, i) => [s, i]));

function byTime(a: TransitionView, b: TransitionView): number {
  return a.at.getTime() - b.at.getTime() || (RANK.get(a.toStatus) ?? 9) - (RANK.get(b.toStatus) ?? 9);
}

/** The `t:<status>` fields of a command hash, oldest first. */
export function liveTransitions(hash: Record<string, string>): TransitionView[] {
  const out: TransitionView[] = [];
  for (const [field, value] of Object.entries(hash)) {
    if (!field.startsWith('t:')) continue;
    const first = value.indexOf('|');
    const second = value.indexOf('|', first + 1);
    if (first < 0 || second < 0) continue;
    const at = Number(value.slice(0, first));
    if (!Number.isFinite(at)) continue;
    out.push({ toStatus: field.slice(2), at: new Date(at), externalServerId: value.slice(first + 1, second) || null, reason: value.slice(second + 1) || null });
  }
  return out.sort(byTime);
}

function target(r: Row): CommandView['target'] {
  // A user command's row gets the server it was delivered to, so the target is the user alone.
  return r.externalId ? { externalServerId: null, externalId: r.externalId } : { externalServerId: r.externalServerId, externalId: null };
}

/** The view of `r` from its live hash when that hash holds the transition of its status, else from Postgres. */
function view(r: Row, hash: Record<string, string> | null): CommandView {
  const common = { id: r.id, gameId: r.gameId, type: r.type, target: target(r), issuedBy: r.issuedBy, issuedAt: r.issuedAt, expiresAt: r.expiresAt };
  const status = hash?.status;
  const live = hash && status ? liveTransitions(hash) : [];
  const setBy = live.find((t) => t.toStatus === status);
  if (status && setBy) {
    return {
      ...common,
      status,
      statusAt: setBy.at,
      server: hash.server || null,
      failureReason: status === 'failed' ? (setBy.reason ?? hash.reason ?? null) : null,
      transitions: live,
      source: 'live',
    };
  }
  const transitions = r.transitions.map((t) => ({ toStatus: t.toStatus, at: t.at, externalServerId: t.externalServerId, reason: t.reason })).sort(byTime);
  const recordedBy = transitions.find((t) => t.toStatus === r.status);
  return {
    ...common,
    status: r.status,
    // The issuer writes the row with its pending transition, the flusher a status with its transition.
    statusAt: recordedBy?.at ?? r.issuedAt,
    server: r.externalServerId,
    failureReason: r.status === 'failed' ? r.failureReason : null,
    transitions,
    source: 'recorded',
  };
}

/** The command hashes of `rows` (null where none), one pipelined round trip. */
async function hashes(redis: AppRedis, keySpace: KeySpace, rows: Row[]): Promise<(Record<string, string> | null)[]> {
  if (!rows.length) return [];
  const pipeline = redis.pipeline();
  for (const r of rows) pipeline.hgetall(keySpace.game(r.gameId).command(r.id));
  const replies = (await pipeline.exec()) ?? [];
  return rows.map((_r, i) => {
    const h = replies[i]?.[1] as Record<string, string> | undefined;
    return h && Object.keys(h).length ? h : null;
  });
}

const ROW_INCLUDE = { transitions: { orderBy: [{ at: 'asc' as const }, { id: 'asc' as const }] } };

/**
 * Commands of a game, newest first, filtered by status, target user and issuer. With a status filter,
 * the newest `limit` rows whose recorded status matches or is still open are read and then filtered by
 * their current status, so fewer than `limit` may come back.
 * @throws {NotFoundError} unknown game.
 */
export async function listCommands(db: Db, redis: AppRedis, keySpace: KeySpace, filter: ListFilter): Promise<CommandView[]> {
  if (!(await db.game.findUnique({ where: { id: filter.gameId }, select: { id: true } }))) throw new NotFoundError(`game ${filter.gameId} not found`);
  const wanted = filter.statuses?.length ? new Set<string>(filter.statuses) : null;
  // A recorded open row may already be terminal in Redis (flush lag), so open rows are always fetched.
  const recorded = wanted ? [...new Set([...wanted, ...OPEN])] : undefined;
  const rows = (await db.command.findMany({
    where: {
      gameId: filter.gameId,
      ...(recorded ? { status: { in: recorded } } : {}),
      ...(filter.externalId ? { externalId: filter.externalId } : {}),
      ...(filter.issuedBy ? { issuedBy: filter.issuedBy } : {}),
    },
    include: ROW_INCLUDE,
    orderBy: [{ issuedAt: 'desc' }, { id: 'asc' }],
    take: filter.limit ?? 100,
  })) as Row[];
  const live = await hashes(redis, keySpace, rows);
  const views = rows.map((r, i) => view(r, live[i]!));
  return wanted ? views.filter((v) => wanted.has(v.status)) : views;
}

/**
 * One command with its payload, its status and every transition, oldest first, from one source.
 * @throws {NotFoundError} `unknown_command` when no command has that id.
 */
export async function showCommand(db: Db, redis: AppRedis, keySpace: KeySpace, id: string): Promise<CommandDetail> {
  const row = (await db.command.findUnique({ where: { id }, include: ROW_INCLUDE })) as Row | null;
  if (!row) throw new NotFoundError(`command ${id} not found`, 'unknown_command');
  const [hash] = await hashes(redis, keySpace, [row]);
  return { ...view(row, hash!), payload: row.payload };
}
