/**
 * Assignments of members to positions (issue #4). A member and a position must be of the same
 * workspace; a member holds a position at most once. Rules apply from the moment they are read: the live
 * derivation uses the current assignments for shifts it derives from then on, and `derived rebuild`
 * re-applies them to a past period (src/derived/).
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { isUniqueViolation, requireWorkspace } from './workspace-lookup.js';
import { reportMemberChange, type SubjectChanges } from './subject-changes.js';

/** One Assignment row: member `memberId` holds position `positionId`. */
export interface AssignmentRow {
  id: string;
  memberId: string;
  positionId: string;
  createdAt: Date;
}

/** An assignment with the names an operator reads. */
export interface AssignmentView extends AssignmentRow {
  externalId: string;
  positionName: string;
}

/**
 * Assigns member `memberId` to position `positionId`; reports a member change.
 * @throws {NotFoundError} unknown member or position. @throws {ValidationError} `workspace_mismatch` when
 * they belong to different workspaces, `duplicate_assignment` when the member already holds the position.
 */
export async function assignPosition(db: Db, memberId: string, positionId: string, changes: SubjectChanges): Promise<AssignmentRow> {
  const [member, position] = await Promise.all([
    db.member.findUnique({ where: { id: memberId }, select: { workspaceId: true, externalId: true } }),
    db.position.findUnique({ where: { id: positionId }, select: { workspaceId: true } }),
  ]);
  if (!member) throw new NotFoundError(`member ${memberId} not found`, 'member_not_found');
  if (!position) throw new NotFoundError(`position ${positionId} not found`, 'position_not_found');
  if (member.workspaceId !== position.workspaceId) throw new ValidationError('member and position belong to different workspaces', 'workspace_mismatch');
  let row: AssignmentRow;
  try {
    row = await db.assignment.create({ data: { memberId, positionId } });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError(`member ${memberId} already holds position ${positionId}`, 'duplicate_assignment');
    throw err;
  }
  await reportMemberChange(changes, member.workspaceId, member.externalId);
  return row;
}

/**
 * Removes the assignment of `memberId` to `positionId` and returns it; reports a member change.
 * @throws {NotFoundError} `assignment_not_found`.
 */
export async function unassignPosition(db: Db, memberId: string, positionId: string, changes: SubjectChanges): Promise<AssignmentRow> {
  const found = await db.assignment.findUnique({ where: { memberId_positionId: { memberId, positionId } }, include: { member: { select: { workspaceId: true, externalId: true } } } });
  if (!found) throw new NotFoundError(`member ${memberId} does not hold position ${positionId}`, 'assignment_not_found');
  const { member, ...row } = found;
  await db.assignment.deleteMany({ where: { id: row.id } });
  await reportMemberChange(changes, member.workspaceId, member.externalId);
  return row;
}

/**
 * The assignments of `workspaceId` (only member `memberId`'s when given), by externalId then position name.
 * @throws {NotFoundError} unknown workspace.
 */
export async function listAssignments(db: Db, workspaceId: string, filter: { memberId?: string } = {}): Promise<AssignmentView[]> {
  await requireWorkspace(db, workspaceId);
  const rows = await db.assignment.findMany({
    where: { memberId: filter.memberId, member: { workspaceId } },
    include: { member: { select: { externalId: true } }, position: { select: { name: true } } },
  });
  return rows
    .map(({ member, position, ...a }) => ({ ...a, externalId: member.externalId, positionName: position.name }))
    .sort((a, b) => a.externalId.localeCompare(b.externalId) || a.positionName.localeCompare(b.positionName));
}
