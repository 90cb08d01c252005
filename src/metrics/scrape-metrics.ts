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
 * | `gis_scrape_errors_total` | counter | source | a source that could not be read during a scrape |
 *
 * A source that fails is skipped for that scrape (its gauges keep their last values) and counted in
 * `gis_scrape_errors_total`, so one unreachable dependency never turns /metrics into a 500.
 */
import { absorbSharedConnectionErrors } from '../store/connection-state.js';
import { Queue } from 'bullmq';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { GlobalKeys } from '../store/keys.js';
import { streamBacklogs, FLUSHED_STREAMS, type StreamName } from '../ops/stream-backlog.js';
import { log } from '../log.js';
import { DEAD_LETTER_SOURCES, DeadLetters } from '../store/dead-letters.js';

/** BullMQ job states reported per queue. */
const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;
/** Games whose streams a scrape reads: those marked active in the last ten minutes (the flushers' own list). */
const ACTIVE_WINDOW_MS = 10 * 60_000;

export interface ScrapeSources {
  db: Db;
  redis: AppRedis;
  redisPrefix: string;
  /** BullMQ queue names of the worker roles (src/jobs/worker-roles.ts ROLES). */
  queueNames: readonly string[];
}

/** Registers the scrape-time metrics on `registry`; returns a function closing the queue handles it opened. */
export function registerScrapeMetrics(registry: Registry, src: ScrapeSources): () => Promise<void> {
  const prefix = new GlobalKeys(src.redisPrefix).bullPrefix();
  const queues = src.queueNames.map((name) => new Queue(name, { connection: src.redis, prefix }));
  for (const [i, queue] of queues.entries()) absorbSharedConnectionErrors(queue, `queue:${src.queueNames[i]}`);
  const errors = new Counter({ name: 'gis_scrape_errors_total', help: 'Metric sources that could not be read during a scrape', labelNames: ['source'] as const, registers: [registry] });
  const guarded = async (source: string, read: () => Promise<void>) => {
    try {
      await read();
    } catch (err) {
      errors.inc({ source });
      log.warn('metrics source unavailable', { source, err: String(err) });
    }
  };

  new Gauge({
    name: 'gis_queue_jobs',
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
      const games = await src.redis.zrangebyscore(new GlobalKeys(src.redisPrefix).activeGames(), String(now - ACTIVE_WINDOW_MS), '+inf');
      const perGame = await streamBacklogs(src.redis, src.redisPrefix, games, now);
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
  for (const [name, help, pick] of streamGauges) {
    new Gauge({
      name,
      help,
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

  new Gauge({
    name: 'gis_commands',
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

  new Counter({
    name: 'gis_events_flushed_total',
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

  const deadLetters = new DeadLetters(src.redis, src.redisPrefix);
  new Counter({
    name: 'gis_dead_letters_total',
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

  return async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
  };
}
