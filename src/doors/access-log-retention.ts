/**
 * Retention of the access log (issue #21): rows older than `ACCESS_LOG_RETENTION_DAYS` (config, default
 * 30 days) are deleted by the `prune-access-log` worker role (workers/jobs/prune-access-log.job.ts), in
 * batches walked game by game through the `AccessLog(gameId, at, id)` index so no statement holds locks
 * or a core for long. There is no index on `at` alone: every row the flush writes would pay for it (~20 %
 * of Postgres's CPU per access-log row, docs/benchmarks.md), for a job that runs a few times an hour.
 */
import type { Db } from '../store/prisma.js';

/** Rows deleted per statement. */
export const PRUNE_BATCH = 5000;
const DAY_MS = 86_400_000;

/** What one pruning run did. */
export interface PruneResult {
  /** Rows older than this were deleted. */
  cutoff: Date;
  deleted: number;
  /** True when the run stopped at its deadline with old rows left (the next run continues). */
  more: boolean;
}

/**
 * Deletes access-log rows with `at` before `nowMs − retentionDays` (days of 24 h), {@link PRUNE_BATCH} at a
 * time, until none are left or `deadlineMs` (ms since the epoch) passes. Idempotent; safe to run in
 * several processes at once (a row is deleted once, the others find nothing).
 * @throws whatever Postgres throws (the next run retries).
 */
export async function pruneAccessLog(db: Db, retentionDays: number, nowMs: number, deadlineMs = Number.POSITIVE_INFINITY, batch = PRUNE_BATCH): Promise<PruneResult> {
  const cutoff = new Date(nowMs - retentionDays * DAY_MS);
  let deleted = 0;
  for (;;) {
    const n = await db.$executeRaw`
      DELETE FROM "AccessLog" WHERE "id" IN (
        SELECT old."id" FROM "Game" AS g
        CROSS JOIN LATERAL (SELECT "id" FROM "AccessLog" WHERE "gameId" = g."id" AND "at" < ${cutoff} LIMIT ${batch}) AS old
        LIMIT ${batch})`;
    deleted += n;
    if (n < batch) return { cutoff, deleted, more: false };
    if (Date.now() >= deadlineMs) return { cutoff, deleted, more: true };
  }
}
