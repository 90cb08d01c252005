/**
 * Lookups every workspace-model service starts with: the workspace itself, and checks that an id given
 * by an operator belongs to the workspace being changed (ids are global UUIDs, so a unit of workspace A
 * must never become the parent of a unit of workspace B).
 */
import { Prisma } from '@prisma/client';
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';

/** The workspace fields the model and the derived data need. */
export interface WorkspaceInfo {
  id: string;
  name: string;
  /** IANA time zone of quota weeks (Workspace.timeZone). */
  timeZone: string;
  /** ISO weekday quota weeks start on, 1 = Monday … 7 = Sunday. */
  weekStartsOn: number;
}

/** Loads workspace `workspaceId`. @throws {NotFoundError} `workspace_not_found` when it does not exist. */
export async function requireWorkspace(db: Db | Prisma.TransactionClient, workspaceId: string): Promise<WorkspaceInfo> {
  const ws = await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true, name: true, timeZone: true, weekStartsOn: true } });
  if (!ws) throw new NotFoundError(`workspace ${workspaceId} not found`, 'workspace_not_found');
  return ws;
}

/**
 * Asserts that row `id` of `kind` exists in `workspaceId` (`row` is what the caller loaded, or null).
 * @throws {NotFoundError} `<kind>_not_found` when it does not exist or lives in another workspace.
 */
export function requireInWorkspace<T extends { workspaceId: string }>(row: T | null, kind: string, id: string, workspaceId: string): T {
  if (!row || row.workspaceId !== workspaceId) throw new NotFoundError(`${kind} ${id} not found in workspace ${workspaceId}`, `${kind}_not_found`);
  return row;
}

/** Trims `name`. @throws {ValidationError} when empty or longer than 200 characters. */
export function checkName(kind: string, name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError(`${kind} name is required`);
  if (trimmed.length > 200) throw new ValidationError(`${kind} name is longer than 200 characters`);
  return trimmed;
}

/** True when `err` is Postgres refusing a duplicate on a unique constraint (Prisma P2002). */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}
