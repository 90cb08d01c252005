/**
 * One timer for a whole fleet process (issue #15 item 4: "no per-player timers where one per server
 * serves"; here not even one per server). Everything a fleet worker schedules (each server's 1 s tick at
 * its own phase, its boot, and through {@link TimerWheel.clock} every sleep of its reference client: the
 * heartbeat wait, backoff and Retry-After waits, the boot window's spread of the first heartbeat, manifest
 * and bulk checks) goes into slots of `slotMs` (default 10 ms), and a single Node timer is armed for the
 * earliest slot that holds anything.
 *
 * Why: on this virtual machine every wake-up of a sleeping event loop costs 40–230 µs of CPU (measured:
 * one empty 1 s interval timer at a random phase per server, 100 servers = 12 ms of CPU per second), far
 * more than the JavaScript a request needs. With the wheel a process wakes at most 1000 / `slotMs` times a
 * second for its timers however many servers and players it plays, and what falls into one slot runs in
 * one wake-up. The price is up to `slotMs` of extra delay on every sleep (never less than asked: a
 * callback runs at or after its time), which moves requests by at most one slot: invisible next to a 1 s
 * tick, a 15 s heartbeat or a Retry-After in whole seconds. Not part of the service.
 */
import type { Clock } from '@gis/client';

/** Width of a slot, ms. */
export const DEFAULT_SLOT_MS = 10;

/** Callbacks by slot, and the slots in order; one Node timer for the earliest. */
export class TimerWheel {
  /** Callbacks of each slot with anything in it (slot n covers (n-1)·slotMs, n·slotMs]). */
  private readonly slots = new Map<number, (() => void)[]>();
  /** Min-heap of the slot numbers in {@link slots}. */
  private readonly heap: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** The slot the timer is armed for (Infinity when none). */
  private armedFor = Infinity;
  /** True while {@link run} runs callbacks: what they schedule is armed once, at its end. */
  private running = false;
  private readonly onTimer = (): void => this.run();

  /** A {@link Clock} whose sleeps go through this wheel (give it to `GameClient` and `DoorAccess`). */
  readonly clock: Clock = {
    now: () => Date.now(),
    sleep: (ms, signal) => this.sleep(ms, signal),
  };

  /**
   * @param slotMs width of a slot, ms (at least 1).
   * @param onError hears an error thrown by a callback (the other callbacks run regardless); default:
   *   rethrown from a microtask, i.e. an uncaught exception, as a throwing `setTimeout` callback is.
   * @param onLate hears how late the timer fired (ms past the end of its slot, at least 0) and when (epoch
   *   ms): the process's stalls, after which everything that waited runs together.
   */
  constructor(
    readonly slotMs = DEFAULT_SLOT_MS,
    private readonly onError: (err: unknown) => void = (err) =>
      queueMicrotask(() => {
        throw err;
      }),
    private readonly onLate?: (lateMs: number, atMs: number) => void,
  ) {
    if (!(slotMs >= 1)) throw new RangeError('TimerWheel needs slotMs >= 1');
  }

  /** Callbacks waiting. */
  get size(): number {
    let n = 0;
    for (const list of this.slots.values()) n += list.length;
    return n;
  }

  /**
   * Runs `fn` once, at the end of the slot that holds `atMs` (epoch ms): never before `atMs`, at most
   * `slotMs` after it (plus whatever delays the process's timers). A time already past runs in the next
   * wake-up. A callback that throws does not stop the others; its error goes to `onError`.
   */
  at(atMs: number, fn: () => void): void {
    const slot = Math.ceil(atMs / this.slotMs);
    let list = this.slots.get(slot);
    if (!list) {
      list = [];
      this.slots.set(slot, list);
      this.push(slot);
    }
    list.push(fn);
    if (!this.running && slot < this.armedFor) this.arm();
  }

  /**
   * Resolves `ms` milliseconds from now (up to one slot later), or early when `signal` aborts; never
   * rejects: the contract of {@link Clock.sleep}. 0 or less resolves at once.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || !(ms > 0)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      if (!signal) {
        this.at(Date.now() + ms, resolve);
        return;
      }
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', finish);
        resolve();
      };
      signal.addEventListener('abort', finish, { once: true });
      this.at(Date.now() + ms, finish);
    });
  }

  /** Stops the timer and forgets every callback (the process is shutting down). */
  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
    this.slots.clear();
    this.heap.length = 0;
  }

  /** Runs every slot that has ended, then re-arms for the next. */
  private run(): void {
    const now = Date.now();
    this.onLate?.(Math.max(0, now - this.armedFor * this.slotMs), now);
    this.timer = null;
    this.armedFor = Infinity;
    const current = Math.floor(now / this.slotMs);
    this.running = true;
    try {
      while (this.heap.length && this.heap[0]! <= current) {
        const slot = this.pop();
        const list = this.slots.get(slot)!;
        this.slots.delete(slot);
        for (const fn of list) {
          try {
            fn();
          } catch (err) {
            this.onError(err);
          }
        }
      }
    } finally {
      this.running = false;
      this.arm();
    }
  }

  private arm(): void {
    if (!this.heap.length) return;
    const slot = this.heap[0]!;
    if (this.timer && this.armedFor <= slot) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = slot;
    this.timer = setTimeout(this.onTimer, Math.max(0, slot * this.slotMs - Date.now()));
  }

  private push(slot: number): void {
    const h = this.heap;
    let i = h.push(slot) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]! <= slot) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = slot;
  }

  private pop(): number {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const r = l + 1;
        const c = r < h.length && h[r]! < h[l]! ? r : l;
        if (h[c]! >= last) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}
