/**
 * Organizations of a workspace (issue #4: the org chart; spec: What the service does, "a workspace that
 * holds its org chart"). A name is unique within its workspace. Deleting an organization keeps its units
 * and operations and clears their link to it (schema: onDelete SetNull).
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { checkName, isUniqueViolation, requireWorkspace } from './workspace-lookup.js';
import { reportWorkspaceChange, type SubjectChanges } from './subject-changes.js';

/** One Organization row. */
export interface OrganizationRow {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: Date;
}

const select = { id: true, workspaceId: true, name: true, createdAt: true } as const;

/**
 * Creates organization `name` in `workspaceId`.
 * @throws {NotFoundError} unknown workspace. @throws {ValidationError} empty name, or `duplicate_name`
 * when the workspace already has an organization of that name.
 */
export async function createOrganization(db: Db, input: { workspaceId: string; name: string }): Promise<OrganizationRow> {
  const name = checkName('organization', input.name);
  await requireWorkspace(db, input.workspaceId);
  try {
    return await db.organization.create({ data: { workspaceId: input.workspaceId, name }, select });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError(`organization "${name}" already exists in this workspace`, 'duplicate_name');
    throw err;
  }
}

/** The organizations of `workspaceId` by name. @throws {NotFoundError} unknown workspace. */
export async function listOrganizations(db: Db, workspaceId: string): Promise<OrganizationRow[]> {
  await requireWorkspace(db, workspaceId);
  return db.organization.findMany({ where: { workspaceId }, orderBy: [{ name: 'asc' }, { id: 'asc' }], select });
}

/**
 * Deletes organization `id` and returns it; reports a workspace change (door policies on organizations).
 * @throws {NotFoundError} `organization_not_found`.
 */
export async function deleteOrganization(db: Db, id: string, changes: SubjectChanges): Promise<OrganizationRow> {
  const row = await db.organization.findUnique({ where: { id }, select });
  if (!row) throw new NotFoundError(`organization ${id} not found`, 'organization_not_found');
  await db.organization.deleteMany({ where: { id } });
  await reportWorkspaceChange(changes, row.workspaceId);
  return row;
}
