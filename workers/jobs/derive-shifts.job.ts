/**
 * Scheduled live derivation of shifts and payout accrual from stored sessions (src/derived/
 * live-derivation.ts): each run ticks until new sessions are caught up or the run's budget is spent (the
 * next run continues). Killing the process at any point loses and duplicates nothing. Clock-in changes
 * retire the member's cached door decisions and push `refresh_permissions` to their server.
 */
import { ShiftDeriver } from '../../src/derived/shift-deriver.js';
import { LiveDerivation } from '../../src/derived/live-derivation.js';
import { DoorSubjectInvalidator } from '../../src/doors/subject-invalidation.js';
import { commandPermissionsRefresher } from '../../src/doors/permissions-refresh.js';
import { JOB_BUDGET_MS, type JobContext } from './context.js';

/** The `derive-shifts` role's processor; one LiveDerivation per worker process. */
export function deriveShiftsJob(ctx: JobContext) {
  const refresh = commandPermissionsRefresher({ db: ctx.db, redis: ctx.redis, keySpace: ctx.keySpace }, ctx.config.doorCacheTtlSeconds);
  const doors = new DoorSubjectInvalidator(ctx.db, ctx.redis, ctx.keySpace, refresh);
  const live = new LiveDerivation(ctx.db, ctx.redis, ctx.keySpace, new ShiftDeriver(ctx.db, ctx.redis, ctx.keySpace, doors));
  return async (): Promise<{ sessionsRead: number; membersRecomputed: number }> => {
    const deadline = Date.now() + JOB_BUDGET_MS;
    let sessionsRead = 0;
    let membersRecomputed = 0;
    for (;;) {
      const r = await live.tick(Date.now());
      sessionsRead += r.sessionsRead;
      membersRecomputed += r.membersRecomputed;
      if (r.caughtUp || Date.now() >= deadline) return { sessionsRead, membersRecomputed };
    }
  };
}
