/**
 * The `platform-bans` role: one job per (game, user) whose user restriction must be brought up to date
 * on a platform that bans natively (producer: src/bans/platform-write-queue.ts; logic:
 * src/bans/platform-writer.ts). A `delay` outcome (debounce, rate limit, Retry-After or backoff) puts
 * the same job back in the delayed set without using a BullMQ attempt: write attempts are counted on the
 * PlatformBanWrite row, where `bans list` shows them. BullMQ's own attempts only cover unexpected errors
 * (Postgres or Redis unreachable).
 */
import { DelayedError, type Job } from 'bullmq';
import { PlatformBanWriter, type PlatformWriterDeps } from '../../src/bans/platform-writer.js';
import type { PlatformBanJob } from '../../src/bans/platform-write-queue.js';
import type { JobContext } from './context.js';

/** Builds the processor; `overrides` lets tests shorten the windows or point at a local platform imitation. */
export function platformBansJob(ctx: JobContext, overrides: Pick<PlatformWriterDeps, 'options' | 'client'> = {}) {
  const writer = new PlatformBanWriter({ db: ctx.db, redis: ctx.redis, keySpace: ctx.keySpace, ...overrides });
  return async (job: Job<PlatformBanJob>, token?: string): Promise<unknown> => {
    const outcome = await writer.process(job.data, Date.now());
    if (outcome.kind === 'delay') {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
    }
    return outcome;
  };
}
