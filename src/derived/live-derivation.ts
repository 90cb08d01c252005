/**
 * The live path of derived data (issue #4: auto clock-in shifts and payout accrual, "workers, never the
 * request path"). A worker role calls {@link LiveDerivation.tick} every few seconds; each tick finds the
 * members whose shifts may have changed and runs the same per-member recompute as `derived rebuild`
 * (shift-deriver.ts) for them, from the earliest change on. Which members:
 *
 * 1. New sessions: Session rows with an id above a cursor (Redis {@link GlobalKeys.derivedSessionCursor};
 *    ids come from a sequence, read through the primary key), at most `batch` per tick. Their members are
 *    recomputed from the session's open time. The cursor moves only after those recomputes committed, so a
 *    worker killed mid-tick repeats the batch next time, and repeating is a no-op (the recompute is
 *    idempotent). Ids are taken when a row is inserted but become visible when its transaction commits:
 *    with two flushers at once a lower id can commit after the cursor passed it. So the ids the cursor
 *    passed without a row are kept as gaps ({@link GlobalKeys.derivedSessionGaps}) and looked up again each
 *    tick for {@link SESSION_GAP_WAIT_MS}; most never fill (an `ON CONFLICT DO NOTHING` insert or a
 *    rolled-back transaction spends ids without a row).
 * 2. Closes: a close updates an existing Session row, so it is found through the members that hold an
 *    open shift ({@link GlobalKeys.openShifts}): one whose shift has no open, clock-in session left is
 *    recomputed, which closes the shift at its last heartbeat.
 * 3. Accrual: every `accrualRefreshMs` (default 60 s) every member with an open shift is recomputed, so
 *    the ledger row of an open shift follows the time so far.
 *
 * The open set is rebuilt from Postgres (every open Shift row) when a process starts and every
 * {@link OPEN_SET_RECONCILE_MS}: a Redis write lost in a crash, or two worker processes finishing one
 * member's recomputes in the opposite order of their removal from the set, can leave an open shift out of
 * it; the reconcile bounds how long such a shift waits to be closed.
 *
 * Rules changed after the fact (assignments, positions) apply to what the live path derives from then on;
 * `derived rebuild` re-applies them to a past period. A member added after their sessions were recorded
 * is derived by a rebuild, or from their next session on.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../store/prisma.js';
import { GlobalKeys } from '../store/keys.js';
import { FAR_FUTURE_MS, type ShiftDeriver } from './shift-deriver.js';
import { ruleCoversSession } from './shift-merge.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Default Session rows read per tick. */
export const DEFAULT_BATCH = 500;
/** Default period of the accrual refresh of open shifts, ms. */
export const DEFAULT_ACCRUAL_REFRESH_MS = 60_000;
/** How often each process re-adds every open shift in Postgres to the open set, ms. */
export const OPEN_SET_RECONCILE_MS = 10 * 60_000;
/**
 * How long an id the cursor passed without a row is looked up again, ms: far longer than a flush
 * transaction lasts (a batch's statements take well under a second; Prisma's interactive transactions
 * give up after 5 s).
 */
export const SESSION_GAP_WAIT_MS = 10 * 60_000;
/** Gap ranges kept at most; past it the oldest are dropped (a gap is a range however many ids it spans). */
export const MAX_SESSION_GAPS = 1_000;

/** What one tick did. */
export interface LiveTickResult {
  /** New Session rows read this tick. */
  sessionsRead: number;
  /** Members recomputed this tick. */
  membersRecomputed: number;
  /** False when more new sessions are waiting than one batch took. */
  caughtUp: boolean;
}

/** workspaceId → memberId → earliest instant (ms) that may have changed. */
type Touched = Map<string, Map<string, number>>;

/** A Session row as the live derivation reads it. */
interface SessionRow {
  id: bigint;
  gameId: string;
  externalId: string;
  openedAt: Date;
}

/** Session ids `from`..`to` (inclusive) the cursor passed without a row, first seen at `sinceMs`. */
interface IdGap {
  from: bigint;
  to: bigint;
  sinceMs: number;
}

const SESSION_SELECT = { id: true, gameId: true, externalId: true, openedAt: true } as const;

/** The gaps between `cursor` and the ascending ids of `rows` (none after the last row). */
function gapsBefore(cursor: bigint, rows: SessionRow[], sinceMs: number): IdGap[] {
  const gaps: IdGap[] = [];
  let expected = cursor + 1n;
  for (const { id } of rows) {
    if (id > expected) gaps.push({ from: expected, to: id - 1n, sinceMs });
    expected = id + 1n;
  }
  return gaps;
}

