/**
 * Scheduled once-a-minute sample of concurrent players per game from the live rosters
 * (src/derived/concurrency-sampler.ts), over the games the workers visit (recently active ones, plus every
 * game at each full scan).
 */
import { sampleConcurrency } from '../../src/derived/concurrency-sampler.js';
import type { JobContext } from './context.js';

/** The `sample-concurrency` role's processor. */
export function sampleConcurrencyJob(ctx: JobContext) {
  return async (): Promise<{ games: number }> => {
    const r = await sampleConcurrency(ctx.redis, ctx.db, ctx.keySpace, await ctx.games.gamesToVisit('sample-concurrency'), Date.now());
    return { games: r.games };
  };
}
