/**
 * One server's memory of the service saying "busy" (issue #32 item 2: "the refused do not come back as
 * the same herd"). A 503 with `Retry-After` on a door or ban request means the service is shedding load
 * or briefly without a dependency, for every caller, not for one user: until that time has passed, the
 * server's other door and ban requests are not sent at all. A request that may wait (a manifest, a bulk
 * check, a ban check within its wait budget) waits for the gate and goes then; one that may not (a single
 * door check) is answered by its failMode at once, as a 503 would have been, without the request.
 *
 * Without it, a fleet of 1,000 servers whose players open doors every few seconds kept sending ~1,500
 * checks a second into an overloaded service, each refused (docs/benchmarks.md, bench:fleet), and the
 * refusals alone kept it saturated. A 429 does not close the gate: it is a quota of one user, door or
 * server, not the service's state. Heartbeats never look at the gate (they carry events and acks, and the
 * service sheds them last).
 */
import { parseRetryAfterMs, RETRY_AFTER_JITTER_MS } from './backoff.js';
import type { Clock } from './clock.js';

export class BusyGate {
  private until = 0;

  constructor(private readonly clock: Clock) {}

  /** Milliseconds until door and ban requests may be sent again; 0 when the gate is open. */
  remainingMs(): number {
    return Math.max(0, this.until - this.clock.now());
  }

  /**
   * Waits for the gate to open, plus up to 1 s of jitter as for any `Retry-After` (a fleet's servers do
   * not all return in one instant), when that fits in `budgetMs`.
   * @returns the ms waited (0: the gate was open), or null when it stays closed longer than the budget
   *   (nothing waited: the caller answers without the request).
   */
  async waitWithin(budgetMs: number, random: () => number = Math.random): Promise<number | null> {
    const held = this.remainingMs();
    if (held === 0) return 0;
    const delay = held + Math.floor(random() * RETRY_AFTER_JITTER_MS);
    if (delay > budgetMs) return null;
    await this.clock.sleep(delay);
    return delay;
  }

  /**
   * A response came: a 503 with a usable `Retry-After` (seconds or an HTTP date) closes the gate until
   * then; it never opens a gate earlier than another answer closed it. Anything else changes nothing.
   */
  observe(status: number, retryAfter: string | null | undefined): void {
    if (status !== 503) return;
    const now = this.clock.now();
    const ms = parseRetryAfterMs(retryAfter, now);
    if (ms !== null) this.until = Math.max(this.until, now + ms);
  }
}
