/**
 * The access log as moderators read it (issue #21, "Access log for moderators"): every grant and denial
 * the door endpoints answered (written by the `flush-access-log` worker role, src/doors/access-log-flusher.ts),
 * newest first, filtered by door, user, decision and time, with the policy that decided each one.
 * Used by `admin doors access-log` and the console (`GET /console/api/games/:gameId/access-log`).
 *
 * Pagination is by keyset, never OFFSET: rows are ordered by (`at` desc, `id` desc) and a page ends with
 * an opaque `nextCursor` naming its last row; the next page asks for rows strictly before it. Every filter
 * combination walks an index that starts with the game and ends with (`at` desc, `id` desc)
 * (prisma/schema.prisma, AccessLog), so a page costs the same at the millionth row as at the first.
 *
 * Rows older than the retention (`ACCESS_LOG_RETENTION_DAYS`, default 30) are deleted by the
 * `prune-access-log` worker role (src/doors/access-log-retention.ts).
 */
import { Prisma } from '@prisma/client';
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';

/** Default and largest page size. */
export const ACCESS_LOG_PAGE_DEFAULT = 50;
export const ACCESS_LOG_PAGE_MAX = 1000;

export interface AccessLogFilter {
  gameId: string;
  /** Only this door key. */
  doorKey?: string;
  /** Only this user (externalId). */
  externalId?: string;
  /** Only grants (`allow`) or denials (`deny`). */
  decision?: string;
  /**
   * Only rows at or after this time: an RFC 3339 time with an offset, a date (00:00 UTC), or a span back
   * from now such as `90s`, `15m`, `2h`, `7d`.
   */
  since?: string;
  /** Rows per page, 1 to {@link ACCESS_LOG_PAGE_MAX}; default {@link ACCESS_LOG_PAGE_DEFAULT}. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** One answered decision. */
export interface AccessLogEntry {
  /** Decimal string (bigint). */
  id: string;
  /** When the decision was answered (server time). */
  at: Date;
  /** The server that asked (null when the request named none). */
  externalServerId: string | null;
  externalId: string;
  doorKey: string;
  decision: 'allow' | 'deny';
  /** forced_locked, forced_unlocked, policy_deny:<id>, policy_allow:<id>, default_allow or default_deny. */
  reason: string;
  /** The policy that decided it; null for forced states and door defaults. */
  policyId: string | null;
}

export interface AccessLogPage {
  entries: AccessLogEntry[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
  /** The resolved `since`, when one was given. */
  since: Date | null;
}

const SPAN = /^(\d{1,6})([smhd])$/;
const SPAN_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `since` as an instant at server time `nowMs`.
 * @throws {ValidationError} 400 `invalid_since` when it is none of the accepted forms.
 */
export function parseSince(value: string, nowMs: number): Date {
  const v = value.trim();
  const span = SPAN.exec(v);
  const ms = span ? nowMs - Number(span[1]) * SPAN_MS[span[2]!]! : DATE_ONLY.test(v) ? Date.parse(`${v}T00:00:00Z`) : RFC3339.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new ValidationError(`since must be an RFC 3339 time (2026-11-16T09:00:00Z), a date, or a span back from now such as 15m, 2h, 7d (got "${value}")`, 'invalid_since');
  return new Date(ms);
}

/** The cursor naming row (`atMs`, `id`). */
function encodeCursor(atMs: number, id: string): string {
  return Buffer.from(`${atMs}:${id}`, 'utf8').toString('base64url');
}

/** @throws {ValidationError} 400 `invalid_cursor`. */
function decodeCursor(cursor: string): { at: Date; id: string } {
  const m = /^(\d{1,15}):(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new ValidationError('cursor is not one this service issued', 'invalid_cursor');
  return { at: new Date(Number(m[1])), id: m[2]! };
}

/** A validated filter, as {@link accessLogSql} takes it. */
export interface ResolvedAccessLogFilter {
  gameId: string;
  doorKey?: string;
  externalId?: string;
  decision?: string;
  since: Date | null;
  /** The row the previous page ended with. */
  after: { at: Date; id: string } | null;
  /** Rows to read. */
  limit: number;
}

/**
 * The statement of one page: newest first by (`at`, `id`), strictly before `after`. Exported so a test
 * can EXPLAIN it and see each filter served by its index without a sort.
 */
export function accessLogSql(f: ResolvedAccessLogFilter): Prisma.Sql {
  const conditions: Prisma.Sql[] = [Prisma.sql`"gameId" = ${f.gameId}::uuid`];
  if (f.doorKey !== undefined) conditions.push(Prisma.sql`"doorKey" = ${f.doorKey}`);
  if (f.externalId !== undefined) conditions.push(Prisma.sql`"externalId" = ${f.externalId}`);
  if (f.decision !== undefined) conditions.push(Prisma.sql`"decision" = ${f.decision}`);
  if (f.since) conditions.push(Prisma.sql`"at" >= ${f.since}`);
  if (f.after) conditions.push(Prisma.sql`("at", "id") < (${f.after.at}, ${f.after.id}::bigint)`);
  return Prisma.sql`
    SELECT "id"::text AS "id", "at", "externalServerId", "externalId", "doorKey", "decision", "reason", "policyId"::text AS "policyId"
    FROM "AccessLog"
    WHERE ${Prisma.join(conditions, ' AND ')}
    ORDER BY "AccessLog"."at" DESC, "AccessLog"."id" DESC -- qualified: the select list re-exports id as text
    LIMIT ${f.limit}`;
}

/**
 * One page of `filter.gameId`'s access log, newest first, at server time `nowMs`.
 * @throws {NotFoundError} 404 `unknown_game`. @throws {ValidationError} 400 `invalid_request` (decision,
 *   limit, door or user length), `invalid_since`, `invalid_cursor`.
 */
export async function queryAccessLog(db: Db, filter: AccessLogFilter, nowMs = Date.now()): Promise<AccessLogPage> {
  const limit = filter.limit ?? ACCESS_LOG_PAGE_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > ACCESS_LOG_PAGE_MAX) throw new ValidationError(`limit must be from 1 to ${ACCESS_LOG_PAGE_MAX}`);
  if (filter.decision !== undefined && filter.decision !== 'allow' && filter.decision !== 'deny') throw new ValidationError('decision must be allow or deny');
  for (const [what, v] of [['door key', filter.doorKey], ['user', filter.externalId]] as const) {
    if (v !== undefined && (!v || v.length > 128)) throw new ValidationError(`${what} must be 1 to 128 characters`);
  }
  const since = filter.since !== undefined ? parseSince(filter.since, nowMs) : null;
  const after = filter.cursor !== undefined ? decodeCursor(filter.cursor) : null;
  if (!UUID_RE.test(filter.gameId) || !(await db.game.findUnique({ where: { id: filter.gameId.toLowerCase() }, select: { id: true } }))) {
    throw new NotFoundError(`game ${filter.gameId} not found`, 'unknown_game');
  }

  const rows = await db.$queryRaw<{ id: string; at: Date; externalServerId: string | null; externalId: string; doorKey: string; decision: string; reason: string; policyId: string | null }[]>(
    accessLogSql({ gameId: filter.gameId.toLowerCase(), doorKey: filter.doorKey, externalId: filter.externalId, decision: filter.decision, since, after, limit: limit + 1 }),
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    entries: page.map((r) => ({ ...r, at: new Date(r.at), decision: r.decision as 'allow' | 'deny' })),
    nextCursor: rows.length > limit && last ? encodeCursor(new Date(last.at).getTime(), last.id) : null,
    since,
  };
}
