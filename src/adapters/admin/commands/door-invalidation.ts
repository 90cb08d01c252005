/**
 * The {@link SubjectChanges} the CLI's workspace commands report to: the door decision cache's
 * invalidator (src/doors/subject-invalidation.ts), over the invocation's own connections, pushing a
 * member's change to their server as `refresh_permissions`.
 */
import { DoorSubjectInvalidator } from '../../../doors/subject-invalidation.js';
import { commandPermissionsRefresher } from '../../../doors/permissions-refresh.js';
import type { SubjectChanges } from '../../../workspace/subject-changes.js';
import type { CommandContext } from '../command.js';

/** Retires cached door decisions after a command's change has committed. */
export function doorInvalidation(ctx: CommandContext): SubjectChanges {
  const deps = { db: ctx.db(), redis: ctx.redis(), keySpace: ctx.keySpace };
  return new DoorSubjectInvalidator(deps.db, deps.redis, deps.keySpace, commandPermissionsRefresher(deps, ctx.config.doorCacheTtlSeconds));
}
