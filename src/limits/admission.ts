/**
 * Admission control of one API process (issue #15 item 2, "Admission control instead of timeouts"; README
 * "Overload"). Under overload a game request is either served promptly or refused at once, before its
 * body is read, its signature checked or anything is sent to Redis: 503 `overloaded` with a
 * `Retry-After` drawn uniformly from a range of whole seconds, so a fleet refused in one second does not
 * come back in one second. Nothing of a refused request is processed (its signature is not even
 * recorded), so the client simply sends it again later. One exception to "before its body is read": a
 * heartbeat over the heartbeat ceilings is decided once its body is in, and admitted when its roster is
 * empty (a shutdown's last heartbeat; {@link FINAL_HEARTBEAT_SHARE}, src/adapters/http/admission.ts).
 *
 * Three signals, each with a ceiling per request class. A class is refused while any signal is at or
 * above its ceiling; the ceilings are the configured maximum times the class's share
 * ({@link CLASS_SHARE}): heartbeats (they carry events and acks, and a refused one delays them) may use
 * everything, door manifest and bulk checks half, single door checks and ban checks a quarter, so as load
 * rises the cheapest-to-retry work is shed first and heartbeats last. A door or ban request is refused at
 * its class's ceiling only once a signal has stayed over it for {@link BURST_GRACE_MS} (a burst is let
 * through), and always at {@link burstShare} (twice the ceiling, at most three quarters of the maximum):
 *
 * | signal | measures | config (heartbeat ceiling) |
 * | --- | --- | --- |
 * | requests in flight | admitted game requests not yet answered | `ADMISSION_MAX_IN_FLIGHT` (512) |
 * | Redis commands queued | ioredis `commandQueue.length`: sent, awaiting replies | `ADMISSION_MAX_REDIS_QUEUE` (2000) |
 * | event-loop lag | how late a 20 ms timer fires, smoothed (EWMA, weight 0.1 per tick: ~10 ticks) (0 = off) | `ADMISSION_MAX_LOOP_LAG_MS` (200) |
 *
 * argon2 verifies have their own budget (src/auth/verify-budget.ts) and Postgres its bounded pool wait
 * (src/store/prisma.ts); both are work in flight, so they count here too.
 *
 * **Retry-After grows while overload lasts** (issue #32 item 2): a fleet refused together and told 2–8 s
 * comes back together 2–8 s later, into the same overload. So for door and ban requests the range
 * [min, max] is multiplied by 2^⌊d / {@link RETRY_AFTER_DOUBLING_SECONDS}⌋, d = seconds since this
 * overload began, each end capped at `ADMISSION_RETRY_AFTER_CAP_SECONDS` (60): 2–8 s in the first 10 s
 * of shedding, 4–16 s in the next 10 s, 8–32 s, then draws up to the cap. An overload ends when nothing
 * was refused for {@link OVERLOAD_QUIET_SECONDS}; the next refusal starts again from [min, max].
 * Heartbeats keep [min, max]: a server that waited longer than about two intervals after a refused
 * heartbeat would be closed as gone by the liveness sweep (3 missed intervals, 45 s at 15 s).
 *
 * The lag is smoothed so that one stall (a major GC, a scheduler hiccup) does not shed anything while
 * sustained lateness (the loop saturated for a few hundred ms) does. It measures how long any request
 * waits before this process gets to it, whatever the cause: on a machine where other processes take the
 * CPU, it sheds too (set `ADMISSION_MAX_LOOP_LAG_MS=0` there to rely on the other two signals). The
 * sampler runs only while requests arrive (it stops after 5 s without one), so an idle process, or a
 * test app, has no timer running.
 */

/** Which budget a game request draws on. */
export type RequestClass = 'heartbeat' | 'doors' | 'checks';

/** Why a request was refused. */
export type ShedReason = 'in_flight' | 'redis_queue' | 'loop_lag';

/** Share of each configured maximum a class may use (heartbeats all of it). */
export const CLASS_SHARE: Readonly<Record<RequestClass, number>> = Object.freeze({ heartbeat: 1, doors: 0.5, checks: 0.25 });

/**
 * Share of each configured maximum a heartbeat with an empty roster may use (src/adapters/http/admission.ts): a
 * server's last heartbeats as it shuts down, which a refusal would turn into sessions closed by the
 * liveness sweep a minute later instead of at the leave. Four times the heartbeat ceilings: with the
 * defaults, 2,048 requests in flight, so a whole fleet of up to about 2,000 servers per API process
 * shutting down in the same second (a game update) is never refused on that signal.
 */
export const FINAL_HEARTBEAT_SHARE = 4;

/** Request classes of the game endpoints (path without query). */
export const ENDPOINT_CLASS: Readonly<Record<string, RequestClass>> = Object.freeze({
  '/api/v1/game/heartbeat': 'heartbeat',
  '/api/v1/game/doors/manifest': 'doors',
  '/api/v1/game/doors/bulk': 'doors',
  '/api/v1/game/doors/check': 'checks',
  '/api/v1/game/bans/check': 'checks',
});

