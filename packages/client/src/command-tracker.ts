/**
 * Command bookkeeping of the reference client (spec: Command lifecycle, client rules): the service re-sends
 * every dispatched-but-unacked command on every heartbeat until it is acked, so the client
 *
 * - remembers handled ids and skips re-deliveries: an id is remembered while its handler runs, while its
 *   ack or failure waits for a 200, and for a retention period after that (at least one heartbeat
 *   interval; the client uses max(10 min, 3 intervals));
 * - queues acks (effect done) and failures (`{id, reason}`) and keeps them until a heartbeat carrying them
 *   got its 200, like events. Acks are idempotent on the service, so re-sending is harmless.
 */
import type { FailureReport } from './client-types.js';

/** Acks and failures carried by one heartbeat. */
export interface CommandResults {
  acks: string[];
  failures: FailureReport[];
}

/** Longest failure reason the service accepts (characters). */
const MAX_REASON = 500;

/**
 * Dedupe and result bookkeeping of commands for one game server (see the module comment): claim an id
 * before running its handler, complete it with the outcome, take `outgoing` results into a heartbeat and
 * `confirm` them after its 200.
 */
export class CommandTracker {
  /** id → epoch ms until which it is remembered; Infinity while handling or while its result is unsent. */
  private readonly handled = new Map<string, number>();
  private acks: string[] = [];
  private failures: FailureReport[] = [];

  /** Ids remembered right now. */
  get rememberedCount(): number {
    return this.handled.size;
  }

  /** Acks plus failures waiting for a 200. */
  get pendingResults(): number {
    return this.acks.length + this.failures.length;
  }

  /**
   * Claims `id` for execution: true when it is new (the caller runs the handler), false for a re-delivery
   * of a command that is running, waiting for its ack to go out, or handled within the retention period.
   */
  claim(id: string): boolean {
    if (this.handled.has(id)) return false;
    this.handled.set(id, Number.POSITIVE_INFINITY);
    return true;
  }

  /** Records the outcome of a claimed command: queued as an ack when `ok`, else as a failure. */
  complete(id: string, ok: boolean, reason = ''): void {
    if (ok) this.acks.push(id);
    else this.failures.push({ id, reason: (reason || 'failed').slice(0, MAX_REASON) });
  }

  /**
   * Ends a claimed command without a result (it expired before it could run; the service marks it expired
   * itself): the id stays remembered until `untilMs`, so re-deliveries are still skipped.
   */
  drop(id: string, untilMs: number): void {
    if (this.handled.has(id)) this.handled.set(id, untilMs);
  }

  /** The oldest `max` acks and `max` failures, without removing them. */
  outgoing(max: number): CommandResults {
    return { acks: this.acks.slice(0, max), failures: this.failures.slice(0, max) };
  }

  /**
   * Removes results carried by a heartbeat that got its 200 and starts their retention clock: each id is
   * remembered until `nowMs + retentionMs`. Returns how many acks and failures were confirmed.
   */
  confirm(sent: CommandResults, nowMs: number, retentionMs: number): { acked: number; failed: number } {
    const ackIds = new Set(sent.acks);
    const failIds = new Set(sent.failures.map((f) => f.id));
    const before = { acks: this.acks.length, failures: this.failures.length };
    this.acks = this.acks.filter((id) => !ackIds.has(id));
    this.failures = this.failures.filter((f) => !failIds.has(f.id));
    for (const id of [...ackIds, ...failIds]) {
      if (this.handled.has(id)) this.handled.set(id, nowMs + retentionMs);
    }
    return { acked: before.acks - this.acks.length, failed: before.failures - this.failures.length };
  }

  /** Forgets ids whose retention ended before `nowMs`. */
  prune(nowMs: number): void {
    for (const [id, until] of this.handled) {
      if (until < nowMs) this.handled.delete(id);
    }
  }
}
