/**
 * Fixtures of the ban tests: a ban service over the harness's Redis and Postgres (with kicks through the
 * commands service and, when given, a platform write queue), extra games in a workspace, and the signed
 * POST bans/check.
 */
import { Queue } from 'bullmq';
import type { Harness, TestGame } from '../support/harness.js';
import { createGame } from '../../src/games/game-service.js';
import { BanService } from '../../src/bans/ban-service.js';
import { Blocklist } from '../../src/bans/blocklist.js';
import { commandKickIssuer } from '../../src/bans/ban-kicks.js';
import { PLATFORM_BANS_QUEUE, PlatformWriteQueue, type PlatformBanJob } from '../../src/bans/platform-write-queue.js';

export const CHECK = '/api/v1/game/bans/check';

let nonce = 0;
/**
 * POST bans/check for `externalId` connecting to `externalServerId` of `g`'s game. The body carries an
 * extra field (ignored by the service) so that repeated checks in one second are not replays.
 */
export function check(h: Harness, g: TestGame, externalId: string, externalServerId = 'server-1') {
  nonce += 1;
  return h.signed(g, 'post', CHECK, { externalId, externalServerId, nonce });
}

/** A second game (with its own key) in the workspace of `g`. */
export async function siblingGame(h: Harness, g: TestGame, name = 'sibling game'): Promise<TestGame> {
  const game = await createGame(h.db, { workspaceId: g.workspaceId, name });
  return { workspaceId: g.workspaceId, gameId: game.id, ...(await h.key(game.id)) };
}

/** The BullMQ queue of platform ban writes under the harness's prefix (close it after use). */
export function platformQueue(h: Harness): Queue<PlatformBanJob> {
  return new Queue<PlatformBanJob>(PLATFORM_BANS_QUEUE, { connection: h.redis, prefix: h.keySpace.global.bullPrefix() });
}

/** A ban service as the CLI builds it, on the harness's connections. */
export function banService(h: Harness, opts: { queue?: Queue<PlatformBanJob>; debounceMs?: number } = {}): BanService {
  const { keySpace } = h;
  return new BanService({
    db: h.db,
    redis: h.redis,
    keySpace,
    blocklist: new Blocklist(h.redis, h.db, keySpace),
    platformWrites: opts.queue ? new PlatformWriteQueue(opts.queue, h.db, opts.debounceMs) : null,
    kick: commandKickIssuer({ db: h.db, redis: h.redis, keySpace }),
  });
}

/** Polls `cond` every 25 ms until it holds; throws `what` after `timeoutMs` (a deadline, not an assertion on speed). */
export async function waitFor(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
