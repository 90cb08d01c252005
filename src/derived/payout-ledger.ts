/**
 * Reading the payout ledger (issue #4: `payouts list --workspace W --from --to` and per-member totals).
 * One PayoutEntry per shift, written by the derivation (shift-deriver.ts; arithmetic in payout-math.ts).
 * An entry belongs to the period containing its `accruedAt`: the shift's close, or for an open shift the
 * time accrued so far (it moves forward until the shift closes).
 */
import type { Db } from '../store/prisma.js';
import { ValidationError } from '../errors.js';
import { requireWorkspace } from '../workspace/workspace-lookup.js';

/** One ledger row with its shift's times and its member. */
export interface PayoutLine {
  shiftId: string;
  memberId: string;
  externalId: string;
  displayName: string | null;
  positionId: string | null;
  openedAt: Date;
  /** null while the shift is open. */
  closedAt: Date | null;
  /** Whole seconds paid. */
  seconds: number;
  /** Minor units per hour. */
  rateMinor: bigint;
  /** Minor units: round(seconds × rateMinor / 3600), halves up. */
  amountMinor: bigint;
  unit: string;
  accruedAt: Date;
}

/** Sum of one member's (or everyone's) lines in one unit. */
export interface PayoutTotal {
  memberId: string | null;
  externalId: string | null;
  unit: string;
  shifts: number;
  seconds: number;
  amountMinor: bigint;
}

/** What `payouts list` shows. */
export interface PayoutReport {
  workspaceId: string;
  from: Date;
  to: Date;
  entries: PayoutLine[];
  /** Per member and unit, by externalId then unit. */
  memberTotals: PayoutTotal[];
  /** Per unit over all members (memberId and externalId null). */
  totals: PayoutTotal[];
}

/**
 * Ledger lines of `workspaceId` accrued in [from, to) (only member `memberId`'s when given), oldest first,
 * with exact per-member and overall totals per unit.
 * @throws {NotFoundError} unknown workspace. @throws {ValidationError} `to` not after `from`.
 */
export async function listPayouts(db: Db, workspaceId: string, from: Date, to: Date, filter: { memberId?: string } = {}): Promise<PayoutReport> {
  if (!(to.getTime() > from.getTime())) throw new ValidationError('--to must be after --from');
  await requireWorkspace(db, workspaceId);
  const rows = await db.payoutEntry.findMany({
    where: { workspaceId, memberId: filter.memberId, accruedAt: { gte: from, lt: to } },
    orderBy: [{ accruedAt: 'asc' }, { id: 'asc' }],
    include: { shift: { select: { openedAt: true, closedAt: true } }, member: { select: { externalId: true, displayName: true } } },
  });
  const entries: PayoutLine[] = rows.map((r) => ({
    shiftId: r.shiftId,
    memberId: r.memberId,
    externalId: r.member.externalId,
    displayName: r.member.displayName,
    positionId: r.positionId,
    openedAt: r.shift.openedAt,
    closedAt: r.shift.closedAt,
    seconds: r.seconds,
    rateMinor: r.rateMinor,
    amountMinor: r.amountMinor,
    unit: r.unit,
    accruedAt: r.accruedAt,
  }));
  const sum = (lines: PayoutLine[], member: PayoutLine | null): PayoutTotal[] => {
    const byUnit = new Map<string, PayoutTotal>();
    for (const l of lines) {
      const t = byUnit.get(l.unit) ?? { memberId: member?.memberId ?? null, externalId: member?.externalId ?? null, unit: l.unit, shifts: 0, seconds: 0, amountMinor: 0n };
      t.shifts++;
      t.seconds += l.seconds;
      t.amountMinor += l.amountMinor;
      byUnit.set(l.unit, t);
    }
    return [...byUnit.values()].sort((a, b) => (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0));
  };
  const byMember = new Map<string, PayoutLine[]>();
  for (const e of entries) byMember.set(e.memberId, [...(byMember.get(e.memberId) ?? []), e]);
  const memberTotals = [...byMember.values()]
    .sort((a, b) => (a[0]!.externalId < b[0]!.externalId ? -1 : a[0]!.externalId > b[0]!.externalId ? 1 : 0))
    .flatMap((lines) => sum(lines, lines[0]!));
  return { workspaceId, from, to, entries, memberTotals, totals: sum(entries, null) };
}
