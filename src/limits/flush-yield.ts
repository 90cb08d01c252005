/**
 * Flushers yield to a pressed request path (issue #32 item 2). Where the API, Redis, the workers and
 * PostgreSQL share cores, the flush of events, sessions and the access log (the workers' statements and
 * the Postgres backends running them: ~40 % of the service's CPU in a fleet run) competes with the
 * requests for the same CPU. Requests have milliseconds of slack; the flush has seconds: what it moves is
 * already durable in the Redis streams and is taken from them only once committed (src/store/streams.ts).
 * So during a burst (a fleet's join storm, a whole fleet restarting) the flush should wait and catch up
 * after, and the API refuse less.
 *
 * - An API process under pressure, some admission signal at `PRESSURE_SHARE` (a tenth) of its ceiling
 *   or more (below every class's ceiling, so before anything is refused: src/limits/admission.ts), reports
 *   it: {@link PressureReporter} sets `<prefix>:api-pressure` with a TTL of
 *   {@link PRESSURE_REPORT_TTL_MS}, at most every {@link REPORT_EVERY_MS} per process, without waiting
 *   for the reply.
 * - The stream flush jobs (workers/jobs/flush.job.ts) ask {@link FlushYield} before each run: while a
 *   report is present they skip the run, for at most `FLUSH_YIELD_SECONDS` (src/config.ts) of continuous
 *   pressure; past that they flush whatever the pressure (sustained overload is a shortage of capacity,
 *   not a burst, and the backlog must not grow without bound). Nothing is lost either way: a skipped run
 *   leaves the entries in their stream for the next one.
 */
import { log } from '../log.js';
import { PRESSURE_REPORT_TTL_MS } from '../store/keys.js';
import type { AppRedis } from '../store/redis.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Least time between two reports of one process, ms. */
export const REPORT_EVERY_MS = 500;

/** The API side: reports this process's pressure to the flushers. */
export class PressureReporter {
  private lastReportAt = 0;

  constructor(
    private readonly redis: AppRedis,
    private readonly keySpace: KeySpace,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Notes that this process is under pressure now. Sends `SET <key> <now ms> PX 2000` unless it sent one
   * less than {@link REPORT_EVERY_MS} ago; never waits for it and never throws (a Redis that cannot take
   * it is answered by the request path's own errors).
   */
  report(): void {
    const now = this.now();
    if (now - this.lastReportAt < REPORT_EVERY_MS) return;
    this.lastReportAt = now;
    this.redis.set(this.keySpace.global.apiPressure(), String(now), 'PX', PRESSURE_REPORT_TTL_MS).catch(() => undefined);
  }
}

/**
 * The worker side: whether a flush run should hold off now. One per flush job of a worker process.
 * A stretch of held-off runs lasts while the pressure does, at most `maxHoldSeconds`; the next stretch
 * may begin only as long after it as it lasted, so the flush holds off at most half the time however the
 * pressure comes and goes; and after a stretch that reached `maxHoldSeconds` only once the pressure has
 * been gone, so sustained overload (a 5000 × 20 fleet run: the events backlog grew to ~13 KB per live
 * server when stretches repeated) gets one stretch, then a flush that keeps up.
 */
export class FlushYield {
  /** now() when the current stretch began; 0 when none is going on. */
  private holdingSince = 0;
  /** now() before which no new stretch begins (the cool-down after the last one). */
  private nextStretchAt = 0;
  /** The last stretch reached `maxHoldSeconds`: no new one until a run finds no pressure. */
  private awaitingCalm = false;

  /**
   * @param maxHoldSeconds `FLUSH_YIELD_SECONDS`: longest stretch of continuous pressure the runs hold
   *   off for, seconds; 0 never holds off (and reads nothing).
   * @param group the flush job's name, for the log.
   * @param redisDurable whether Redis keeps what it acknowledged across a crash (AOF), asked before each
   *   run: without it a held entry is one more that a Redis crash would lose, so runs never hold off.
   */
  constructor(
    private readonly redis: AppRedis,
    private readonly keySpace: KeySpace,
    private readonly maxHoldSeconds: number,
    private readonly group: string,
    private readonly redisDurable: () => boolean = () => true,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * True when this run should be skipped: Redis is durable, an API process reported pressure within the
   * last {@link PRESSURE_REPORT_TTL_MS}, and the current stretch has lasted less than `maxHoldSeconds`
   * (or none is going on, the last one's cool-down is over, and the pressure has been gone since a
   * stretch that reached `maxHoldSeconds`).
   * @throws the Redis client's error when Redis is unreachable (the run fails as any flush would).
   */
  async shouldHold(): Promise<boolean> {
    if (this.maxHoldSeconds <= 0) return false;
    if (!this.redisDurable()) return this.end(false);
    const now = this.now();
    if (!this.holdingSince && now < this.nextStretchAt) return false;
    const pressed = (await this.redis.exists(this.keySpace.global.apiPressure())) === 1;
    if (!this.holdingSince) {
      if (!pressed) this.awaitingCalm = false;
      if (!pressed || this.awaitingCalm) return false;
      this.holdingSince = now;
      log.info('flush holds off: an API process reports pressure', { group: this.group, maxHoldSeconds: this.maxHoldSeconds });
      return true;
    }
    if (pressed && now - this.holdingSince < this.maxHoldSeconds * 1000) return true;
    return this.end(pressed);
  }

  /** Ends the current stretch, if any (logged), and starts its cool-down. @returns false (run now). */
  private end(pressed: boolean): false {
    if (!this.holdingSince) return false;
    const now = this.now();
    const held = now - this.holdingSince;
    log.info(pressed ? 'flush resumes under pressure: held off for FLUSH_YIELD_SECONDS' : 'flush resumes: the API reports no pressure', { group: this.group, heldMs: held });
    this.holdingSince = 0;
    this.nextStretchAt = now + held;
    this.awaitingCalm = pressed;
    return false;
  }
}
