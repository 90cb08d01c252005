/**
 * The worker processes' own `/metrics` and `/healthz` (issue #29 "Observable workers"), served on
 * `WORKERS_METRICS_HOST:WORKERS_METRICS_PORT` (default 127.0.0.1:3002) by workers/index.ts:
 *
 * | metric | type | labels | meaning |
 * | --- | --- | --- | --- |
 * | `gis_worker_jobs_processed_total` | counter | queue | jobs this process completed without error |
 * | `gis_worker_jobs_failed_total` | counter | queue | jobs this process ran that failed (dependency outages included) |
 * | `gis_redis_persistence` | gauge | mode | 1 for the persistence mode this process last read, 0 for the others |
 * | `gis_flush_lag_seconds`, `gis_stream_backlog_entries`, `gis_dead_letters_total`, `gis_scrape_errors_total` | | stream / source | read from Redis at scrape time, as on the API's console (src/adapters/metrics/scrape-metrics.ts) |
 *
 * plus prom-client's process defaults. With `--processes N` the node:cluster primary serves one endpoint
 * for all N (prom-client's AggregatorRegistry asks each copy over IPC and sums the job counters; the
 * cross-process gauges take the maximum): {@link serveAggregatedWorkerMetrics}. `/healthz` answers 200
 * `{status:"ok"}` while the process (the primary: at least one copy) is alive: a liveness probe, not a
 * check of Redis or Postgres, whose state the metrics show.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { PERSISTENCE_MODES, type PersistenceMode } from '../../store/redis-persistence.js';
import { registerScrapeMetrics, type ScrapeSources } from './scrape-metrics.js';

/** The metrics of one worker process. */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly processed = new Counter({ name: 'gis_worker_jobs_processed_total', help: 'Jobs completed without error by this worker process, by queue', labelNames: ['queue'] as const, registers: [this.registry] });
  private readonly failed = new Counter({ name: 'gis_worker_jobs_failed_total', help: 'Jobs that failed in this worker process (dependency outages included), by queue', labelNames: ['queue'] as const, registers: [this.registry] });
  private readonly persistence = new Gauge({ name: 'gis_redis_persistence', help: 'Redis persistence mode last read by this process: 1 for the current mode (aof-always, aof-everysec, aof-no, rdb, none, unknown), 0 for the others', labelNames: ['mode'] as const, aggregator: 'max', registers: [this.registry] });
  private closeScrape: (() => Promise<void>) | null = null;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // The copies of a `--processes N` group answer the primary's aggregation from this registry; prom-client
    // only starts answering the primary's IPC requests once an AggregatorRegistry exists in the process.
    AggregatorRegistry.setRegistries([this.registry]);
    if (cluster.isWorker) new AggregatorRegistry();
  }

  /** Adds the stream backlog, flush lag and dead-letter figures, read from Redis at scrape time. */
  watchStreams(src: Omit<ScrapeSources, 'groups' | 'queueNames'>): void {
    this.closeScrape = registerScrapeMetrics(this.registry, { ...src, queueNames: [], groups: ['streams', 'dead_letters'] });
  }

  /** Counts a finished job of `queue`. */
  jobFinished(queue: string, ok: boolean): void {
    (ok ? this.processed : this.failed).inc({ queue });
  }

  /** Records the Redis persistence mode just read. */
  setRedisPersistence(mode: PersistenceMode): void {
    for (const m of PERSISTENCE_MODES) this.persistence.set({ mode: m }, m === mode ? 1 : 0);
  }

  /** Releases what {@link watchStreams} opened. */
  async close(): Promise<void> {
    await this.closeScrape?.();
  }
}

/** A listening metrics server: its port (the one asked for, or the one chosen for 0) and a close function. */
export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (text exposition of `render()`) and `GET /healthz` on `host:port` (0: a free port);
 * anything else is 404. Resolves once listening.
 * @throws the listen error (EADDRINUSE: another process holds the port).
 */
export async function serveMetrics(host: string, port: number, render: () => Promise<{ contentType: string; body: string }>, health: () => object): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') {
      render().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
          res.end(body);
        },
        (err: unknown) => {
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end(`metrics unavailable: ${String(err)}\n`);
        },
      );
      return;
    }
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: 'ok', ...health(), serverTime: new Date().toISOString() }));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'only /metrics and /healthz' } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** The endpoint of one worker process. */
export function serveWorkerMetrics(metrics: WorkerMetrics, host: string, port: number, health: () => object): Promise<MetricsServer> {
  return serveMetrics(host, port, async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() }), health);
}

/**
 * The one endpoint of a `--processes N` group, on the node:cluster primary: every scrape asks each copy
 * for its registry over IPC (5 s timeout, prom-client's) and answers their aggregate.
 */
export function serveAggregatedWorkerMetrics(host: string, port: number, health: () => object): Promise<MetricsServer> {
  const aggregator = new AggregatorRegistry();
  return serveMetrics(host, port, async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }), health);
}
