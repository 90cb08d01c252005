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
 *    idempotent).
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
    const { read, lastId } = await this.touchNewSessions(touched, batch);
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
    if (lastId !== null) await this.redis.set(this.keys.derivedSessionCursor(), lastId.toString());
    if (refresh) this.lastAccrualRefreshMs = nowMs;
    return { sessionsRead: read, membersRecomputed: recomputed, caughtUp: read < batch };
  }

  /** Reads up to `batch` sessions past the cursor and touches their members. */
  private async touchNewSessions(touched: Touched, batch: number): Promise<{ read: number; lastId: bigint | null }> {
    const cursor = BigInt((await this.redis.get(this.keys.derivedSessionCursor())) ?? '0');
    const rows = await this.db.session.findMany({
      where: { id: { gt: cursor } },
      orderBy: { id: 'asc' },
      take: batch,
      select: { id: true, gameId: true, externalId: true, openedAt: true },
    });
    if (!rows.length) return { read: 0, lastId: null };
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
    return { read: rows.length, lastId: rows.at(-1)!.id };
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
