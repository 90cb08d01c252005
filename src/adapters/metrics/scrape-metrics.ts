/**
 * Cross-process figures, read from Redis and Postgres when Prometheus scrapes (never on a request path):
 * the workers run in other processes, and these numbers are the same whichever process is asked.
 *
 * | metric | type | labels | source |
 * | --- | --- | --- | --- |
 * | `gis_queue_jobs` | gauge | queue, state | BullMQ job counts of every worker role's queue |
 * | `gis_stream_backlog_entries` | gauge | stream | unflushed entries summed over recently active games |
 * | `gis_flush_lag_seconds` | gauge | stream | age of the oldest unflushed entry, worst game |
 * | `gis_commands` | gauge | status | Command rows by status (pending … expired; ≈ 1 s behind Redis) |
 * | `gis_events_flushed_total` | counter | — | rows inserted into PlayerEvent (Postgres statistics, cluster-wide) |
 * | `gis_dead_letters_total` | counter | stream | rows Postgres refused that the flushers set aside, every game (src/store/dead-letters.ts) |
 * | `gis_dependency_up` | gauge | dependency | 1 when `redis` answered PING / `postgres` answered `SELECT 1` within {@link PROBE_TIMEOUT_MS} during the scrape, else 0 |
 * | `gis_ingest_warnings_open` | gauge | kind | unresolved ingest health warnings (IngestHealthWarning rows), e.g. `persistent_throttling`: games persistently throttled |
 * | `gis_scrape_errors_total` | counter | source | a source that could not be read during a scrape |
 *
 * A source that fails or does not answer within {@link SOURCE_TIMEOUT_MS} is skipped for that scrape (its
 * gauges keep their last values) and counted in `gis_scrape_errors_total` (rendered from the next scrape
 * on), so one unreachable dependency never turns /metrics into a 500 or a timeout.
 * `gis_dependency_up` is the exception: a failed probe is its answer (0), not a scrape error, so the
 * alert on a Redis or Postgres node down (ops/prometheus/alerts.yml) reads one series per process.
 */
import { absorbSharedConnectionErrors } from '../../store/connection-state.js';
import { Queue } from 'bullmq';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../../store/prisma.js';
import type { AppRedis } from '../../store/redis.js';
import { streamBacklogs, FLUSHED_STREAMS, type StreamName } from '../../runtime/stream-backlog.js';
import { log } from '../../log.js';
import { DEAD_LETTER_SOURCES, DeadLetters } from '../../store/dead-letters.js';
import { THROTTLING_WARNING } from '../../limits/ingest-health.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';

/** BullMQ job states reported per queue. */
const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;
/** Games whose streams a scrape reads: those marked active in the last ten minutes (the flushers' own list). */
const ACTIVE_WINDOW_MS = 10 * 60_000;
/**
 * Longest wait (ms) for one dependency probe of `gis_dependency_up`: a node that does not answer within
 * it counts as down.
 */
export const PROBE_TIMEOUT_MS = 1_000;
/**
 * Longest wait (ms) for any other source of one scrape; past it the source counts as a scrape error and
 * its gauges keep their last values. Without it a scrape during a Redis outage waited for the BullMQ
 * queues to reconnect, Prometheus timed the scrape out, and `gis_dependency_up` never reported the outage.
 * Sources are read concurrently, so a scrape takes at most about this long (Prometheus's default scrape
 * timeout is 10 s).
 */
export const SOURCE_TIMEOUT_MS = 3_000;

/** Thrown into {@link within}'s caller when `ms` passed first. */
class SourceTimeout extends Error {}

/**
 * `work`'s result, or a {@link SourceTimeout} rejection after `ms` (ms). `work` itself is not cancelled
 * (an ioredis or pg call cannot be); its late result or error is dropped.
 */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new SourceTimeout(`no answer within ${ms} ms`)), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves true when `probe` succeeds within {@link PROBE_TIMEOUT_MS}, false otherwise (never rejects). */
