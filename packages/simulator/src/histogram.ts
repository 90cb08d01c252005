/**
 * A mergeable latency histogram for the simulator's processes (issue #15 item 4): log-spaced buckets 2 %
 * apart from 0.01 ms to about 2 minutes, so recording costs one `Math.log` and an array increment, a
 * process ships its histograms to the coordinator as sparse `[bucket, count]` pairs, and percentiles of
 * the merged fleet are exact to 2 % (nearest rank over bucket upper bounds; the maximum is exact).
 * Not part of the service.
 */

const MIN_MS = 0.01;
const RATIO = 1.02;
const LOG_RATIO = Math.log(RATIO);
const BUCKETS = Math.ceil(Math.log(130_000 / MIN_MS) / LOG_RATIO) + 1;

/** A histogram as sent between processes. */
export interface HistogramData {
  /** Sparse `[bucket index, count]` pairs. */
  buckets: [number, number][];
  count: number;
  /** Largest value recorded, ms (-1 when empty). */
  maxMs: number;
}

/** p50/p99/max in ms (null when nothing was recorded) and the number of samples. */
export interface LatencySummary {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  n: number;
}

const bucketOf = (ms: number): number => (ms <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / MIN_MS) / LOG_RATIO)));
const upperOf = (bucket: number): number => MIN_MS * RATIO ** bucket;
const round = (ms: number): number => (ms >= 100 ? Math.round(ms) : Math.round(ms * 100) / 100);

export class Histogram {
  private readonly counts = new Uint32Array(BUCKETS);
  count = 0;
  maxMs = -1;

  /** Records one latency in ms. */
  record(ms: number): void {
    this.counts[bucketOf(ms)]!++;
    this.count++;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  /** Adds another histogram (or its transported form) into this one. */
  add(other: Histogram | HistogramData): this {
    const data = other instanceof Histogram ? other.toJSON() : other;
    for (const [b, c] of data.buckets) this.counts[b]! += c;
    this.count += data.count;
    if (data.maxMs > this.maxMs) this.maxMs = data.maxMs;
    return this;
  }

  /** The `p`-th percentile (0–100) in ms by nearest rank, as the upper bound of its bucket (capped at the max); NaN when empty. */
  percentile(p: number): number {
    if (!this.count) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.counts[b]!;
      if (seen >= rank) return Math.min(upperOf(b), this.maxMs);
    }
    return this.maxMs;
  }

  summary(): LatencySummary {
    if (!this.count) return { p50: null, p90: null, p99: null, max: null, n: 0 };
    return { p50: round(this.percentile(50)), p90: round(this.percentile(90)), p99: round(this.percentile(99)), max: round(this.maxMs), n: this.count };
  }

  toJSON(): HistogramData {
    const buckets: [number, number][] = [];
    for (let b = 0; b < BUCKETS; b++) if (this.counts[b]) buckets.push([b, this.counts[b]!]);
    return { buckets, count: this.count, maxMs: this.maxMs };
  }

  static from(data: HistogramData): Histogram {
    return new Histogram().add(data);
  }
}
