/**
 * scripts/bench/tail-ratio.ts — tail latency measured against the machine (issue #20), for the bench
 * scripts of the game endpoints: this machine's CPU speed drifts up to 2× for tens of milliseconds
 * (`npm run bench:cpu-drift`), so an absolute p99 at 80 % of a maximum measures the machine as much as the
 * service. Each figure is paired with the same figure for the ceiling (scripts/bench/baseline-server.ts:
 * raw body + HMAC + JSON.parse) at the same fraction of *its* maximum, in the same run, in alternating
 * rounds: `p99 ratio = service p99 / ceiling p99`.
 *
 * Rates are requests/s, durations s, latencies ms.
 */
import { autocannon } from '../support/autocannon.js';
import { pacedLoad, type PacedRequest } from '../support/paced-load.js';

/** One side of the comparison: where it listens and how to build its next (freshly signed) request. */
export interface RatioTarget {
  port: number;
  next: () => PacedRequest;
}

export interface RatioOptions {
  service: RatioTarget;
  ceiling: RatioTarget;
  /** Fractions of each maximum, e.g. [0.5, 0.8]. */
  fractions: readonly number[];
  /** Alternating paced rounds per fraction (ceiling, then service). */
  rounds: number;
  /** Seconds of each max-rate run and each paced round. */
  duration: number;
  connections: number;
  log: (line: string) => void;
}

/** The outcome at one fraction. */
export interface RatioAtFraction {
  fraction: number;
  /** Median over the rounds of each round's service p99 / ceiling p99. */
  p99Ratio: number;
  serviceP99Ms: number;
  ceilingP99Ms: number;
  /** Each round's ratio, in order. */
  rounds: number[];
}

export interface RatioResult {
  serviceMax: number;
  ceilingMax: number;
  at: RatioAtFraction[];
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;
const p99 = (sorted: readonly number[]) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN;

/** Requests/s `target` answers as fast as it can (autocannon, `duration` s). */
async function maxRate(target: RatioTarget, connections: number, duration: number): Promise<number> {
  const r = await autocannon({
    url: `http://127.0.0.1:${target.port}`,
    connections,
    duration,
    timeout: 10,
    requests: [{ setupRequest: (req) => {
      const n = target.next();
      return { ...req, method: n.method, path: n.path, headers: n.headers, body: n.body };
    } }],
  });
  return r.requests.average;
}

/** p99 (ms) of `target` under an open-loop paced load at `rate` requests/s; also the non-2xx count. */
async function pacedP99(target: RatioTarget, rate: number, connections: number, duration: number): Promise<{ p99: number; bad: number }> {
  const r = await pacedLoad({ port: target.port, rate, duration, connections, next: target.next });
  const bad = r.errors + Object.entries(r.statuses).filter(([s]) => !s.startsWith('2')).reduce((n, [, c]) => n + c, 0);
  return { p99: p99(r.latenciesMs), bad };
}

/**
 * Measures both maxima (ceiling first, then service), then for each fraction `rounds` alternating paced
 * rounds (ceiling, service) at that fraction of each one's own maximum, and returns the p99 ratios.
 * Logs one line per run.
 */
export async function measureTailRatios(o: RatioOptions): Promise<RatioResult> {
  const ceilingMax = await maxRate(o.ceiling, o.connections, o.duration);
  const serviceMax = await maxRate(o.service, o.connections, o.duration);
  o.log(`max: ceiling ${Math.round(ceilingMax)}/s, service ${Math.round(serviceMax)}/s`);
  const at: RatioAtFraction[] = [];
  for (const fraction of o.fractions) {
    const ratios: number[] = [];
    const s99: number[] = [];
    const c99: number[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const c = await pacedP99(o.ceiling, Math.max(1, Math.round(fraction * ceilingMax)), o.connections, o.duration);
      const s = await pacedP99(o.service, Math.max(1, Math.round(fraction * serviceMax)), o.connections, o.duration);
      ratios.push(s.p99 / c.p99);
      s99.push(s.p99);
      c99.push(c.p99);
      o.log(`${Math.round(fraction * 100)} % round ${r + 1}: service p99 ${s.p99.toFixed(2)} ms / ceiling p99 ${c.p99.toFixed(2)} ms = ${(s.p99 / c.p99).toFixed(2)}${s.bad || c.bad ? ` (non-2xx or errors: service ${s.bad}, ceiling ${c.bad})` : ''}`);
    }
    at.push({ fraction, p99Ratio: median(ratios), serviceP99Ms: median(s99), ceilingP99Ms: median(c99), rounds: ratios });
  }
  return { serviceMax, ceilingMax, at };
}
