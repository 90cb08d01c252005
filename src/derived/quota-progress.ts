/**
 * Quota progress (issue #4: "minutes clocked in this period vs the quota of each of the member's
 * positions"; `quotas show --workspace W [--period 2026-W47]`). Not stored: computed from the stored
 * shifts when asked, so it is always consistent with them (and rebuilt whenever they are).
 *
 * Rules:
 * - The period is a quota week of the workspace (src/workspace/calendar.ts: its time zone, its start day).
 * - Clocked-in time is the member's, whatever position clocked them in: the total overlap of their shifts
 *   with [period start, period end), where an open shift counts up to `at` (the moment of the query).
 * - Each position of the member with a quota gets one row: `met` when clocked seconds ≥ quota × 60;
 *   `percent` = floor(100 × clocked seconds / (quota × 60)), not capped (150 means one and a half times
 *   the quota); `clockedMinutes` = whole minutes, rounded down.
 */
import type { Db } from '../store/prisma.js';
import type { WeekPeriod } from '../workspace/calendar.js';

/** Progress of one member against the quota of one of their positions. */
export interface QuotaRow {
  memberId: string;
  externalId: string;
  displayName: string | null;
  positionId: string;
  positionName: string;
  quotaMinutes: number;
  clockedSeconds: number;
  clockedMinutes: number;
  percent: number;
  met: boolean;
}

/** Overlap in ms of [aStart, aEnd) and [bStart, bEnd). */
function overlapMs(aStart: number, aEnd: number, bStart: number, bEnd: number): number {
  return Math.max(0, Math.min(aEnd, bEnd) - Math.max(aStart, bStart));
}

/**
 * Quota rows of `workspaceId` for `period` as of `at`, by externalId then position name (only member
 * `memberId`'s when given). Members without a quota position have no rows.
 */
export async function quotaProgress(db: Db, workspaceId: string, period: WeekPeriod, at: Date, filter: { memberId?: string } = {}): Promise<QuotaRow[]> {
  const start = period.start.getTime();
  const end = period.end.getTime();
  const assignments = await db.assignment.findMany({
    where: { memberId: filter.memberId, member: { workspaceId }, position: { quotaMinutesPerWeek: { not: null } } },
    select: {
      member: { select: { id: true, externalId: true, displayName: true } },
      position: { select: { id: true, name: true, quotaMinutesPerWeek: true } },
    },
  });
  const memberIds = [...new Set(assignments.map((a) => a.member.id))];
  const shifts = memberIds.length
    ? await db.shift.findMany({
        where: { memberId: { in: memberIds }, openedAt: { lt: period.end }, OR: [{ closedAt: null }, { closedAt: { gt: period.start } }] },
        select: { memberId: true, openedAt: true, closedAt: true },
      })
    : [];
  const clockedMs = new Map<string, number>();
  for (const s of shifts) {
    const until = s.closedAt?.getTime() ?? at.getTime();
    clockedMs.set(s.memberId, (clockedMs.get(s.memberId) ?? 0) + overlapMs(s.openedAt.getTime(), until, start, end));
  }
  return assignments
    .map(({ member, position }) => {
      const quotaMinutes = position.quotaMinutesPerWeek!;
      const clockedSeconds = Math.floor((clockedMs.get(member.id) ?? 0) / 1000);
      return {
        memberId: member.id,
        externalId: member.externalId,
        displayName: member.displayName,
        positionId: position.id,
        positionName: position.name,
        quotaMinutes,
        clockedSeconds,
        clockedMinutes: Math.floor(clockedSeconds / 60),
        percent: Math.floor((clockedSeconds * 100) / (quotaMinutes * 60)),
        met: clockedSeconds >= quotaMinutes * 60,
      };
    })
    .sort((a, b) => (a.externalId < b.externalId ? -1 : a.externalId > b.externalId ? 1 : a.positionName < b.positionName ? -1 : a.positionName > b.positionName ? 1 : 0));
}
