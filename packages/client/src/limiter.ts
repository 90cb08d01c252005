/**
 * Bounded concurrency for one game server's per-player requests (issue #15 item 3: "ban checks of a burst
 * of joining players are coalesced where the API allows"; bans/check is per user and the spec has no bulk
 * ban lookup, so the client bounds how many run at once instead of firing one per joining player).
 */

/** Runs at most `max` tasks at once; the rest wait in arrival order. */
export class ConcurrencyLimiter {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  /** @param max tasks running at once, at least 1. */
  constructor(readonly max: number) {
    if (!(max >= 1)) throw new RangeError('ConcurrencyLimiter needs max >= 1');
  }

  /** Tasks running now. */
  get running(): number {
    return this.active;
  }

  /** Tasks waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Runs `task` when a slot is free; resolves or rejects as it does. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}
