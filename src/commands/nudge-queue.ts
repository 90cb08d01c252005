/**
 * The producer side of urgent nudges (spec: Events › Urgent nudge). Issuing a command for a live server
 * asks for a nudge of the command's game; the `publish-nudges` worker role publishes it. Publishing is
 * never done in the issuing process: the CLI (or any caller) only adds one small job.
 *
 * Coalescing: one BullMQ deduplication id per game. A request waits {@link NUDGE_COALESCE_MS} before it
 * runs, and every request of that game arriving meanwhile (or while the job waits for budget) joins it;
 * requests arriving while it is being published leave exactly one follow-up job (`keepLastIfActive`), so a
 * burst of commands gives one nudge and a command issued just after a publish still gets its own.
 */
import { absorbSharedConnectionErrors } from '../store/connection-state.js';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** BullMQ queue of the `publish-nudges` worker role (its own hash tag, BullMQ's Cluster guidance). */
export const NUDGE_QUEUE = '{publish-nudges}';
/** How long a nudge request waits for more requests of the same game before it is published, ms. */
export const NUDGE_COALESCE_MS = 250;

/** Data of one nudge job. */
export interface NudgeJobData {
  gameId: string;
}

/** Asks for a nudge of a game's servers; implementations must be cheap and must not publish inline. */
export interface NudgeRequester {
  /** Requests one (coalesced) nudge of `gameId`'s topic. */
  request(gameId: string): Promise<void>;
}

/** {@link NudgeRequester} over the BullMQ queue the `publish-nudges` worker role consumes. */
export class NudgeQueue implements NudgeRequester {
  private readonly queue: Queue<NudgeJobData>;
  private readonly coalesceMs: number;

  /**
   * @param connection a Redis connection of this process (not closed by {@link close}).
   * @param opts.coalesceMs how long a request waits for others of its game, ms (default {@link NUDGE_COALESCE_MS}).
   */
  constructor(connection: Redis, keySpace: KeySpace, opts: { coalesceMs?: number } = {}) {
    this.queue = new Queue<NudgeJobData>(NUDGE_QUEUE, { connection, prefix: keySpace.global.bullPrefix() });
    absorbSharedConnectionErrors(this.queue, `queue:${NUDGE_QUEUE}`);
    this.coalesceMs = opts.coalesceMs ?? NUDGE_COALESCE_MS;
  }

  async request(gameId: string): Promise<void> {
    await this.queue.add(
      'nudge',
      { gameId },
      {
        delay: this.coalesceMs,
        deduplication: { id: `nudge:${gameId}`, keepLastIfActive: true },
        removeOnComplete: true,
        removeOnFail: 100,
      },
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
