/**
 * Records: entries about a member (issue #4: a type such as warning, strike or suspension; issued at; an
 * optional expiry; a revoked flag). A record is **active** at instant `at` when it has been issued
 * (issuedAt ≤ at), is not revoked, and has not expired (no expiresAt, or at < expiresAt). Door policies
 * use "no active record of a given type" (spec: Door › policy). Types are free strings, compared exactly.
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { requireWorkspace } from './workspace-lookup.js';
import { reportMemberChange, type SubjectChanges } from './subject-changes.js';

/** One MemberRecord row (see the module comment for "active"). */
export interface RecordRow {
  id: string;
  workspaceId: string;
  memberId: string;
  type: string;
  reason: string | null;
  issuedAt: Date;
  expiresAt: Date | null;
  revoked: boolean;
  createdAt: Date;
}

const select = { id: true, workspaceId: true, memberId: true, type: true, reason: true, issuedAt: true, expiresAt: true, revoked: true, createdAt: true } as const;

/** Pure: whether `record` is active at `at` (see the module comment). */
export function isRecordActive(record: Pick<RecordRow, 'issuedAt' | 'expiresAt' | 'revoked'>, at: Date): boolean {
  const t = at.getTime();
  return !record.revoked && record.issuedAt.getTime() <= t && (record.expiresAt === null || t < record.expiresAt.getTime());
}

/** True when member `memberId` has an active record of `type` at `at`. */
export async function hasActiveRecord(db: Db, memberId: string, type: string, at: Date): Promise<boolean> {
  const n = await db.memberRecord.count({
    where: { memberId, type, revoked: false, issuedAt: { lte: at }, OR: [{ expiresAt: null }, { expiresAt: { gt: at } }] },
  });
  return n > 0;
}

/** Checks a record's fields; returns every problem (empty = valid). Shared with the import. */
export function recordProblems(r: { type: string; reason?: string | null; issuedAt: Date; expiresAt?: Date | null }): string[] {
  const problems: string[] = [];
  if (!r.type.trim() || r.type.length > 64) problems.push('type must be 1 to 64 characters');
  if (r.reason && r.reason.length > 2000) problems.push('reason is longer than 2000 characters');
  if (r.expiresAt && !(r.expiresAt.getTime() > r.issuedAt.getTime())) problems.push('expiresAt must be after issuedAt');
  return problems;
}

/**
 * Issues a record about member `memberId`; `issuedAt` defaults to now, no expiry unless given. Reports a
 * member change.
 * @throws {NotFoundError} `member_not_found`. @throws {ValidationError} `invalid_record`.
 */
export async function createRecord(
  db: Db,
  input: { memberId: string; type: string; reason?: string | null; issuedAt?: Date; expiresAt?: Date | null },
  changes: SubjectChanges,
): Promise<RecordRow> {
  const issuedAt = input.issuedAt ?? new Date();
  const problems = recordProblems({ ...input, issuedAt });
  if (problems.length) throw new ValidationError(problems.join('; '), 'invalid_record');
  const member = await db.member.findUnique({ where: { id: input.memberId }, select: { workspaceId: true, externalId: true } });
  if (!member) throw new NotFoundError(`member ${input.memberId} not found`, 'member_not_found');
  const row = await db.memberRecord.create({
    data: { workspaceId: member.workspaceId, memberId: input.memberId, type: input.type.trim(), reason: input.reason?.trim() || null, issuedAt, expiresAt: input.expiresAt ?? null },
    select,
  });
  await reportMemberChange(changes, member.workspaceId, member.externalId);
  return row;
}

/**
 * The records of `workspaceId`, newest issued first; only member `memberId`'s when given; only those
 * active at `activeAt` when given. @throws {NotFoundError} unknown workspace.
 */
export async function listRecords(db: Db, workspaceId: string, filter: { memberId?: string; activeAt?: Date } = {}): Promise<RecordRow[]> {
  await requireWorkspace(db, workspaceId);
  const at = filter.activeAt;
  return db.memberRecord.findMany({
    where: {
      workspaceId,
      memberId: filter.memberId,
      ...(at ? { revoked: false, issuedAt: { lte: at }, OR: [{ expiresAt: null }, { expiresAt: { gt: at } }] } : {}),
    },
    orderBy: [{ issuedAt: 'desc' }, { id: 'asc' }],
    select,
  });
}

/**
 * Marks record `id` revoked (idempotent; the row stays as history) and returns it; reports a member change.
 * @throws {NotFoundError} `record_not_found`.
 */
export async function revokeRecord(db: Db, id: string, changes: SubjectChanges): Promise<RecordRow> {
  const n = await db.memberRecord.updateMany({ where: { id }, data: { revoked: true } });
  if (!n.count) throw new NotFoundError(`record ${id} not found`, 'record_not_found');
  const row = await db.memberRecord.findUniqueOrThrow({ where: { id }, select: { ...select, member: { select: { externalId: true } } } });
  const { member, ...record } = row;
  await reportMemberChange(changes, record.workspaceId, member.externalId);
  return record;
}

/** Deletes record `id` outright and returns it; reports a member change. @throws {NotFoundError} `record_not_found`. */
export async function deleteRecord(db: Db, id: string, changes: SubjectChanges): Promise<RecordRow> {
  const found = await db.memberRecord.findUnique({ where: { id }, select: { ...select, member: { select: { externalId: true } } } });
  if (!found) throw new NotFoundError(`record ${id} not found`, 'record_not_found');
  const { member, ...row } = found;
  await db.memberRecord.deleteMany({ where: { id } });
  await reportMemberChange(changes, row.workspaceId, member.externalId);
  return row;
}
