/**
 * Scheduled command expiry (src/commands/command-expiry.ts): every run expires the commands that came due;
 * every {@link RECONCILE_EVERY_MS} it also reconciles Postgres rows left open past their expiry with Redis.
 */
import { expireDueCommands, reconcileCommands } from '../../src/commands/command-expiry.js';
import { log } from '../../src/log.js';
import type { JobContext } from './context.js';

/** How often a process runs the reconciliation pass, ms. */
const RECONCILE_EVERY_MS = 30_000;

export function expireCommandsJob(ctx: JobContext) {
  let reconciledAt = 0;
  return async (): Promise<{ expired: number; reconciled: number }> => {
    const now = Date.now();
    const { expired, games } = await expireDueCommands(ctx.redis, ctx.keySpace, now);
    if (expired) log.info('commands expired', { expired, games });
    let reconciled = 0;
    if (now - reconciledAt >= RECONCILE_EVERY_MS) {
      reconciledAt = now;
      reconciled = (await reconcileCommands(ctx.db, ctx.redis, ctx.keySpace, now)).fixed;
      if (reconciled) log.warn('commands reconciled between Redis and Postgres', { reconciled });
    }
    return { expired, reconciled };
  };
}
