/**
 * Local queue of player events waiting for a 200 (spec: POST heartbeat, "the client keeps events in its
 * local queue until a 200 is received; it drops them on success, not on send"). Events are taken from the
 * front for a heartbeat with {@link EventQueue.peek} and removed with {@link EventQueue.confirm} only when
 * that heartbeat got its 200; anything else leaves them queued, unchanged, eventIds included (Events rule 2).
 *
 * An event is queued as its JSON text ({@link QueuedEvent}), made once by `track()`: the bytes every
 * heartbeat carrying it sends. One string per event instead of the entry, its payload and their strings:
 * 203 B a queued event instead of 436, for a queue that holds up to a heartbeat interval of events, and
 * up to `maxSize` through an outage (docs/benchmarks.md "The simulator's stalls were its own garbage
 * collector").
 */
import type { EventEntry } from './client-types.js';

/** A queued event: the JSON text of its {@link EventEntry}. */
export type QueuedEvent = string;

/** The entry a queued event's JSON holds. */
export function entryOf(event: QueuedEvent): EventEntry {
  return JSON.parse(event) as EventEntry;
}

/** Events in the order they were tracked, bounded by `maxSize`; see the module comment. */
export class EventQueue {
  private items: QueuedEvent[] = [];

  /**
   * @param maxSize most events kept; beyond it the oldest are dropped (counted by the caller) so a long
   *   outage cannot exhaust memory. Default 100 000.
   */
  constructor(private readonly maxSize = 100_000) {}

  /** Events currently queued. */
  get size(): number {
    return this.items.length;
  }

  /** Appends `event`; returns how many of the oldest events were dropped to stay within `maxSize` (0 normally). */
  push(event: QueuedEvent): number {
    this.items.push(event);
    const over = this.items.length - this.maxSize;
    if (over > 0) this.items.splice(0, over);
    return Math.max(0, over);
  }

  /** The oldest `n` events, in order, without removing them (a copy of the array). */
  peek(n: number): QueuedEvent[] {
    return this.items.slice(0, Math.max(0, n));
  }

  /**
   * Removes the events that were carried by a heartbeat that got its 200 (each event's JSON holds its
   * unique eventId, so equal text is the same event); returns how many were removed.
   */
  confirm(sent: readonly QueuedEvent[]): number {
    if (!sent.length) return 0;
    const done = new Set(sent);
    const before = this.items.length;
    this.items = this.items.filter((e) => !done.has(e));
    return before - this.items.length;
  }

  /** How many queued events satisfy `pred`. */
  count(pred: (event: QueuedEvent) => boolean): number {
    let n = 0;
    for (const e of this.items) if (pred(e)) n++;
    return n;
  }

  /** Removes one event (an event the service can never accept); true when it was queued. */
  remove(event: QueuedEvent): boolean {
    const i = this.items.indexOf(event);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }
}
