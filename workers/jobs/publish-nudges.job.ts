/**
 * The `publish-nudges` role: one job per coalesced nudge request (src/commands/nudge-queue.ts), sent by
 * {@link NudgeSender}. A `retry` outcome puts the same job back as delayed, so requests arriving
 * meanwhile still join it (its deduplication id stays taken) and the budget is never exceeded.
 */
import { DelayedError, type Job } from 'bullmq';
import { NudgeSender } from '../../src/commands/nudge-sender.js';
import type { NudgeJobData } from '../../src/commands/nudge-queue.js';
import { log } from '../../src/log.js';
import type { JobContext } from './context.js';

export function publishNudgesJob(ctx: JobContext) {
  const sender = new NudgeSender({ db: ctx.db, redis: ctx.redis, keySpace: ctx.keySpace });
  return async (job: Job<NudgeJobData>, token?: string): Promise<unknown> => {
    const { gameId } = job.data;
    const outcome = await sender.send(gameId, Date.now(), job.timestamp);
    if (outcome.kind === 'retry') {
      await job.moveToDelayed(Date.now() + outcome.afterMs, token);
      throw new DelayedError();
    }
    if (outcome.kind === 'failed') log.warn('nudge refused by the platform; check the game push settings', { gameId, status: outcome.status });
    return outcome;
  };
}
