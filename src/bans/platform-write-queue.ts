/**
 * Producer side of the platform ban writes (issue #6, "queued, debounced"; spec: Limits, platform
 * user-restriction writes). A ban change for a game that bans natively records the state to write as a
 * `queued` PlatformBanWrite row (visible in `bans list`) and schedules the user's job on the
 * `{platform-bans}` BullMQ queue; the worker (src/bans/platform-writer.ts) writes only the final state.
 *
 * Debounce, on two levels:
 * - BullMQ deduplication per (game, user), `replace` + `delay`: a change while the user's job is still
 *   waiting out its delay replaces it with a new one delayed from now, so a burst ends in one job;
 *   `keepLastIfActive`: a change while the job runs is kept as one follow-up job, never a parallel one.
 * - The job carries no state, only (game, user): it reads the queued rows when it runs and writes the
 *   newest one (older ones become `superseded`), after a quiet period measured from the newest row.
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Db } from '../store/prisma.js';
import { desiredRestriction, writeStateFor } from './restriction-state.js';

/** BullMQ queue of the platform ban writes (hash-tagged name: one Cluster slot per queue). */
export const PLATFORM_BANS_QUEUE = '{platform-bans}';
/** Job name on {@link PLATFORM_BANS_QUEUE}. */
export const PLATFORM_BAN_JOB = 'write-restriction';
/** Default quiet period after a user's last change before it is written, ms. */
export const DEFAULT_DEBOUNCE_MS = 2_000;

/** Data of one job: whose restriction to bring up to date. The state itself is read from Postgres. */
export interface PlatformBanJob {
  gameId: string;
  externalId: string;
}

export type PlatformBanQueue = Queue<PlatformBanJob>;

/** The queued row as reported to the caller. */
export interface QueuedWrite {
  id: string;
  gameId: string;
  externalId: string;
  active: boolean;
  durationSeconds: number | null;
  state: 'queued';
}

/** Job options: deduplicated per (game, user) as described above; unexpected errors retried 5 times. */
export function jobOptions(data: PlatformBanJob, debounceMs: number) {
  return {
    delay: debounceMs,
    deduplication: { id: `${data.gameId}:${data.externalId}`, replace: true, keepLastIfActive: true },
    attempts: 5,
    backoff: { type: 'exponential', delay: 1_000 },
    removeOnComplete: true,
    removeOnFail: 1_000,
  };
}

export class PlatformWriteQueue {
  constructor(
    private readonly queue: PlatformBanQueue,
    private readonly db: Db,
    private readonly debounceMs = DEFAULT_DEBOUNCE_MS,
  ) {}

  /**
   * Records the restriction `externalId` should now have in `game` (a `queued` row; `banId` = the ban
   * whose change caused it) and schedules the user's debounced job.
   */
  async enqueue(game: { id: string; workspaceId: string }, externalId: string, banId: string | null, nowMs: number): Promise<QueuedWrite> {
    const state = writeStateFor(await desiredRestriction(this.db, game, externalId, nowMs), nowMs);
    const row = await this.db.platformBanWrite.create({
      data: {
        gameId: game.id,
        externalId,
        banId,
        active: state.active,
        durationSeconds: state.durationSeconds,
        state: 'queued',
        idempotencyKey: randomUUID(),
        queuedAt: new Date(nowMs),
      },
    });
    await this.schedule(game.id, externalId);
    return { id: row.id, gameId: game.id, externalId, active: row.active, durationSeconds: row.durationSeconds, state: 'queued' };
  }

  /** (Re)schedules the user's job without a new row (reconcile, after queued rows lost their job). */
  async schedule(gameId: string, externalId: string): Promise<void> {
    const data = { gameId, externalId };
    await this.queue.add(PLATFORM_BAN_JOB, data, jobOptions(data, this.debounceMs));
  }
}
