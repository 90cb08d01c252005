/**
 * Consumer side of the platform ban writes: brings one user's restriction in one game up to date
 * (issue #6, "Enforcement on platforms that ban natively"). Called by the `platform-bans` worker role
 * (workers/jobs/platform-bans.job.ts) for a {@link PlatformBanJob}; returns what to do next instead of
 * sleeping, so the job can be put back in the delayed set without holding a worker slot.
 *
 * One run:
 * 1. Read the user's `queued` rows. None: nothing to do.
 * 2. Debounce: wait until the newest row is `debounceMs` old (but no more than `maxWaitMs` after the
 *    oldest), so only the final state of a burst is written.
 * 3. First attempt of the newest row: recompute the state from Postgres now and fix it on the row
 *    (retries send exactly the same body and idempotency key); the older rows become `superseded`. A
 *    burst always ends in one write of its final state, even when that equals what the platform had
 *    before the burst (ten toggles of a ban: one write); `bans reconcile` is what compares with the
 *    platform.
 * 4. Take a rate-limit slot (platform-write-limits.ts); none free: wait the time the script says.
 * 5. PATCH. 2xx: `written`. 429/5xx/network: `lastError` recorded and retried after Retry-After (a 429
 *    also pauses the universe) or an exponential backoff with jitter, until `maxAttempts`; then, and on
 *    any other 4xx, `failed` with the reason. Every attempt is counted on the row.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { log } from '../log.js';
import { nativeBanSettings, type PlatformSettings } from '../games/platform-settings.js';
import { PlatformRestrictionClient, PlatformWriteError } from './platform-restriction-client.js';
import { DEFAULT_WRITE_LIMITS, pauseWrites, reserveWriteSlot, type PlatformWriteLimits } from './platform-write-limits.js';
import { DEFAULT_DEBOUNCE_MS, type PlatformBanJob } from './platform-write-queue.js';
import { desiredRestriction, writeStateFor } from './restriction-state.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

export interface PlatformWriterOptions extends PlatformWriteLimits {
  /** Quiet period after the newest change before writing, ms. */
  debounceMs: number;
  /** Longest a change waits for a quiet period (constant toggling still gets written), ms. */
  maxWaitMs: number;
  /** HTTP attempts per write before it is `failed`. */
  maxAttempts: number;
  /** First retry delay without Retry-After, ms; doubles per attempt up to {@link backoffMaxMs}. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_WRITER_OPTIONS: Readonly<PlatformWriterOptions> = Object.freeze({
  ...DEFAULT_WRITE_LIMITS,
  debounceMs: DEFAULT_DEBOUNCE_MS,
  maxWaitMs: 30_000,
  maxAttempts: 8,
  backoffBaseMs: 1_000,
  backoffMaxMs: 5 * 60_000,
});

/** What one run did, and when to run again. */
export type WriteOutcome =
  | { kind: 'idle' }
  | { kind: 'delay'; delayMs: number; why: 'debounce' | 'rate_limit' | 'retry' }
  | { kind: 'written'; writeId: string }
  | { kind: 'failed'; writeId: string | null; error: string };

export interface PlatformWriterDeps {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  options?: Partial<PlatformWriterOptions>;
  /** Builds the HTTP writer for a game's settings; default {@link PlatformRestrictionClient}. */
  client?: (settings: PlatformSettings) => Pick<PlatformRestrictionClient, 'write'>;
  /** Random source in [0, 1) for backoff jitter. */
  random?: () => number;
}

export class PlatformBanWriter {
  private readonly opts: PlatformWriterOptions;
  private readonly client: NonNullable<PlatformWriterDeps['client']>;
  private readonly random: () => number;

  constructor(private readonly deps: PlatformWriterDeps) {
    this.opts = { ...DEFAULT_WRITER_OPTIONS, ...deps.options };
    this.client = deps.client ?? ((settings) => new PlatformRestrictionClient(settings));
    this.random = deps.random ?? Math.random;
  }

