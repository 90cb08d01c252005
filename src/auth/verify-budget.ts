/**
 * How much argon2 work unrecognised secrets may cause (issue #16: "wrong secrets cost bounded CPU and
 * memory"). Only a secret that matches no known digest reaches argon2, so this budget only ever refuses
 * wrong secrets, and a key's first verify after its digest lapsed.
 *
 * - Per key prefix: at most {@link MAX_FAILED_VERIFIES} verifies per {@link WINDOW_MS}, reserved *before*
 *   the verify starts (so a burst on a cold prefix cannot start a hundred verifies before the count
 *   catches up) and refunded when the secret turns out right.
 * - Overall: at most {@link MAX_CONCURRENT_VERIFIES} verifies run at once and {@link MAX_QUEUED_VERIFIES}
 *   wait; beyond that a request is refused at once instead of queueing behind a flood.
 * Memory: prefix windows live in a bounded LRU ({@link MAX_TRACKED_PREFIXES}).
 */
import { LRUCache } from 'lru-cache';

/** Failed argon2 verifies per prefix per window before the prefix is throttled. */
export const MAX_FAILED_VERIFIES = 5;
/** The per-prefix window, ms. */
export const WINDOW_MS = 60_000;
/**
 * argon2 verifies running at once in one process: one, because each already runs 4 lanes in parallel
 * (the library's default p=4) for ~130 ms, enough to fill both cores of this machine's size.
 */
export const MAX_CONCURRENT_VERIFIES = 1;
/** argon2 verifies waiting for a slot in one process (~2 s of verify work at most). */
export const MAX_QUEUED_VERIFIES = 16;
/** Prefixes whose window one process remembers. */
export const MAX_TRACKED_PREFIXES = 10_000;

/** Why {@link VerifyBudget.run} refused: the prefix's window is spent, or the process is saturated. */
export type BudgetRefusal = 'prefix' | 'overall';

export class BudgetExceeded extends Error {
  constructor(readonly reason: BudgetRefusal) {
    super(`argon2 verify budget exceeded (${reason})`);
  }
}

/** The per-prefix and overall argon2 budget of one process. */
export class VerifyBudget {
  private readonly windows = new LRUCache<string, { start: number; used: number }>({ max: MAX_TRACKED_PREFIXES });
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  /**
   * Runs `verify` (resolves true when the secret is right) inside the budget of `prefix`.
   * @throws {BudgetExceeded} at once, without running `verify`, when the prefix or the process is out of budget.
   */
  async run(prefix: string, verify: () => Promise<boolean>, now = Date.now()): Promise<boolean> {
    let w = this.windows.get(prefix);
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, used: 0 };
      this.windows.set(prefix, w);
    }
    if (w.used >= MAX_FAILED_VERIFIES) throw new BudgetExceeded('prefix');
    if (this.running >= MAX_CONCURRENT_VERIFIES && this.waiting.length >= MAX_QUEUED_VERIFIES) throw new BudgetExceeded('overall');
    w.used += 1;
    const window = w;
    await this.acquire();
    try {
      const ok = await verify();
      if (ok) window.used = Math.max(0, window.used - 1);
      return ok;
    } finally {
      this.release();
    }
  }

  /** Verifies running plus waiting (for metrics and tests). */
  get pending(): number {
    return this.running + this.waiting.length;
  }

  private acquire(): Promise<void> {
    if (this.running < MAX_CONCURRENT_VERIFIES) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}
