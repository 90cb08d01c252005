/**
 * The {@link SubjectChanges} the CLI's workspace commands report to: the door decision cache's
 * invalidator (src/doors/subject-invalidation.ts), over the invocation's own connections.
 */
import { DoorSubjectInvalidator } from '../../../doors/subject-invalidation.js';
import type { SubjectChanges } from '../../../workspace/subject-changes.js';
import type { CommandContext } from '../command.js';

/** Retires cached door decisions after a command's change has committed. */
export function doorInvalidation(ctx: CommandContext): SubjectChanges {
  return new DoorSubjectInvalidator(ctx.db(), ctx.redis(), ctx.keySpace);
}