/**
 * Share of each configured maximum at which this process is under pressure: below every class's
 * ceiling, so reached before anything is refused. Pressure is reported to the observer
 * ({@link AdmissionObserver.pressed}), which tells the stream flushers to hold off
 * (src/limits/flush-yield.ts).
 */
export const PRESSURE_SHARE = 0.1;

/**
 * A burst is not an overload: door and ban requests over their class's ceiling are refused only once some
 * signal has been over it for this long, ms, or when it reaches {@link burstShare} of its maximum (heartbeats
 * keep the rest). A few hundred checks that arrive in the same instant (a fleet's joins, clients
 * released together) are answered within about this long; refusing them bought no latency, only
 * retries (docs/benchmarks.md "One request per joining player").
 */
export const BURST_GRACE_MS = 200;

/**
 * How far a burst of a class with share `share` (< 1) may go past its ceiling: twice it, never past three
 * quarters of each maximum, so heartbeats always keep a quarter of it (checks: half, doors: three quarters).
 */
export function burstShare(share: number): number {
  return Math.min(2 * share, 0.75);
}

/** The class shares below 1, whose ceilings a burst may pass for {@link BURST_GRACE_MS}. */
const BURSTING_SHARES: readonly number[] = [...new Set(Object.values(CLASS_SHARE).filter((s) => s < 1))];

/** Seconds of continuous overload after which the Retry-After range doubles. */
export const RETRY_AFTER_DOUBLING_SECONDS = 10;
/** Seconds without a refusal after which an overload is over (the Retry-After range starts again). */
export const OVERLOAD_QUIET_SECONDS = 5;

/** Period of the lag sampler, ms. */
export const LAG_SAMPLE_MS = 20;
/** Weight of the newest sample in the lag estimate (EWMA). */
export const LAG_SMOOTHING = 0.1;
/** The sampler stops after this long without a request, ms. */
const IDLE_STOP_MS = 5000;

export interface AdmissionLimits {
  /** Requests in flight at which heartbeats are refused (others at their share). */
  maxInFlight: number;
  /** Redis commands awaiting replies at which heartbeats are refused (others at their share). */
  maxRedisQueue: number;
  /** Event-loop lag, ms, at which heartbeats are refused (others at their share); 0 disables the signal. */
  maxLoopLagMs: number;
  /** Retry-After of a refusal, whole seconds drawn uniformly from [min, max] (times the overload's growth). */
  retryAfterMinSeconds: number;
  retryAfterMaxSeconds: number;
  /** Largest Retry-After a growing overload draws, seconds (≥ max). */
  retryAfterCapSeconds: number;
}

/** Told about every refusal (metrics) and, optionally, about pressure. */
export interface AdmissionObserver {
  shed(cls: RequestClass, reason: ShedReason): void;
  /** A request found some signal at or above {@link PRESSURE_SHARE} of its maximum (called per such request). */
  pressed?(): void;
}

/** A refusal: why, and the Retry-After to send (seconds). */
export interface Refusal {
  reason: ShedReason;
  retryAfterSeconds: number;
}

export class AdmissionController {
  private readonly inFlight: Record<RequestClass, number> = { heartbeat: 0, doors: 0, checks: 0 };
  private total = 0;
  private lag = 0;
  private sampler: NodeJS.Timeout | null = null;
  private lastTick = 0;
  private lastRequestAt = 0;
  /** Date.now() of the current overload's first refusal, and of its latest one (0: none yet). */
  private overloadSince = 0;
  private lastRefusalAt = 0;
  /** By class share below 1: since when (this.now(), ms) a signal has been at or above it; absent: below. */
  private readonly overSince = new Map<number, number>();
  /** Refusals by class and reason since the process started. */
  readonly shedCounts: Record<RequestClass, Record<ShedReason, number>> = {
    heartbeat: { in_flight: 0, redis_queue: 0, loop_lag: 0 },
    doors: { in_flight: 0, redis_queue: 0, loop_lag: 0 },
    checks: { in_flight: 0, redis_queue: 0, loop_lag: 0 },
  };

