/** Scheduled liveness sweep over every game with live servers (src/presence/liveness-sweep.ts). */
import { sweepGame } from '../../src/presence/liveness-sweep.js';
import { log } from '../../src/log.js';
import type { JobContext } from './context.js';

export function sweepLivenessJob(ctx: JobContext) {
  return async (): Promise<{ gone: number }> => {
    let gone = 0;
    for (const gameId of await ctx.games.gamesToVisit('sweep-liveness')) {
      try {
        const r = await sweepGame(ctx.redis, ctx.db, ctx.keySpace, gameId, ctx.config.goneAfterMissedIntervals, Date.now());
        if (r.gone.length) log.info('servers gone', { gameId, servers: r.gone, sessionsClosed: r.sessionsClosed });
        gone += r.gone.length;
      } catch (err) {
        log.error('liveness sweep failed', { gameId, err: String(err) });
      }
    }
    return { gone };
  };
}
