/**
 * The one recompute of derived data for one member over one period: shifts from stored sessions, then
 * the payout ledger rows of those shifts (rules in shift-merge.ts and payout-math.ts). Both the live path
 * (live-derivation.ts, a worker role) and `derived rebuild` (rebuild.ts) call {@link ShiftDeriver.recomputeMember};
 * that is why a rebuild over a period gives exactly what the live path stored.
 *
 * How a period is made whole: shifts are connected runs of sessions, so a period cut through one would
 * give a different shift. The recompute therefore widens [from, to] until it holds every shift (computed
 * from sessions, or stored) that overlaps it, whole (a fixpoint, usually reached in one to three rounds),
 * then replaces the member's stored shifts in that widened period with the computed ones: unchanged shifts
 * keep their row and id, changed ones are updated, vanished ones deleted (their ledger row with them).
 *
 * Concurrency and failure: each member is recomputed in one Postgres transaction that first takes an
 * advisory lock on the member, so the live worker and a rebuild never interleave on one member; a crash
 * rolls back to the previous consistent state, and running again gives the same result (idempotent).
 * Quota progress is not stored: quota-progress.ts reads it from the shifts when asked.
 *
 * Members with an open shift are kept in the Redis set {@link GlobalKeys.openShifts} (`<workspaceId>:<memberId>`)
 * so the live path finds shifts to close or accrue without scanning the Shift table: added before the
 * transaction commits and removed only after it committed, so one recompute never leaves an open shift
 * out of it (the live path reconciles the set with Postgres periodically for the rarer cases).
 *
 * When a member's clock-in state flips the change is reported after commit ({@link SubjectChanges}),
 * because door policies can require "clocked in" and the door side caches decisions in Redis. A flip is
 * judged against that Redis, not only against Postgres: the open set is the one record in the Redis the
 * doors read of who holds an open shift, so a recompute reports when its result changes the set (the
 * member enters it, or leaves it) as well as when Postgres's own state flipped in this transaction. A
 * clock-in committed by another process whose report never reached this Redis (a worker of another
 * deployment on the same database, such as a single-Redis stack still running beside a new Redis Cluster;
 * a worker that died between commit and report) is therefore reported by this deployment's next recompute
 * of the member, instead of leaving the member's cached `clockedIn` decisions in place for their whole TTL
 * (issue #33). {@link adoptOpenShifts} does the same for the open shifts the live path's reconcile adds.
 */
import { randomUUID } from 'node:crypto';
import type { Prisma } from '@prisma/client';
import type { Redis } from 'ioredis';
import type { Db } from '../store/prisma.js';
import { mergeSessions, ruleCoversSession, type SessionSpan, type ShiftSpan } from './shift-merge.js';
import { bestPaidPosition, payoutAmountMinor, wholeSeconds, type PayRule } from './payout-math.js';
import { reportMemberChange, type SubjectChanges } from '../workspace/subject-changes.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Stand-in for "no end" in period bounds (ms): 9999-12-31. */
export const FAR_FUTURE_MS = Date.UTC(9999, 11, 31);
/** Rounds of period widening before giving up (a real history converges in one to three). */
const MAX_WIDENING_ROUNDS = 1000;
/** Sessions are read this far around the period being widened, ms (at least the longest bridge). */
const WIDENING_MARGIN_MS = 6 * 3_600_000;
/** Longest a member's recompute transaction may run, ms. */
const RECOMPUTE_TIMEOUT_MS = 30_000;

/** The games of one workspace and their heartbeat intervals, loaded once per pass. */
export interface WorkspaceGames {
  workspaceId: string;
  gameIds: string[];
  /** gameId → heartbeat interval in ms. */
  intervalMs: Map<string, number>;
  /** The longest gap any two sessions can be bridged over (2 × the longest interval), ms. */
  maxBridgeMs: number;
}

/** Row counts of a recompute; a rebuild sums them over its members. */
export interface RecomputeCounts {
  /** Shifts in the (widened) period after the recompute. */
  shifts: number;
  created: number;
  updated: number;
  deleted: number;
  payoutsWritten: number;
  payoutsDeleted: number;
}

/** The keys of {@link RecomputeCounts}, for summing. */
export const RECOMPUTE_COUNT_KEYS = ['shifts', 'created', 'updated', 'deleted', 'payoutsWritten', 'payoutsDeleted'] as const satisfies readonly (keyof RecomputeCounts)[];

/** What one recompute changed. */
export interface MemberRecompute extends RecomputeCounts {
  memberId: string;
  /** The widened period that was replaced, ms ([from, to]; to = {@link FAR_FUTURE_MS} for "no end"). */
  fromMs: number;
  toMs: number;
  /** The member holds an open shift after the recompute. */
  open: boolean;
  /** Whether {@link open} differs from before the recompute (a clock-in or clock-out). */
  clockInChanged: boolean;
}

