/**
 * Scheduled once a minute: raises, refreshes and resolves ingest health warnings for persistent
 * throttling (src/limits/ingest-health.ts; spec: Events, "Persistent throttling of one game appears in
 * the workspace as an ingest health warning visible to the operator").
 */
import { checkIngestHealth, type HealthCheckResult } from '../../src/limits/ingest-health.js';
import type { JobContext } from './context.js';

export function ingestHealthJob(ctx: JobContext) {
  return async (): Promise<HealthCheckResult> => checkIngestHealth(ctx.redis, ctx.db, ctx.keySpace, Date.now());
}
