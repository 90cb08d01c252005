/**
 * Whether a member is clocked in (door condition "clocked in", spec: Door › policy). Read from the stored
 * shifts, so it lags presence by the flush and derivation ticks (a few seconds).
 */
import type { Db } from '../store/prisma.js';

/** True when member `memberId` has a shift covering `at`: openedAt ≤ at and (open, or closedAt ≥ at). */
export async function isClockedIn(db: Db, memberId: string, at: Date): Promise<boolean> {
  const n = await db.shift.count({ where: { memberId, openedAt: { lte: at }, OR: [{ closedAt: null }, { closedAt: { gte: at } }] } });
  return n > 0;
}
