/**
 * Units: the org tree of a workspace (issue #4). A unit has an optional parent unit and an optional
 * organization, both of the same workspace. The tree helpers ({@link unitSubtree}, {@link unitDescendants},
 * {@link unitAncestors}, and the pure {@link subtreeOf}) are what door policies with "a set of units,
 * optionally including descendants" evaluate against (spec: Door › policy; issue #5).
 *
 * Cycles cannot be created here (a parent must exist before its child and there is no re-parenting), and
 * the import refuses them; the recursive queries use UNION (not UNION ALL) so they end even if one existed.
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { checkName, requireInWorkspace, requireWorkspace } from './workspace-lookup.js';
import { reportWorkspaceChange, type SubjectChanges } from './subject-changes.js';

/** One Unit row. */
export interface UnitRow {
  id: string;
  workspaceId: string;
  name: string;
  parentId: string | null;
  organizationId: string | null;
  createdAt: Date;
}

/** The parent link of one unit, all the pure tree helpers need. */
export interface UnitLink {
  id: string;
  parentId: string | null;
}

const select = { id: true, workspaceId: true, name: true, parentId: true, organizationId: true, createdAt: true } as const;

/**
 * Creates unit `name` in `workspaceId`, optionally under `parentId` and in `organizationId`.
 * @throws {NotFoundError} unknown workspace, or a parent unit / organization not in that workspace.
 * @throws {ValidationError} empty name.
 */
export async function createUnit(db: Db, input: { workspaceId: string; name: string; parentId?: string | null; organizationId?: string | null }): Promise<UnitRow> {
  const name = checkName('unit', input.name);
  await requireWorkspace(db, input.workspaceId);
  if (input.parentId) {
    requireInWorkspace(await db.unit.findUnique({ where: { id: input.parentId } }), 'unit', input.parentId, input.workspaceId);
  }
  if (input.organizationId) {
    requireInWorkspace(await db.organization.findUnique({ where: { id: input.organizationId } }), 'organization', input.organizationId, input.workspaceId);
  }
  return db.unit.create({
    data: { workspaceId: input.workspaceId, name, parentId: input.parentId ?? null, organizationId: input.organizationId ?? null },
    select,
  });
}

/** A unit with its depth in the tree (0 = root). */
export interface UnitTreeRow extends UnitRow {
  depth: number;
}

/**
 * The units of `workspaceId` in tree order: each root (by name), then its subtree depth-first, children
 * by name. @throws {NotFoundError} unknown workspace.
 */
export async function listUnits(db: Db, workspaceId: string): Promise<UnitTreeRow[]> {
  await requireWorkspace(db, workspaceId);
  const units = await db.unit.findMany({ where: { workspaceId }, orderBy: [{ name: 'asc' }, { id: 'asc' }], select });
  return treeOrder(units);
}

/** Orders `units` (already sorted by name) depth-first from the roots; units in a cycle come last at depth 0. */
export function treeOrder<T extends UnitLink>(units: T[]): (T & { depth: number })[] {
  const ids = new Set(units.map((u) => u.id));
  const children = new Map<string | null, T[]>();
  for (const u of units) {
    const parent = u.parentId && ids.has(u.parentId) ? u.parentId : null;
    children.set(parent, [...(children.get(parent) ?? []), u]);
  }
  const out: (T & { depth: number })[] = [];
  const seen = new Set<string>();
  const visit = (u: T, depth: number) => {
    if (seen.has(u.id)) return;
    seen.add(u.id);
    out.push({ ...u, depth });
    for (const c of children.get(u.id) ?? []) visit(c, depth + 1);
  };
  for (const root of children.get(null) ?? []) visit(root, 0);
  for (const u of units) visit(u, 0);
  return out;
}

/**
 * Pure: the ids of `rootIds` and of every unit below them in `units` (any order; a cycle stops the walk).
 * Ids of `rootIds` not in `units` are still returned.
 */
export function subtreeOf(units: readonly UnitLink[], rootIds: Iterable<string>): Set<string> {
  const children = new Map<string, string[]>();
  for (const u of units) if (u.parentId) children.set(u.parentId, [...(children.get(u.parentId) ?? []), u.id]);
  const out = new Set<string>();
  const stack = [...rootIds];
  while (stack.length) {
    const id = stack.pop()!;
    if (out.has(id)) continue;
    out.add(id);
    stack.push(...(children.get(id) ?? []));
  }
  return out;
}

/**
 * The ids of `unitIds` and of every unit below any of them (one recursive query). What a door policy on
 * "these units, including descendants" covers.
 */
export async function unitSubtree(db: Db, unitIds: readonly string[]): Promise<Set<string>> {
  if (!unitIds.length) return new Set();
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH RECURSIVE d AS (
      SELECT id FROM "Unit" WHERE id = ANY(${[...unitIds]}::uuid[])
      UNION
      SELECT u.id FROM "Unit" u JOIN d ON u."parentId" = d.id)
    SELECT id::text AS id FROM d`;
  return new Set(rows.map((r) => r.id));
}

/** The ids of every unit strictly below `unitId` (children, their children, …), without `unitId` itself. */
export async function unitDescendants(db: Db, unitId: string): Promise<Set<string>> {
  const all = await unitSubtree(db, [unitId]);
  all.delete(unitId);
  return all;
}

/** The ids of every unit strictly above `unitId` (parent, its parent, …), nearest first. */
export async function unitAncestors(db: Db, unitId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string; depth: number }[]>`
    WITH RECURSIVE a AS (
      SELECT u."parentId" AS id, 1 AS depth FROM "Unit" u WHERE u.id = ${unitId}::uuid AND u."parentId" IS NOT NULL
      UNION
      SELECT u."parentId", a.depth + 1 FROM "Unit" u JOIN a ON u.id = a.id WHERE u."parentId" IS NOT NULL AND a.depth < 10000)
    SELECT id::text AS id, min(depth)::int AS depth FROM a GROUP BY id ORDER BY depth`;
  return rows.map((r) => r.id).filter((id) => id !== unitId);
}

/**
 * Deletes unit `id`. Without `recursive` a unit that still has child units or positions is refused, so an
 * operator cannot drop positions and their assignments by accident; with it the unit, every unit below it,
 * and their positions and assignments are deleted in one transaction. Returns the unit and how many units
 * were deleted in total. Reports a workspace change (the org tree door policies read).
 * @throws {NotFoundError} `unit_not_found`. @throws {ValidationError} `unit_not_empty`.
 */
export async function deleteUnit(db: Db, id: string, changes: SubjectChanges, opts: { recursive?: boolean } = {}): Promise<{ unit: UnitRow; deletedUnits: number }> {
  const unit = await db.unit.findUnique({ where: { id }, select });
  if (!unit) throw new NotFoundError(`unit ${id} not found`, 'unit_not_found');
  if (!opts.recursive) {
    const [children, positions] = await Promise.all([db.unit.count({ where: { parentId: id } }), db.position.count({ where: { unitId: id } })]);
    if (children || positions) {
      throw new ValidationError(`unit ${id} still has ${children} child unit(s) and ${positions} position(s); delete them first or pass --recursive`, 'unit_not_empty');
    }
  }
  const ids = [...(await unitSubtree(db, [id]))];
  const deleted = await db.unit.deleteMany({ where: { id: { in: ids }, workspaceId: unit.workspaceId } });
  await reportWorkspaceChange(changes, unit.workspaceId);
  return { unit, deletedUnits: deleted.count };
}