interface SessionRow {
  gameId: string;
  externalServerId: string;
  externalScopeId: string | null;
  openedAt: Date;
  closedAt: Date | null;
  lastSeenAt: Date | null;
}

type Tx = Prisma.TransactionClient;
type StoredShift = Prisma.ShiftGetPayload<{ include: { payouts: true } }>;
/** A shift to insert. */
type NewShift = { id: string; openedAt: Date; closedAt: Date | null };
/** The fields of a PayoutEntry the derivation computes. */
type PayoutFields = { positionId: string | null; seconds: number; rateMinor: bigint; amountMinor: bigint; unit: string; accruedAt: Date };

/**
 * Recomputes derived data per member (see the module comment). `changes` is told about clock-in flips.
 * Holds no state between calls: one instance per process serves every workspace.
 */
export class ShiftDeriver {
  private readonly openKey: string;

  constructor(
    private readonly db: Db,
    private readonly redis: Redis,
    keySpace: KeySpace,
    private readonly changes: SubjectChanges,
  ) {
    this.openKey = keySpace.global.openShifts();
  }

  /** The games of `workspaceId` with their intervals. */
  async loadWorkspace(workspaceId: string): Promise<WorkspaceGames> {
    const games = await this.db.game.findMany({ where: { workspaceId }, select: { id: true, heartbeatIntervalSeconds: true } });
    const intervalMs = new Map(games.map((g) => [g.id, g.heartbeatIntervalSeconds * 1000]));
    return { workspaceId, gameIds: games.map((g) => g.id), intervalMs, maxBridgeMs: 2 * Math.max(0, ...intervalMs.values()) };
  }

