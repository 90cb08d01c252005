/**
 * Scheduled access-log retention (src/doors/access-log-retention.ts): every run deletes rows older than
 * `ACCESS_LOG_RETENTION_DAYS` (default 30) within the run's time budget; a backlog is finished by the
 * following runs.
 */
import { pruneAccessLog, type PruneResult } from '../../src/doors/access-log-retention.js';
import { log } from '../../src/log.js';
import { JOB_BUDGET_MS, type JobContext } from './context.js';

/** The `prune-access-log` role's processor. */
export function pruneAccessLogJob(ctx: JobContext) {
  return async (): Promise<PruneResult> => {
    const now = Date.now();
    const r = await pruneAccessLog(ctx.db, ctx.config.accessLogRetentionDays, now, now + JOB_BUDGET_MS);
    if (r.deleted) log.info('access log pruned', { deleted: r.deleted, cutoff: r.cutoff.toISOString(), more: r.more, retentionDays: ctx.config.accessLogRetentionDays });
    return r;
  };
}
