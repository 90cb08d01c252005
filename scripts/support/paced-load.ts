/**
 * An open-loop load at a fixed rate with evenly spaced arrivals, for the latency runs of the benchmark
 * scripts. autocannon's fixed-rate mode gives each connection a quota per 1 s window and sends it back
 * to back, so "200/s" arrives as one burst of 200 a second and the burst's queue, not the server, sets
 * p50/p99. Here request i is due at start + i / rate. Its latency is counted from when it is written, or
 * from its due time when it had to wait for a free connection (a server that falls behind is charged
 * the wait: no coordinated omission; the load's own timer slop of up to ~1 ms is not charged to it).
 *
 * HTTP/1.1 keep-alive over `connections` raw sockets, one request in flight on each: node:http's client
 * cost ~300 µs of CPU per request here (three times autocannon's), enough to overload the 2-core machine
 * it measures. Responses must carry Content-Length (every endpoint of this service does). Latencies are
 * in ms, the rate in requests/s, the duration in s.
 */
import net from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection of this process. The benchmark processes accumulate hundreds of MB of
 * garbage (seeding, autocannon runs) before a latency run; a major GC of that heap in the middle of the
 * run stalled the generator for up to ~120 ms, which the run then charged to the server.
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** One request to send; `context` is handed back to `onResponse`. */
export interface PacedRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  context?: unknown;
}

export interface PacedOptions {
  port: number;
  /** Requests per second. */
  rate: number;
  /** Seconds. */
  duration: number;
  /** Sockets kept open (requests beyond them wait, and their wait counts as latency). */
  connections: number;
  /** Builds the next request, called when it is sent (so timestamps and signatures are fresh). */
  next: () => PacedRequest;
  onResponse?: (status: number, body: string, context: unknown) => void;
  /** Polled between sends: true stops the run early. */
  stopped?: () => boolean;
}

export interface PacedResult {
  /** Span of the run, s: the duration, or longer when the last answers trailed behind it. */
  seconds: number;
  statuses: Record<string, number>;
  /** Requests that got no response (socket error or {@link TIMEOUT_MS} without an answer). */
  errors: number;
  /** Every response's latency, ms, sorted ascending (from its write, or its due time if it queued). */
  latenciesMs: number[];
  /**
   * The load generator's longest event-loop delay during the run, ms: time it could not send or read
   * because its process was busy (its GC, other work in it) or not scheduled. It is counted in the
   * latencies above, so a large value means they overstate the server's.
   */
  loopDelayMaxMs: number;
}

const TIMEOUT_MS = 10_000;
const HEADER_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection with at most one request in flight. */
class Connection {
  private readonly socket: net.Socket;
  private pending: Buffer = Buffer.alloc(0);
  private current: { done: (status: number, body: string) => void } | null = null;
  broken = false;

  constructor(port: number, private readonly onIdle: (c: Connection) => void, private readonly onFail: () => void) {
    this.socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
    this.socket.setTimeout(TIMEOUT_MS, () => this.socket.destroy(new Error('timeout')));
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', () => this.fail());
    this.socket.on('close', () => this.fail());
  }

  /** Writes `req`; `from` is the time its latency counts from (performance.now() ms). */
  send(req: PacedRequest, from: number, done: (status: number, body: string, from: number, context: unknown) => void): void {
    const body = req.body ?? '';
    let head = `${req.method} ${req.path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
    for (const [k, v] of Object.entries(req.headers)) head += `${k}: ${v}\r\n`;
    this.current = { done: (status, text) => done(status, text, from, req.context) };
    this.socket.write(`${head}\r\n${body}`);
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const end = this.pending.indexOf(HEADER_END);
    if (end === -1 || !this.current) return;
    const head = this.pending.subarray(0, end).toString('latin1');
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      this.socket.destroy(new Error('response without Content-Length'));
      return;
    }
    const total = end + HEADER_END.length + Number(length[1]);
    if (this.pending.length < total) return;
    const body = this.pending.subarray(end + HEADER_END.length, total).toString('utf8');
    this.pending = this.pending.subarray(total);
    const finished = this.current;
    this.current = null;
    finished.done(Number(head.slice(9, 12)), body);
    this.onIdle(this);
  }

  private fail(): void {
    if (this.broken) return;
    this.broken = true;
    if (this.current) this.onFail();
    this.current = null;
  }
}

/** Runs the load; resolves when every request sent has been answered or has failed. */
export async function pacedLoad(opts: PacedOptions): Promise<PacedResult> {
  const statuses: Record<string, number> = {};
  const latenciesMs: number[] = [];
  let errors = 0;
  let outstanding = 0;
  const waiting: number[] = []; // due times of requests no connection has taken yet
  const idle: Connection[] = [];
  let settle: (() => void) | null = null;

  const finished = (status: number, body: string, from: number, context: unknown) => {
    latenciesMs.push(performance.now() - from);
    statuses[status] = (statuses[status] ?? 0) + 1;
    opts.onResponse?.(status, body, context);
  };
  const onIdle = (c: Connection) => {
    outstanding--;
    const due = waiting.shift();
    if (due !== undefined) {
      outstanding++;
      c.send(opts.next(), due, finished);
    } else idle.push(c);
    if (!outstanding && !waiting.length) settle?.();
  };
  const onFail = () => {
    errors++;
    outstanding--;
    // Requests waiting for a connection when every connection broke can never be sent.
    if (connections.every((c) => c.broken)) errors += waiting.splice(0).length;
    if (!outstanding && !waiting.length) settle?.();
  };
  const connections: Connection[] = [];
  for (let i = 0; i < opts.connections; i++) connections.push(new Connection(opts.port, onIdle, onFail));
  idle.push(...connections);

  collectGarbage();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const intervalMs = 1000 / opts.rate;
  const total = Math.round(opts.rate * opts.duration);
  const start = performance.now();
  let sent = 0;
  while (sent < total && !opts.stopped?.()) {
    const now = performance.now();
    for (; sent < total && start + sent * intervalMs <= now; sent++) {
      const due = start + sent * intervalMs;
      let c = idle.pop();
      while (c?.broken) c = idle.pop();
      if (c) {
        outstanding++;
        c.send(opts.next(), performance.now(), finished);
      } else if (connections.every((x) => x.broken)) errors++;
      else waiting.push(due);
    }
    // Timers tick in whole ms: above 1,000/s each tick sends what fell due meanwhile (spinning on
    // setImmediate instead would burn a core the measured server needs).
    const wait = start + sent * intervalMs - performance.now();
    await new Promise<void>((r) => setTimeout(r, Math.max(1, Math.floor(wait))));
  }
  if (outstanding || waiting.length) await new Promise<void>((r) => (settle = r));
  loopDelay.disable();
  const loopDelayMaxMs = loopDelay.max / 1e6;
  const seconds = Math.max(opts.duration, (performance.now() - start) / 1000);
  for (const c of connections) c.close();
  latenciesMs.sort((a, b) => a - b);
  return { seconds, statuses, errors, latenciesMs, loopDelayMaxMs };
}