function answers(probe: Promise<unknown>): Promise<boolean> {
  return within(PROBE_TIMEOUT_MS, probe).then(() => true, () => false);
}

/** The groups of scrape-time metrics, by the source they read. */
export const SCRAPE_GROUPS = ['queues', 'streams', 'commands', 'events_flushed', 'dead_letters', 'dependencies', 'ingest_warnings'] as const;
export type ScrapeGroup = (typeof SCRAPE_GROUPS)[number];

export interface ScrapeSources {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  /** BullMQ queue names of the worker roles (src/queues/worker-roles.ts ROLES). */
  queueNames: readonly string[];
  /**
   * Which groups to register (default all: the API's console). The worker processes register the stream
   * and dead-letter groups beside their own job counters (src/adapters/metrics/worker-metrics.ts).
   */
  groups?: readonly ScrapeGroup[];
}

/**
 * Registers the scrape-time metrics on `registry`; returns a function closing the queue handles it opened.
 * Every process asked reads the same cross-process figures, so where node:cluster aggregates the
 * registries of N worker processes (prom-client's AggregatorRegistry) these gauges and counters take the
 * maximum of the copies (`aggregator: 'max'`), not their sum.
 */
export function registerScrapeMetrics(registry: Registry, src: ScrapeSources): () => Promise<void> {
  const groups = new Set(src.groups ?? SCRAPE_GROUPS);
  const prefix = src.keySpace.global.bullPrefix();
  const queues = groups.has('queues') ? src.queueNames.map((name) => new Queue(name, { connection: src.redis, prefix })) : [];
  for (const [i, queue] of queues.entries()) absorbSharedConnectionErrors(queue, `queue:${src.queueNames[i]}`);
  const errors = new Counter({ name: 'gis_scrape_errors_total', help: 'Metric sources that could not be read during a scrape', labelNames: ['source'] as const, registers: [registry] });
  const guarded = async (source: string, read: () => Promise<void>) => {
    try {
      await within(SOURCE_TIMEOUT_MS, read());
    } catch (err) {
      errors.inc({ source });
      log.warn('metrics source unavailable', { source, err: String(err) });
    }
  };

  if (groups.has('queues')) new Gauge({
    name: 'gis_queue_jobs',
    aggregator: 'max',
    help: 'Jobs in the worker queues by queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      await guarded('queues', async () => {
        const counts = await Promise.all(queues.map((q) => q.getJobCounts(...JOB_STATES)));
        queues.forEach((q, i) => {
          for (const state of JOB_STATES) this.set({ queue: q.name, state }, counts[i]?.[state] ?? 0);
        });
      });
    },
  });

  // Both stream gauges come from one read per scrape (prom-client collects metrics concurrently).
  type StreamTotals = Record<StreamName, { entries: number; lag: number }>;
  let streamRead: { at: number; result: Promise<StreamTotals> } | null = null;
  const readStreams = () => {
    const now = Date.now();
    if (streamRead && now - streamRead.at < 1000) return streamRead.result;
    const result = (async () => {
      const games = await src.redis.zrangebyscore(src.keySpace.global.activeGames(), String(now - ACTIVE_WINDOW_MS), '+inf');
      const perGame = await streamBacklogs(src.redis, src.keySpace, games, now);
      const totals = {} as StreamTotals;
      for (const stream of Object.keys(FLUSHED_STREAMS) as StreamName[]) {
        totals[stream] = { entries: 0, lag: 0 };
        for (const b of perGame.values()) {
          totals[stream].entries += b[stream].entries;
          totals[stream].lag = Math.max(totals[stream].lag, b[stream].lagSeconds);
        }
      }
      return totals;
    })();
    streamRead = { at: now, result };
    return result;
  };
  const streamGauges: [string, string, (t: StreamTotals[StreamName]) => number][] = [
    ['gis_stream_backlog_entries', 'Stream entries not yet flushed to Postgres, over recently active games', (t) => t.entries],
    ['gis_flush_lag_seconds', 'Age in seconds of the oldest stream entry not yet flushed to Postgres (worst game)', (t) => t.lag],
  ];
  for (const [name, help, pick] of groups.has('streams') ? streamGauges : []) {
    new Gauge({
      name,
      help,
      aggregator: 'max',
      labelNames: ['stream'] as const,
      registers: [registry],
      async collect() {
        await guarded('streams', async () => {
          const totals = await readStreams();
          for (const stream of Object.keys(totals) as StreamName[]) this.set({ stream }, pick(totals[stream]));
        });
      },
    });
  }

  if (groups.has('commands')) new Gauge({
    name: 'gis_commands',
    aggregator: 'max',
    help: 'Commands by recorded status',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      await guarded('commands', async () => {
        const rows = await src.db.command.groupBy({ by: ['status'], _count: { _all: true } });
        this.reset();
        for (const status of ['pending', 'dispatched', 'acked', 'failed', 'expired']) this.set({ status }, 0);
        for (const r of rows) this.set({ status: r.status }, r._count._all);
      });
    },
  });

  if (groups.has('events_flushed')) new Counter({
    name: 'gis_events_flushed_total',
    aggregator: 'max',
    help: 'Rows inserted into PlayerEvent by the flushers (Postgres table statistics; duplicates are not inserted)',
    registers: [registry],
    async collect() {
      await guarded('events_flushed', async () => {
        const [row] = await src.db.$queryRaw<{ n: bigint | null }[]>`SELECT n_tup_ins AS n FROM pg_stat_user_tables WHERE relname = 'PlayerEvent' AND schemaname = current_schema()`;
        this.reset();
        this.inc(Number(row?.n ?? 0));
      });
    },
  });

  const deadLetters = new DeadLetters(src.redis, src.keySpace);
  if (groups.has('dead_letters')) new Counter({
    name: 'gis_dead_letters_total',
    aggregator: 'max',
    help: 'Rows Postgres refused that the flushers set aside in the per-game dead-letter streams, by source stream (README "Failure behaviour")',
    labelNames: ['stream'] as const,
    registers: [registry],
    async collect() {
      await guarded('dead_letters', async () => {
        const totals = await deadLetters.totals();
        this.reset();
        for (const stream of DEAD_LETTER_SOURCES) this.inc({ stream }, totals[stream]);
      });
    },
  });

  if (groups.has('dependencies')) new Gauge({
    name: 'gis_dependency_up',
    aggregator: 'min',
    help: 'Whether a dependency answered a probe during this scrape: redis (PING) or postgres (SELECT 1), 1 up, 0 down',
    labelNames: ['dependency'] as const,
    registers: [registry],
    async collect() {
      const [redis, postgres] = await Promise.all([answers(src.redis.ping()), answers(src.db.$queryRaw`SELECT 1`)]);
      this.set({ dependency: 'redis' }, redis ? 1 : 0);
      this.set({ dependency: 'postgres' }, postgres ? 1 : 0);
    },
  });

  if (groups.has('ingest_warnings')) new Gauge({
    name: 'gis_ingest_warnings_open',
    aggregator: 'max',
    help: 'Unresolved ingest health warnings by kind (persistent_throttling: games throttled in 5 of the last 10 minutes)',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      await guarded('ingest_warnings', async () => {
        const rows = await src.db.ingestHealthWarning.groupBy({ by: ['kind'], where: { resolvedAt: null }, _count: { _all: true } });
        this.reset();
        // The throttling kind is always present, so an alert on it has a series to compare (0) when none is open.
        this.set({ kind: THROTTLING_WARNING }, 0);
        for (const r of rows) this.set({ kind: r.kind }, r._count._all);
      });
    },
  });

  return async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
  };
}
