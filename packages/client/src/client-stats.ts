/**
 * Counters of one reference client, for the simulator, tests and benchmarks. Latencies are real
 * milliseconds per HTTP attempt (a 409 retry contributes two samples), kept in a bounded ring.
 */

/** A point-in-time copy of a client's counters. */
export interface ClientStats {
  /** Heartbeat HTTP attempts, including 409 retries and 413 re-sends. */
  heartbeatsSent: number;
  /** Heartbeats answered 200. */
  heartbeatsOk: number;
  /** Heartbeat attempts by outcome: HTTP status as a string, or `network` / `timeout`. */
  heartbeatStatuses: Record<string, number>;
  /** Latency of heartbeat attempts that got an HTTP response or failed, ms (most recent `latencyWindow`). */
  latencySamplesMs: number[];
  /** Events passed to `track()`. */
  eventsTracked: number;
  /** Events carried by a heartbeat that got its 200 (each counted once). */
  eventsAcked: number;
  /** Events dropped because the local queue overflowed. */
  eventsDropped: number;
  /** Events removed because the service rejected them alone as too large (413 with one event). */
  eventsRejected: number;
  /** Events still waiting for a 200. */
  eventsQueued: number;
  /**
   * Of the queued events, those a heartbeat carried that got no response (timeout, connection lost): the
   * service may have stored them already ("outcome unknown", not "not sent"); the client resends them
   * until a 200, and eventIds make the resend a no-op on the service.
   */
  eventsOutcomeUnknown: number;
  /** Heartbeats that got no HTTP response (timeout or connection error): applied or not, unknown. */
  heartbeatsOutcomeUnknown: number;
  /** Distinct command ids received. */
  commandsReceived: number;
  /** Re-deliveries skipped by the id dedupe. */
  commandsDuplicate: number;
  /** Handlers that reported success (acks queued). */
  commandsExecuted: number;
  /** Acks confirmed delivered (carried by a heartbeat that got its 200). */
  commandsAcked: number;
  /** Failure reports confirmed delivered. */
  commandsFailed: number;
  /** Times a 409 led to a re-signed retry. */
  retries409: number;
  /** Times a 413 led to splitting the events. */
  splits413: number;
}

/** Mutable counters plus the latency ring; {@link snapshot} copies them. */
export class StatsRecorder {
  /** Counters the client increments as things happen (see {@link ClientStats} for each). */
  readonly counters: Omit<ClientStats, 'latencySamplesMs' | 'eventsQueued' | 'eventsOutcomeUnknown' | 'heartbeatStatuses'> = {
    heartbeatsSent: 0,
    heartbeatsOutcomeUnknown: 0,
    heartbeatsOk: 0,
    eventsTracked: 0,
    eventsAcked: 0,
    eventsDropped: 0,
    eventsRejected: 0,
    commandsReceived: 0,
    commandsDuplicate: 0,
    commandsExecuted: 0,
    commandsAcked: 0,
    commandsFailed: 0,
    retries409: 0,
    splits413: 0,
  };
  private readonly statuses: Record<string, number> = {};
  private readonly ring: number[] = [];
  private next = 0;

  /** @param latencyWindow most latency samples kept (oldest overwritten; 0 keeps none). Default 10 000. */
  constructor(private readonly latencyWindow = 10_000) {}

  /** Records one heartbeat attempt with its outcome (`'200'`, `'503'`, `'network'`, ...) and latency in ms. */
  attempt(outcome: string, latencyMs: number): void {
    this.counters.heartbeatsSent++;
    this.statuses[outcome] = (this.statuses[outcome] ?? 0) + 1;
    if (this.latencyWindow <= 0) return;
    if (this.ring.length < this.latencyWindow) this.ring.push(latencyMs);
    else this.ring[this.next] = latencyMs;
    this.next = (this.next + 1) % this.latencyWindow;
  }

  /** A copy of every counter; the queue figures are supplied by the client. */
  snapshot(eventsQueued: number, eventsOutcomeUnknown: number): ClientStats {
    return { ...this.counters, heartbeatStatuses: { ...this.statuses }, latencySamplesMs: [...this.ring], eventsQueued, eventsOutcomeUnknown };
  }
}

/**
 * The `p`-th percentile (0–100) of `samples` by the nearest-rank method; NaN for no samples.
 * Does not modify `samples`.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)]!;
}
