/**
 * `derived rebuild`: recomputes shifts and payout ledger rows of every member of a workspace over a
 * period from the stored sessions (issue #4: "All derived data is recomputable"), with the very function
 * the live path uses ({@link ShiftDeriver.recomputeMember}), so the result equals what the live path
 * stores. Shifts reaching past the period are recomputed whole. Quota progress is always read from the
 * shifts, so it is rebuilt with them. Safe while the workers run (per-member locks).
 */
import type { Db } from '../store/prisma.js';
import { ValidationError } from '../errors.js';
import { requireWorkspace } from '../workspace/workspace-lookup.js';
import { RECOMPUTE_COUNT_KEYS, type RecomputeCounts, type ShiftDeriver } from './shift-deriver.js';

/** Totals of one rebuild over all members of the workspace. */
export interface RebuildSummary extends RecomputeCounts {
  workspaceId: string;
  from: Date;
  to: Date;
  members: number;
}

/**
 * Rebuilds derived data of `workspaceId` for [from, to).
 * @throws {NotFoundError} unknown workspace. @throws {ValidationError} `to` not after `from`.
 */
export async function rebuildDerived(db: Db, deriver: ShiftDeriver, workspaceId: string, from: Date, to: Date): Promise<RebuildSummary> {
  if (!(to.getTime() > from.getTime())) throw new ValidationError('--to must be after --from');
  await requireWorkspace(db, workspaceId);
  const ws = await deriver.loadWorkspace(workspaceId);
  const members = await db.member.findMany({ where: { workspaceId }, select: { id: true }, orderBy: { id: 'asc' } });
  const summary: RebuildSummary = { workspaceId, from, to, members: members.length, shifts: 0, created: 0, updated: 0, deleted: 0, payoutsWritten: 0, payoutsDeleted: 0 };
  for (const { id } of members) {
    const r = await deriver.recomputeMember(ws, id, from.getTime(), to.getTime());
    for (const k of RECOMPUTE_COUNT_KEYS) summary[k] += r[k];
  }
  return summary;
}
