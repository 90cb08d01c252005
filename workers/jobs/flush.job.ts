/**
 * The four stream flushers as scheduled jobs: each run visits the games that may have entries and
 * drains each game's stream in batches until it is empty or the run's budget is spent (the next run
 * continues). Killing the process at any point loses and duplicates nothing (src/store/streams.ts).
 * A run of the events, sessions and access-log flushers holds off while an API process reports pressure,
 * within `FLUSH_YIELD_SECONDS` (src/limits/flush-yield.ts).
 */
import { StreamConsumer } from '../../src/store/streams.js';
import { flushEvents } from '../../src/events/event-flusher.js';
import { flushSessions } from '../../src/presence/session-flusher.js';
import { flushCommandLog } from '../../src/commands/command-log-flusher.js';
import { flushAccessLog } from '../../src/doors/access-log-flusher.js';
import { log } from '../../src/log.js';
import { isDependencyUnavailable } from '../../src/store/dependency-errors.js';
import { FlushYield } from '../../src/limits/flush-yield.js';
import { JOB_BUDGET_MS, type JobContext } from './context.js';

type FlushOne = (ctx: JobContext, consumer: StreamConsumer, gameId: string) => Promise<number>;

/** @param yields whether runs hold off while the API is pressed (not the command log: small, and moderators wait on it). */
function flushJob(group: string, flushOne: FlushOne, yields = true) {
  return (ctx: JobContext) => {
    const consumer = new StreamConsumer(ctx.redis, group, ctx.consumerName);
    const yielding = new FlushYield(ctx.redis, ctx.keySpace, yields ? ctx.config.flushYieldSeconds : 0, group, ctx.redisDurable);
    return async (): Promise<{ entries: number; held?: true }> => {
      // An API process is pressed: its requests get the CPU now, the entries wait in their streams.
      if (await yielding.shouldHold()) return { entries: 0, held: true };
      const deadline = Date.now() + JOB_BUDGET_MS;
      let entries = 0;
      for (const gameId of await ctx.games.gamesToVisit(group)) {
        try {
          for (let n = -1; n !== 0 && Date.now() < deadline; ) {
            n = await flushOne(ctx, consumer, gameId);
            entries += n;
          }
        } catch (err) {
          // Postgres or Redis unreachable: no game can be flushed; fail the run (logged once per outage
          // by workers/index.ts), entries stay pending for the next run.
          if (isDependencyUnavailable(err)) throw err;
          // One game's failure must not starve the others; its entries stay pending and are retried.
          log.error('flush failed', { group, gameId, err: String(err) });
        }
        if (Date.now() >= deadline) break;
      }
      return { entries };
    };
  };
}

export const flushEventsJob = flushJob('flush-events', async (ctx, c, gameId) => (await flushEvents(ctx.db, c, ctx.keySpace, gameId)).entries);
export const flushSessionsJob = flushJob('flush-sessions', async (ctx, c, gameId) => (await flushSessions(ctx.db, c, ctx.keySpace, gameId)).entries);
export const flushCommandLogJob = flushJob('flush-command-log', async (ctx, c, gameId) => (await flushCommandLog(ctx.db, c, ctx.keySpace, gameId)).entries, false);
export const flushAccessLogJob = flushJob('flush-access-log', async (ctx, c, gameId) => (await flushAccessLog(ctx.db, c, ctx.keySpace, gameId)).entries);