  /**
   * @param limits the ceilings (see the module comment).
   * @param redisQueue returns the number of Redis commands sent and awaiting replies (the API client's
   *   `commandQueue.length`).
   */
  constructor(
    readonly limits: Readonly<AdmissionLimits>,
    private readonly redisQueue: () => number = () => 0,
    private readonly observer?: AdmissionObserver,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admitted requests not yet answered, all classes. */
  get requestsInFlight(): number {
    return this.total;
  }

  /** The current event-loop lag estimate, ms (0 while the sampler is stopped). */
  get loopLagMs(): number {
    return this.lag;
  }

  /**
   * Admits a request of class `cls` (the caller must {@link release} it when answered) or refuses it.
   * @returns null when admitted, else the refusal (nothing was counted in flight).
   */
  tryAdmit(cls: RequestClass): Refusal | null {
    const share = CLASS_SHARE[cls];
    const reason = this.overCeiling(share);
    if (reason === null) this.overSince.delete(share);
    else if (share >= 1 || this.overFor(share) >= BURST_GRACE_MS || this.signalAt(burstShare(share))) return this.refuse(cls, reason);
    this.enter(cls);
    return null;
  }

  /** How long, ms, some signal has been at or above `share` of its maximum (0 when first seen now). */
  private overFor(share: number): number {
    const now = this.now();
    const since = this.overSince.get(share);
    if (since === undefined) this.overSince.set(share, now);
    return since === undefined ? 0 : now - since;
  }

  /**
   * Which signal is at or above `share` times its configured maximum, or null; counts nothing (a
   * request may still be admitted past it: src/adapters/http/admission.ts, final heartbeats). Tells the
   * observer of pressure when some signal is at {@link PRESSURE_SHARE} of its maximum. Starts the lag
   * sampler when it is stopped.
   */
  overCeiling(share: number): ShedReason | null {
    this.lastRequestAt = Date.now();
    if (!this.sampler && this.limits.maxLoopLagMs > 0) this.startSampler();
    if (this.observer?.pressed && this.signalAt(PRESSURE_SHARE)) this.observer.pressed();
    return this.signalAt(share);
  }

  /** Which signal is at or above `share` times its configured maximum, or null. */
  private signalAt(share: number): ShedReason | null {
    if (this.total >= this.inFlightCeiling(share)) return 'in_flight';
    if (this.redisQueue() >= Math.max(1, Math.floor(this.limits.maxRedisQueue * share))) return 'redis_queue';
    if (this.limits.maxLoopLagMs > 0 && this.lag >= this.limits.maxLoopLagMs * share) return 'loop_lag';
    return null;
  }

  /** Counts a request of class `cls` in flight (the caller must {@link release} it when answered). */
  enter(cls: RequestClass): void {
    this.inFlight[cls]++;
    this.total++;
    for (const share of BURSTING_SHARES) {
      if (this.total === this.inFlightCeiling(share) && !this.overSince.has(share)) this.overSince.set(share, this.now());
    }
  }

  /**
   * Counts a refusal of a request of class `cls` for `reason` and returns it with a Retry-After drawn
   * for the current overload (the first refusal after {@link OVERLOAD_QUIET_SECONDS} without one starts
   * a new overload; a heartbeat's range never grows).
   */
  refuse(cls: RequestClass, reason: ShedReason): Refusal {
    this.shedCounts[cls][reason]++;
    this.observer?.shed(cls, reason);
    const now = this.now();
    if (now - this.lastRefusalAt > OVERLOAD_QUIET_SECONDS * 1000) this.overloadSince = now;
    this.lastRefusalAt = now;
    // heartbeats never grow (see the module comment: the liveness sweep)
    return { reason, retryAfterSeconds: this.retryAfterSeconds(cls === 'heartbeat' ? 0 : (now - this.overloadSince) / 1000) };
  }

  /** A request admitted by {@link tryAdmit} was answered (or its connection closed). */
  release(cls: RequestClass): void {
    this.inFlight[cls]--;
    this.total--;
    // below the ceiling again: the next request over it starts a new burst (the other signals are read
    // again by the next request of the class)
    for (const share of BURSTING_SHARES) if (this.total === this.inFlightCeiling(share) - 1) this.overSince.delete(share);
  }

  /** The in-flight ceiling at `share` of `ADMISSION_MAX_IN_FLIGHT`. */
  private inFlightCeiling(share: number): number {
    return Math.max(1, Math.floor(this.limits.maxInFlight * share));
  }

  /** Admitted requests in flight of one class. */
  inFlightOf(cls: RequestClass): number {
    return this.inFlight[cls];
  }

  /**
   * A Retry-After, whole seconds, uniform in [min, max] × 2^⌊overloadSeconds / 10⌋, each end capped at
   * `retryAfterCapSeconds`.
   * @param overloadSeconds how long the overload has lasted, seconds (0: its first refusal).
   */
  retryAfterSeconds(overloadSeconds = 0): number {
    const { retryAfterMinSeconds, retryAfterMaxSeconds, retryAfterCapSeconds: cap } = this.limits;
    const growth = 2 ** Math.floor(Math.max(0, overloadSeconds) / RETRY_AFTER_DOUBLING_SECONDS);
    const max = Math.max(retryAfterMaxSeconds, Math.min(cap, retryAfterMaxSeconds * growth));
    const min = Math.min(max, retryAfterMinSeconds * growth);
    return min + Math.floor(this.random() * (max - min + 1));
  }

  /** Stops the lag sampler (process shutdown). */
  close(): void {
    if (this.sampler) clearInterval(this.sampler);
    this.sampler = null;
    this.lag = 0;
  }

  private startSampler(): void {
    this.lastTick = performance.now();
    this.lag = 0;
    this.sampler = setInterval(() => {
      const now = performance.now();
      const late = Math.max(0, now - this.lastTick - LAG_SAMPLE_MS);
      this.lastTick = now;
      this.lag += LAG_SMOOTHING * (late - this.lag);
      if (Date.now() - this.lastRequestAt > IDLE_STOP_MS) this.close();
    }, LAG_SAMPLE_MS);
    this.sampler.unref();
  }
}
