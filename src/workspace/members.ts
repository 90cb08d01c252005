/**
 * Members: people of a workspace, linked to a platform user by `externalId` (the id the game sends in
 * rosters and events), with the date they joined for tenure (issue #4). `externalId` is unique within a
 * workspace. Deleting a member deletes their assignments, records, shifts and payout entries (cascade).
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { isUniqueViolation, requireWorkspace } from './workspace-lookup.js';
import type { PositionRow } from './positions.js';
import { reportMemberChange, type SubjectChanges } from './subject-changes.js';

const DAY_MS = 86_400_000;

/** One Member row; `joinedAt` is the tenure start. */
export interface MemberRow {
  id: string;
  workspaceId: string;
  externalId: string;
  displayName: string | null;
  joinedAt: Date;
  createdAt: Date;
}

const select = { id: true, workspaceId: true, externalId: true, displayName: true, joinedAt: true, createdAt: true } as const;

/**
 * Whole days from `member.joinedAt` to `at` (24-hour days, rounded down; 0 before the join date). The
 * unit of "minimum tenure in days" door conditions (spec: Door › policy).
 */
export function tenureDays(member: { joinedAt: Date }, at: Date): number {
  return Math.max(0, Math.floor((at.getTime() - member.joinedAt.getTime()) / DAY_MS));
}

/**
 * Creates member `externalId` in `workspaceId`; `joinedAt` defaults to now. Reports a member change.
 * @throws {NotFoundError} unknown workspace. @throws {ValidationError} empty or over-long externalId, or
 * `duplicate_member` when the workspace already has a member with that externalId.
 */
export async function createMember(
  db: Db,
  input: { workspaceId: string; externalId: string; displayName?: string | null; joinedAt?: Date },
  changes: SubjectChanges,
): Promise<MemberRow> {
  const externalId = input.externalId.trim();
  if (!externalId || externalId.length > 128) throw new ValidationError('externalId must be 1 to 128 characters');
  await requireWorkspace(db, input.workspaceId);
  let row: MemberRow;
  try {
    row = await db.member.create({
      data: { workspaceId: input.workspaceId, externalId, displayName: input.displayName?.trim() || null, joinedAt: input.joinedAt ?? new Date() },
      select,
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError(`a member with externalId "${externalId}" already exists in this workspace`, 'duplicate_member');
    throw err;
  }
  await reportMemberChange(changes, row.workspaceId, row.externalId);
  return row;
}

/** The members of `workspaceId` by externalId. @throws {NotFoundError} unknown workspace. */
export async function listMembers(db: Db, workspaceId: string): Promise<MemberRow[]> {
  await requireWorkspace(db, workspaceId);
  return db.member.findMany({ where: { workspaceId }, orderBy: [{ externalId: 'asc' }], select });
}

/** Member `id`. @throws {NotFoundError} `member_not_found`. */
export async function requireMember(db: Db, id: string): Promise<MemberRow> {
  const row = await db.member.findUnique({ where: { id }, select });
  if (!row) throw new NotFoundError(`member ${id} not found`, 'member_not_found');
  return row;
}

/**
 * Deletes member `id` (with everything derived about them) and returns it; reports a member change.
 * @throws {NotFoundError} `member_not_found`.
 */
export async function deleteMember(db: Db, id: string, changes: SubjectChanges): Promise<MemberRow> {
  const row = await requireMember(db, id);
  await db.member.deleteMany({ where: { id } });
  await reportMemberChange(changes, row.workspaceId, row.externalId);
  return row;
}

/** A position a member holds, with the unit it belongs to. */
export interface MemberPosition extends PositionRow {
  unitName: string;
  /** The organization of the position's unit (not of its ancestors). */
  organizationId: string | null;
}

/** The positions member `memberId` is assigned to, by name (empty for an unknown member). */
export async function memberPositions(db: Db, memberId: string): Promise<MemberPosition[]> {
  const rows = await db.assignment.findMany({
    where: { memberId },
    select: { position: { include: { unit: { select: { name: true, organizationId: true } } } } },
  });
  return rows
    .map(({ position: { unit, ...p } }) => ({ ...p, unitName: unit.name, organizationId: unit.organizationId }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
}
