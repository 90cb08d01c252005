/**
 * Time source of the reference client. Everything that schedules (heartbeat interval, backoff, the
 * 409 "next whole second" wait, command-id retention) goes through a {@link Clock}, so tests and the
 * simulator can run time faster than real time. Latency samples are measured with `performance.now()`
 * instead: they are measurements, not schedules.
 */

/**
 * The reason the client gives when it ends one of its own sleeps early (a nudge, a door used before its
 * deferred bulk check, `stop()`). A plain string: `abort()` without a reason builds a `DOMException`
 * with a stack trace, ~5 µs each, for a value nobody reads.
 */
export const WAKE_REASON = 'woken';

/** A wall clock plus an abortable sleep. All values are milliseconds. */
export interface Clock {
  /** Wall-clock time in milliseconds since the Unix epoch (signing timestamps derive from it). */
  now(): number;
  /**
   * Resolves after `ms` milliseconds, or early and without error when `signal` aborts (the caller
   * checks `signal.aborted` to tell the two apart). Never rejects.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Sleeps `ms` real milliseconds with `setTimeout`; resolves early when `signal` aborts.
 * Never rejects.
 */
export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The real clock: `Date.now()` and {@link realSleep}. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: realSleep,
};