  /**
   * Recomputes the shifts and payout rows of member `memberId` of `ws` over [fromMs, toMs] (ms; pass
   * {@link FAR_FUTURE_MS} as `toMs` for "from `fromMs` on"), widened as the module comment explains.
   * A member that no longer exists, or not in `ws`, is a no-op. A clock-in change is reported after commit.
   * @throws on Postgres or Redis failure; nothing is half-written.
   */
  async recomputeMember(ws: WorkspaceGames, memberId: string, fromMs: number, toMs: number): Promise<MemberRecompute> {
    const member = `${ws.workspaceId}:${memberId}`;
    const { result, externalId, entered } = await this.db.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`shift:${memberId}`}, 0))`;
        const r = await this.recomputeLocked(tx, ws, memberId, fromMs, toMs);
        // Before commit: the open set may briefly list a member without an open shift, never the reverse.
        const added = r.result.open ? (await this.redis.sadd(this.openKey, member)) === 1 : false;
        return { ...r, entered: added };
      },
      { timeout: RECOMPUTE_TIMEOUT_MS, maxWait: RECOMPUTE_TIMEOUT_MS },
    );
    const left = result.open ? false : (await this.redis.srem(this.openKey, member)) === 1;
    // After commit, so a door check that sees the new subject version reads the committed shifts.
    if (externalId !== null && (result.clockInChanged || entered || left)) await reportMemberChange(this.changes, ws.workspaceId, externalId);
    return result;
  }

  /**
   * Adds members that hold an open shift in Postgres (`open`, as `<workspaceId>:<memberId>` with the
   * member's externalId) to the open set, and reports those the set did not list yet: for the Redis the
   * doors read, they clock in now (see the module comment). The live path's reconcile (live-derivation.ts)
   * calls it when a worker starts and every 10 minutes. @throws on Redis failure (the next reconcile
   * repeats it).
   */
  async adoptOpenShifts(open: readonly { workspaceId: string; memberId: string; externalId: string }[]): Promise<void> {
    if (!open.length) return;
    const pipe = this.redis.pipeline();
    for (const o of open) pipe.sadd(this.openKey, `${o.workspaceId}:${o.memberId}`);
    const results = (await pipe.exec()) ?? [];
    const failed = results.find(([err]) => err)?.[0];
    if (failed) throw failed;
    for (const [i, o] of open.entries()) if (results[i]?.[1] === 1) await reportMemberChange(this.changes, o.workspaceId, o.externalId);
  }

  private async recomputeLocked(tx: Tx, ws: WorkspaceGames, memberId: string, fromMs: number, toMs: number): Promise<{ result: MemberRecompute; externalId: string | null }> {
    const empty: MemberRecompute = { memberId, fromMs, toMs, shifts: 0, created: 0, updated: 0, deleted: 0, payoutsWritten: 0, payoutsDeleted: 0, open: false, clockInChanged: false };
    const m = await tx.member.findUnique({
      where: { id: memberId },
      select: {
        workspaceId: true,
        externalId: true,
        assignments: {
          select: {
            position: { select: { id: true, autoClockIn: true, clockInGameIds: true, clockInScopeIds: true, payoutRateMinor: true, payoutUnit: true } },
          },
        },
      },
    });
    if (!m || m.workspaceId !== ws.workspaceId) return { result: empty, externalId: null };
    const openBefore = (await tx.shift.count({ where: { memberId, closedAt: null } })) > 0;
    const positions: PayRule[] = m.assignments.map((a) => a.position);
    const clockIn = positions.filter((p) => p.autoClockIn);

    const bridge = (a: SessionSpan, b: SessionSpan) => (ws.intervalMs.get(a.gameId) ?? 0) + (ws.intervalMs.get(b.gameId) ?? 0);
    // Sessions are read with a margin around the period so a chain of many short sessions (a member
    // hopping between servers all evening) is found in a round or two rather than one session per round.
    const margin = Math.max(ws.maxBridgeMs, WIDENING_MARGIN_MS);
    let lo = fromMs;
    let hi = toMs;
    let computed: ShiftSpan[];
    let stored: StoredShift[];
    for (let round = 0; ; round++) {
      if (round >= MAX_WIDENING_ROUNDS) throw new Error(`shift period of member ${memberId} did not converge`);
      const sessions = clockIn.length ? (await this.loadSessions(tx, ws, m.externalId, lo - margin, hi + margin)).filter((s) => clockIn.some((p) => ruleCoversSession(p, s))) : [];
      computed = mergeSessions(sessions, bridge).filter((c) => c.openedAtMs <= hi && (c.closedAtMs ?? FAR_FUTURE_MS) >= lo);
      stored = await tx.shift.findMany({
        where: { memberId, openedAt: { lte: new Date(hi) }, OR: [{ closedAt: null }, { closedAt: { gte: new Date(lo) } }] },
        include: { payouts: true },
      });
      const opens = [...computed.map((c) => c.openedAtMs), ...stored.map((s) => s.openedAt.getTime())];
      const ends = [...computed.map((c) => c.closedAtMs ?? FAR_FUTURE_MS), ...stored.map((s) => s.closedAt?.getTime() ?? FAR_FUTURE_MS)];
      const nextLo = Math.min(lo, ...opens);
      const nextHi = Math.max(hi, ...ends);
      // Stable: every shift touching [lo, hi] lies inside it, and a session that could still join one
      // would have to end or start within a bridge (≤ margin) of it, so it was read.
      if (nextLo === lo && nextHi === hi) break;
      lo = nextLo;
      hi = nextHi;
    }

    const out = { ...empty, fromMs: lo, toMs: hi, shifts: computed.length };
    const byOpen = new Map(stored.map((s) => [s.openedAt.getTime(), s]));
    const kept = new Set<string>();
    for (const c of computed) {
      const match = byOpen.get(c.openedAtMs);
      if (match) kept.add(match.id);
    }
    const gone = stored.filter((s) => !kept.has(s.id));
    if (gone.length) {
      await tx.shift.deleteMany({ where: { id: { in: gone.map((s) => s.id) } } });
      out.deleted = gone.length;
    }
    // New shifts and their ledger rows go in two multi-row inserts; changed ones one by one.
    const newShifts: NewShift[] = [];
    const newPayouts: (PayoutFields & { shiftId: string })[] = [];
    for (const c of computed) {
      const match = byOpen.get(c.openedAtMs);
      const closedAt = c.closedAtMs === null ? null : new Date(c.closedAtMs);
      const payout = payoutRow(c, positions);
      if (!match) {
        const shiftId = randomUUID();
        newShifts.push({ id: shiftId, openedAt: new Date(c.openedAtMs), closedAt });
        if (payout) newPayouts.push({ shiftId, ...payout });
        continue;
      }
      if ((match.closedAt?.getTime() ?? null) !== c.closedAtMs) {
        await tx.shift.update({ where: { id: match.id }, data: { closedAt } });
        out.updated++;
      }
      const existing = match.payouts[0];
      if (!payout && existing) {
        await tx.payoutEntry.deleteMany({ where: { shiftId: match.id } });
        out.payoutsDeleted++;
      } else if (payout && !(existing && samePayout(existing, payout))) {
        await tx.payoutEntry.upsert({ where: { shiftId: match.id }, create: { workspaceId: ws.workspaceId, memberId, shiftId: match.id, ...payout }, update: payout });
        out.payoutsWritten++;
      }
    }
    await insertShifts(tx, ws.workspaceId, memberId, newShifts);
    await insertPayouts(tx, ws.workspaceId, memberId, newPayouts);
    out.created = newShifts.length;
    out.payoutsWritten += newPayouts.length;
    out.open = (await tx.shift.count({ where: { memberId, closedAt: null } })) > 0;
    out.clockInChanged = out.open !== openBefore;
    return { result: out, externalId: m.externalId };
  }

  /** Sessions of `externalId` in the workspace's games overlapping [loMs, hiMs], with their server's last heartbeat. */
  private async loadSessions(tx: Tx, ws: WorkspaceGames, externalId: string, loMs: number, hiMs: number): Promise<SessionSpan[]> {
    if (!ws.gameIds.length) return [];
    const rows = await tx.$queryRaw<SessionRow[]>`
      SELECT s."gameId"::text AS "gameId", s."externalServerId", s."externalScopeId", s."openedAt", s."closedAt", gs."lastSeenAt"
      FROM "Session" s
      LEFT JOIN "GameServer" gs ON gs."gameId" = s."gameId" AND gs."externalServerId" = s."externalServerId"
      WHERE s."gameId" = ANY(${ws.gameIds}::uuid[]) AND s."externalId" = ${externalId}
        AND s."openedAt" <= ${new Date(hiMs)} AND (s."closedAt" IS NULL OR s."closedAt" >= ${new Date(loMs)})`;
    return rows.map((r) => ({
      gameId: r.gameId,
      externalServerId: r.externalServerId,
      externalScopeId: r.externalScopeId,
      openedAtMs: r.openedAt.getTime(),
      closedAtMs: r.closedAt?.getTime() ?? null,
      serverLastSeenMs: r.lastSeenAt?.getTime() ?? null,
    }));
  }
}

/** The ledger fields of `shift` (payout-math.ts rules), or null when no eligible position is paid. */
function payoutRow(shift: ShiftSpan, positions: readonly PayRule[]): PayoutFields | null {
  const best = bestPaidPosition(positions, shift.sessions);
  if (!best) return null;
  const seconds = wholeSeconds(shift.openedAtMs, shift.accruedUntilMs);
  return {
    positionId: best.id,
    seconds,
    rateMinor: best.payoutRateMinor,
    amountMinor: payoutAmountMinor(seconds, best.payoutRateMinor),
    unit: best.payoutUnit,
    accruedAt: new Date(shift.accruedUntilMs),
  };
}

function samePayout(a: PayoutFields, b: PayoutFields): boolean {
  return (
    a.positionId === b.positionId &&
    a.seconds === b.seconds &&
    a.rateMinor === b.rateMinor &&
    a.amountMinor === b.amountMinor &&
    a.unit === b.unit &&
    a.accruedAt.getTime() === b.accruedAt.getTime()
  );
}

// Multi-row inserts through unnest: measured 4–8 ms for 50 rows where Prisma's createMany took 20–50 ms
// over the pg adapter (README figures); the rebuild writes thousands of rows.

async function insertShifts(tx: Tx, workspaceId: string, memberId: string, rows: NewShift[]): Promise<void> {
  if (!rows.length) return;
  await tx.$executeRaw`
    INSERT INTO "Shift" (id, "workspaceId", "memberId", "openedAt", "closedAt")
    SELECT v.id, ${workspaceId}::uuid, ${memberId}::uuid, v.o, v.c
    FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.openedAt)}::timestamptz[], ${rows.map((r) => r.closedAt)}::timestamptz[]) AS v(id, o, c)`;
}

async function insertPayouts(tx: Tx, workspaceId: string, memberId: string, rows: (PayoutFields & { shiftId: string })[]): Promise<void> {
  if (!rows.length) return;
  await tx.$executeRaw`
    INSERT INTO "PayoutEntry" (id, "workspaceId", "memberId", "shiftId", "positionId", seconds, "rateMinor", "amountMinor", unit, "accruedAt")
    SELECT v.id, ${workspaceId}::uuid, ${memberId}::uuid, v.shift, v.pos, v.secs, v.rate, v.amount, v.unit, v.at
    FROM unnest(
      ${rows.map(() => randomUUID())}::uuid[], ${rows.map((r) => r.shiftId)}::uuid[], ${rows.map((r) => r.positionId)}::uuid[],
      ${rows.map((r) => r.seconds)}::int[], ${rows.map((r) => r.rateMinor.toString())}::bigint[], ${rows.map((r) => r.amountMinor.toString())}::bigint[],
      ${rows.map((r) => r.unit)}::text[], ${rows.map((r) => r.accruedAt)}::timestamptz[]
    ) AS v(id, shift, pos, secs, rate, amount, unit, at)`;
}
