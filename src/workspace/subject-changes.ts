/**
 * Changes to the workspace model that can change door decisions (issue #5 caches decisions per member
 * and per workspace). Every service here that writes such a change reports it, after the write has
 * committed, through this interface; the door side implements it (`DoorSubjectInvalidator`,
 * src/doors/subject-invalidation.ts) by versioning its decision cache.
 *
 * A failed report is logged, not thrown: the write it follows has already committed, and cached
 * decisions also end with their TTL, so a lost report only delays a decision change by that TTL.
 */
import { log } from '../log.js';

/** Receives committed changes that can change door decisions. */
export interface SubjectChanges {
  /** The member's positions, records, clock-in state or membership changed (`externalId` = Member.externalId). */
  memberChanged(workspaceId: string, externalId: string): Promise<void>;
  /** The schedule or the org tree changed (operations, deleted units, positions or organizations). */
  workspaceChanged(workspaceId: string): Promise<void>;
}

/** Reports a member change; logs instead of throwing (see the module comment). */
export async function reportMemberChange(changes: SubjectChanges, workspaceId: string, externalId: string): Promise<void> {
  try {
    await changes.memberChanged(workspaceId, externalId);
  } catch (err) {
    log.warn('could not retire cached door decisions of a member; they expire with their TTL', { workspaceId, externalId, err: String(err) });
  }
}

/** Reports a workspace-wide change; logs instead of throwing (see the module comment). */
export async function reportWorkspaceChange(changes: SubjectChanges, workspaceId: string): Promise<void> {
  try {
    await changes.workspaceChanged(workspaceId);
  } catch (err) {
    log.warn('could not retire cached door decisions of a workspace; they expire with their TTL', { workspaceId, err: String(err) });
  }
}
