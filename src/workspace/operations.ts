/**
 * The schedule: operations of a workspace (issue #4: type, title, start, end, optional unit and
 * organization). An operation runs over [startsAt, endsAt). Door policies may require "during an
 * operation of a given type" (spec: Door › policy), answered by {@link operationActive} /
 * {@link operationApplies}.
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { requireInWorkspace, requireWorkspace } from './workspace-lookup.js';
import { reportWorkspaceChange, type SubjectChanges } from './subject-changes.js';

/** One Operation row; it runs over [startsAt, endsAt). */
export interface OperationRow {
  id: string;
  workspaceId: string;
  type: string;
  title: string;
  startsAt: Date;
  endsAt: Date;
  unitId: string | null;
  organizationId: string | null;
  createdAt: Date;
}

/**
 * Where a person stands, for matching operations: the units they are in (the units of their positions
 * and every ancestor of those) and the organizations of those units.
 */
export interface OperationScope {
  unitIds: Iterable<string>;
  organizationIds: Iterable<string>;
}

const select = { id: true, workspaceId: true, type: true, title: true, startsAt: true, endsAt: true, unitId: true, organizationId: true, createdAt: true } as const;

/** Checks an operation's fields; returns every problem (empty = valid). Shared with the import. */
export function operationProblems(op: { type: string; title: string; startsAt: Date; endsAt: Date }): string[] {
  const problems: string[] = [];
  if (!op.type.trim() || op.type.length > 64) problems.push('type must be 1 to 64 characters');
  if (!op.title.trim() || op.title.length > 200) problems.push('title must be 1 to 200 characters');
  if (!(op.endsAt.getTime() > op.startsAt.getTime())) problems.push('endsAt must be after startsAt');
  return problems;
}

/**
 * Creates an operation; reports a workspace change (the schedule door conditions read). @throws {NotFoundError} unknown workspace, or a unit / organization not in it.
 * @throws {ValidationError} `invalid_operation` (empty type or title, end not after start).
 */
export async function createOperation(
  db: Db,
  input: { workspaceId: string; type: string; title: string; startsAt: Date; endsAt: Date; unitId?: string | null; organizationId?: string | null },
  changes: SubjectChanges,
): Promise<OperationRow> {
  const problems = operationProblems(input);
  if (problems.length) throw new ValidationError(problems.join('; '), 'invalid_operation');
  await requireWorkspace(db, input.workspaceId);
  if (input.unitId) requireInWorkspace(await db.unit.findUnique({ where: { id: input.unitId } }), 'unit', input.unitId, input.workspaceId);
  if (input.organizationId) {
    requireInWorkspace(await db.organization.findUnique({ where: { id: input.organizationId } }), 'organization', input.organizationId, input.workspaceId);
  }
  const row = await db.operation.create({
    data: {
      workspaceId: input.workspaceId,
      type: input.type.trim(),
      title: input.title.trim(),
      startsAt: input.startsAt,
      endsAt: input.endsAt,
      unitId: input.unitId ?? null,
      organizationId: input.organizationId ?? null,
    },
    select,
  });
  await reportWorkspaceChange(changes, row.workspaceId);
  return row;
}

/**
 * The operations of `workspaceId` overlapping [from, to) when given (either bound optional), by start.
 * @throws {NotFoundError} unknown workspace.
 */
export async function listOperations(db: Db, workspaceId: string, range: { from?: Date; to?: Date } = {}): Promise<OperationRow[]> {
  await requireWorkspace(db, workspaceId);
  return db.operation.findMany({
    where: { workspaceId, endsAt: range.from ? { gt: range.from } : undefined, startsAt: range.to ? { lt: range.to } : undefined },
    orderBy: [{ startsAt: 'asc' }, { id: 'asc' }],
    select,
  });
}

/** Deletes operation `id` and returns it; reports a workspace change. @throws {NotFoundError} `operation_not_found`. */
export async function deleteOperation(db: Db, id: string, changes: SubjectChanges): Promise<OperationRow> {
  const row = await db.operation.findUnique({ where: { id }, select });
  if (!row) throw new NotFoundError(`operation ${id} not found`, 'operation_not_found');
  await db.operation.deleteMany({ where: { id } });
  await reportWorkspaceChange(changes, row.workspaceId);
  return row;
}

/**
 * Pure: true when `op` runs at `at` (startsAt ≤ at < endsAt) and applies to `scope`: an operation naming
 * no unit and no organization applies to everyone; one naming a unit applies to people in that unit's
 * subtree (its id is among `scope.unitIds`, which include ancestors); one naming an organization applies
 * to people in it; naming both requires both. Without `scope` only the time is checked.
 */
export function operationApplies(op: Pick<OperationRow, 'startsAt' | 'endsAt' | 'unitId' | 'organizationId'>, at: Date, scope?: OperationScope): boolean {
  const t = at.getTime();
  if (!(op.startsAt.getTime() <= t && t < op.endsAt.getTime())) return false;
  if (!scope) return true;
  if (op.unitId && !new Set(scope.unitIds).has(op.unitId)) return false;
  if (op.organizationId && !new Set(scope.organizationIds).has(op.organizationId)) return false;
  return true;
}

/**
 * True when an operation of `type` (exact, case-sensitive) runs in `workspaceId` at `at` and applies to
 * `scope` (see {@link operationApplies}; without a scope, any such operation counts).
 */
export async function operationActive(db: Db, workspaceId: string, type: string, at: Date, scope?: OperationScope): Promise<boolean> {
  const ops = await db.operation.findMany({
    where: { workspaceId, type, startsAt: { lte: at }, endsAt: { gt: at } },
    select: { startsAt: true, endsAt: true, unitId: true, organizationId: true },
  });
  return ops.some((op) => operationApplies(op, at, scope));
}