/** What is left of `gap` once the ids of `found` are taken out of it. */
function splitGap(gap: IdGap, found: bigint[]): IdGap[] {
  const rest: IdGap[] = [];
  let from = gap.from;
  for (const id of found.filter((x) => x >= gap.from && x <= gap.to).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (id > from) rest.push({ from, to: id - 1n, sinceMs: gap.sinceMs });
    from = id + 1n;
  }
  if (from <= gap.to) rest.push({ from, to: gap.to, sinceMs: gap.sinceMs });
  return rest;
}

const gapMember = (g: IdGap): string => `${g.from}-${g.to}`;

function touch(touched: Touched, workspaceId: string, memberId: string, fromMs: number): void {
  const members = touched.get(workspaceId) ?? new Map<string, number>();
  members.set(memberId, Math.min(members.get(memberId) ?? Infinity, fromMs));
  touched.set(workspaceId, members);
}

/**
 * The live path (see the module comment). One instance per worker process: it remembers when it last
 * refreshed accruals and whether it has checked the open set since it started.
 */
export class LiveDerivation {
  private readonly keys: GlobalKeys;
  private lastAccrualRefreshMs = -Infinity;
  private lastReconcileMs = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly redis: Redis,
    keySpace: KeySpace,
    private readonly deriver: ShiftDeriver,
    private readonly opts: { batch?: number; accrualRefreshMs?: number } = {},
  ) {
    this.keys = keySpace.global;
  }

  /**
   * One pass at server time `nowMs` (ms). Safe to run concurrently with itself and with a rebuild
   * (per-member locks); safe to kill at any point.
   * @throws on Postgres or Redis failure (the next tick retries the same work).
   */
  async tick(nowMs = Date.now()): Promise<LiveTickResult> {
    if (nowMs - this.lastReconcileMs >= OPEN_SET_RECONCILE_MS) await this.reconcileOpenSet(nowMs);
    const touched: Touched = new Map();
    const batch = this.opts.batch ?? DEFAULT_BATCH;
    const gaps = await this.openGaps(nowMs);
    const late = gaps.length ? await this.db.session.findMany({ where: { OR: gaps.map((g) => ({ id: { gte: g.from, lte: g.to } })) }, select: SESSION_SELECT }) : [];
    const cursor = BigInt((await this.redis.get(this.keys.derivedSessionCursor())) ?? '0');
    const fresh = await this.db.session.findMany({ where: { id: { gt: cursor } }, orderBy: { id: 'asc' }, take: batch, select: SESSION_SELECT });
    await this.touchSessions(touched, [...late, ...fresh]);
    const refresh = nowMs - this.lastAccrualRefreshMs >= (this.opts.accrualRefreshMs ?? DEFAULT_ACCRUAL_REFRESH_MS);
    await this.touchOpenShifts(touched, refresh, nowMs);

    let recomputed = 0;
    for (const [workspaceId, members] of touched) {
      const ws = await this.deriver.loadWorkspace(workspaceId);
      for (const [memberId, fromMs] of members) {
        await this.deriver.recomputeMember(ws, memberId, fromMs, FAR_FUTURE_MS);
        recomputed++;
      }
    }
    // Gaps first, then the cursor: killed in between, the next tick reads the same rows and gaps again.
    await this.saveGaps(gaps, late, gapsBefore(cursor, fresh, nowMs), nowMs);
    if (fresh.length) await this.redis.set(this.keys.derivedSessionCursor(), fresh.at(-1)!.id.toString());
    if (refresh) this.lastAccrualRefreshMs = nowMs;
    return { sessionsRead: fresh.length + late.length, membersRecomputed: recomputed, caughtUp: fresh.length < batch };
  }

  /** The gaps still looked up at `nowMs`, oldest first. */
  private async openGaps(nowMs: number): Promise<IdGap[]> {
    const entries = await this.redis.zrangebyscore(this.keys.derivedSessionGaps(), nowMs - SESSION_GAP_WAIT_MS, '+inf', 'WITHSCORES');
    const gaps: IdGap[] = [];
    for (let i = 0; i < entries.length; i += 2) {
      const [from, to] = entries[i]!.split('-');
      gaps.push({ from: BigInt(from!), to: BigInt(to!), sinceMs: Number(entries[i + 1]) });
    }
    return gaps;
  }

  /**
   * Replaces the gaps `late` rows were found in by what is left of them, adds `fresh` gaps (keeping an
   * existing member's first-seen time), and drops gaps past {@link SESSION_GAP_WAIT_MS} or beyond
   * {@link MAX_SESSION_GAPS}. One key, one MULTI (also on a Cluster).
   */
  private async saveGaps(gaps: IdGap[], late: SessionRow[], fresh: IdGap[], nowMs: number): Promise<void> {
    const key = this.keys.derivedSessionGaps();
    const tx = this.redis.multi();
    if (late.length) {
      const found = late.map((r) => r.id);
      for (const gap of gaps.filter((g) => found.some((id) => id >= g.from && id <= g.to))) {
        tx.zrem(key, gapMember(gap));
        for (const rest of splitGap(gap, found)) tx.zadd(key, 'NX', rest.sinceMs, gapMember(rest));
      }
    }
    for (const gap of fresh) tx.zadd(key, 'NX', gap.sinceMs, gapMember(gap));
    tx.zremrangebyscore(key, '-inf', `(${nowMs - SESSION_GAP_WAIT_MS}`);
    tx.zremrangebyrank(key, 0, -(MAX_SESSION_GAPS + 1));
    await tx.exec();
  }

  /** Touches the members of `rows`' sessions from each session's open time. */
  private async touchSessions(touched: Touched, rows: SessionRow[]): Promise<void> {
    if (!rows.length) return;
    const games = await this.db.game.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.gameId))] } }, select: { id: true, workspaceId: true } });
    const workspaceOf = new Map(games.map((g) => [g.id, g.workspaceId]));
    const byWorkspace = new Map<string, Set<string>>();
    for (const r of rows) {
      const ws = workspaceOf.get(r.gameId);
      if (ws) byWorkspace.set(ws, (byWorkspace.get(ws) ?? new Set()).add(r.externalId));
    }
    const members = byWorkspace.size
      ? await this.db.member.findMany({
          where: { OR: [...byWorkspace].map(([workspaceId, ids]) => ({ workspaceId, externalId: { in: [...ids] } })) },
          select: { id: true, workspaceId: true, externalId: true },
        })
      : [];
    const memberOf = new Map(members.map((m) => [`${m.workspaceId}\n${m.externalId}`, m.id]));
    for (const r of rows) {
      const ws = workspaceOf.get(r.gameId);
      const memberId = ws && memberOf.get(`${ws}\n${r.externalId}`);
      if (ws && memberId) touch(touched, ws, memberId, r.openedAt.getTime());
    }
  }

  /**
   * Touches members of the open set: all of them when `refresh`, else those without an open clock-in
   * session any more (their shift must close). From the start of their open shift.
   */
  private async touchOpenShifts(touched: Touched, refresh: boolean, nowMs: number): Promise<void> {
    const entries = (await this.redis.smembers(this.keys.openShifts())).map((e) => e.split(':') as [string, string]);
    if (!entries.length) return;
    const memberIds = entries.map(([, m]) => m);
    const openShifts = await this.db.shift.findMany({ where: { memberId: { in: memberIds }, closedAt: null }, select: { memberId: true, openedAt: true } });
    const openedAt = new Map(openShifts.map((s) => [s.memberId, s.openedAt.getTime()]));
    const stillOpen = refresh ? new Set<string>() : await this.membersWithOpenClockInSession(memberIds);
    for (const [workspaceId, memberId] of entries) {
      if (refresh || !stillOpen.has(memberId)) touch(touched, workspaceId, memberId, openedAt.get(memberId) ?? nowMs);
    }
  }

  /** Of `memberIds`, those with an open session that one of their positions clocks in for. */
  private async membersWithOpenClockInSession(memberIds: string[]): Promise<Set<string>> {
    const members = await this.db.member.findMany({
      where: { id: { in: memberIds } },
      select: {
        id: true,
        externalId: true,
        workspace: { select: { games: { select: { id: true } } } },
        assignments: { select: { position: { select: { autoClockIn: true, clockInGameIds: true, clockInScopeIds: true } } } },
      },
    });
    const gameIds = [...new Set(members.flatMap((m) => m.workspace.games.map((g) => g.id)))];
    const externalIds = [...new Set(members.map((m) => m.externalId))];
    if (!gameIds.length || !externalIds.length) return new Set();
    const open = await this.db.session.findMany({
      where: { gameId: { in: gameIds }, externalId: { in: externalIds }, closedAt: null },
      select: { gameId: true, externalId: true, externalScopeId: true },
    });
    const result = new Set<string>();
    for (const m of members) {
      const games = new Set(m.workspace.games.map((g) => g.id));
      const rules = m.assignments.map((a) => a.position);
      if (open.some((s) => s.externalId === m.externalId && games.has(s.gameId) && rules.some((r) => ruleCoversSession(r, s)))) result.add(m.id);
    }
    return result;
  }

  /**
   * Adds every member with an open shift in Postgres to the open set (see the module comment); the
   * deriver reports those the set did not hold as clock-ins to the door side (shift-deriver.ts).
   */
  private async reconcileOpenSet(nowMs: number): Promise<void> {
    const open = await this.db.shift.findMany({ where: { closedAt: null }, select: { workspaceId: true, memberId: true, member: { select: { externalId: true } } } });
    await this.deriver.adoptOpenShifts(open.map((s) => ({ workspaceId: s.workspaceId, memberId: s.memberId, externalId: s.member.externalId })));
    this.lastReconcileMs = nowMs;
  }
}