  /** Runs the steps of the module comment once for `job` at server time `nowMs`. Never throws for HTTP outcomes. */
  async process(job: PlatformBanJob, nowMs = Date.now()): Promise<WriteOutcome> {
    const { db } = this.deps;
    const { gameId, externalId } = job;
    const rows = await db.platformBanWrite.findMany({ where: { gameId, externalId, state: 'queued' }, orderBy: [{ queuedAt: 'asc' }, { id: 'asc' }] });
    const newest = rows.at(-1);
    if (!newest) return { kind: 'idle' };
    const olderIds = rows.slice(0, -1).map((r) => r.id);

    if (newest.attempts === 0) {
      const dueAt = Math.min(newest.queuedAt.getTime() + this.opts.debounceMs, rows[0]!.queuedAt.getTime() + this.opts.maxWaitMs);
      if (dueAt > nowMs) return { kind: 'delay', delayMs: dueAt - nowMs, why: 'debounce' };
    }

    const game = await db.game.findUnique({ where: { id: gameId } });
    const settings = game && nativeBanSettings(game);
    if (!game || !settings) {
      const error = 'the game does not ban natively (nativeBans off, or universe id, cloud API base URL or key missing)';
      await db.platformBanWrite.updateMany({ where: { id: { in: rows.map((r) => r.id) } }, data: { state: 'failed', lastError: error } });
      return { kind: 'failed', writeId: newest.id, error };
    }

    const desired = await desiredRestriction(db, game, externalId, nowMs);
    let body = { active: newest.active, durationSeconds: newest.durationSeconds };
    if (newest.attempts === 0) {
      body = writeStateFor(desired, nowMs);
      await db.$transaction([
        db.platformBanWrite.update({ where: { id: newest.id }, data: body }),
        db.platformBanWrite.updateMany({ where: { id: { in: olderIds } }, data: { state: 'superseded' } }),
      ]);
    }

    const attempt = newest.attempts + 1;
    const wait = await reserveWriteSlot(this.deps.redis, this.deps.keySpace, gameId, externalId, `${newest.id}:${attempt}`, this.opts);
    if (wait > 0) return { kind: 'delay', delayMs: wait, why: 'rate_limit' };

    // Nothing between taking the slot and sending: the platform counts the write when it arrives.
    try {
      await this.client(settings).write({
        userId: externalId,
        ...body,
        privateReason: body.active ? desired.privateReason : 'no active ban',
        displayReason: body.active ? desired.displayReason : '',
        idempotencyKey: newest.idempotencyKey,
        firstSentAt: newest.queuedAt,
      });
    } catch (err) {
      if (!(err instanceof PlatformWriteError)) throw err;
      return this.failedAttempt(gameId, newest.id, attempt, err);
    }
    await db.platformBanWrite.update({ where: { id: newest.id }, data: { state: 'written', writtenAt: new Date(), lastError: null, attempts: attempt } });
    log.info('platform restriction written', { gameId, writeId: newest.id, active: body.active, durationSeconds: body.durationSeconds, attempts: attempt });
    return { kind: 'written', writeId: newest.id };
  }

  private async failedAttempt(gameId: string, writeId: string, attempt: number, err: PlatformWriteError): Promise<WriteOutcome> {
    const { db } = this.deps;
    if (!err.retryable || attempt >= this.opts.maxAttempts) {
      await db.platformBanWrite.update({ where: { id: writeId }, data: { state: 'failed', lastError: err.message, attempts: attempt } });
      log.warn('platform restriction write failed', { gameId, writeId, attempts: attempt, status: err.status, err: err.message });
      return { kind: 'failed', writeId, error: err.message };
    }
    await db.platformBanWrite.update({ where: { id: writeId }, data: { lastError: err.message, attempts: attempt } });
    const backoff = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** (attempt - 1));
    const delayMs = err.retryAfterMs ?? Math.round(backoff / 2 + (this.random() * backoff) / 2);
    if (err.status === 429) await pauseWrites(this.deps.redis, this.deps.keySpace, gameId, delayMs);
    log.info('platform restriction write will be retried', { gameId, writeId, attempts: attempt, status: err.status, delayMs });
    return { kind: 'delay', delayMs, why: 'retry' };
  }
}
