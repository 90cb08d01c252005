/**
 * Worker process entry: `npm run workers`. Runs the roles named by `WORKER_ROLES` (default `all`; split
 * them across processes as load requires), each a BullMQ worker on its own queue fed by a job
 * scheduler. SIGTERM/SIGINT: stop taking jobs, let the current ones finish, close connections.
 * At boot, before any queue is touched, it reads Redis persistence like the API (src/server.ts): one
 * `redis persistence` log line, and exit 1 under REDIS_DURABILITY=required when Redis is below AOF
 * everysec (src/store/redis-persistence.ts).
 *
 * `--processes N` (`npm run workers -- --processes 4`): N such processes, forked by a `node:cluster`
 * primary (src/runtime/process-fork.ts); they share the queues, schedulers and stream consumer groups.
 *
 * Each process serves `/metrics` and `/healthz` on WORKERS_METRICS_HOST:WORKERS_METRICS_PORT
 * (src/adapters/metrics/worker-metrics.ts); with `--processes N` the primary serves one aggregated endpoint there
 * instead and the copies serve none. A port already taken stops the process at start (exit 1).
 */
import { getPriority, hostname, setPriority } from 'node:os';
import { Queue, Worker, type Job } from 'bullmq';
import { loadConfig, ConfigError } from '../src/config.js';
import { log, logContext, setLogLevel } from '../src/log.js';
import { createRedis } from '../src/store/redis.js';
import { createDb } from '../src/store/prisma.js';
import { GameDirectory } from '../src/store/game-directory.js';
import { KeySpace } from '../src/store/keyspace/key-space.js';
import { absorbSharedConnectionErrors, watchConnection } from '../src/store/connection-state.js';
import { isDependencyUnavailable } from '../src/store/dependency-errors.js';
import { DurabilityRefusedError, PersistenceMonitor } from '../src/store/redis-persistence.js';
import { JOB_OPTIONS, ROLES, resolveRoles, type RoleName } from '../src/queues/worker-roles.js';
import type { JobContext } from './jobs/context.js';
import { flushAccessLogJob, flushCommandLogJob, flushEventsJob, flushSessionsJob } from './jobs/flush.job.js';
import { sweepLivenessJob } from './jobs/sweep-liveness.job.js';
import { expireCommandsJob } from './jobs/expire-commands.job.js';
import { publishNudgesJob } from './jobs/publish-nudges.job.js';
import { platformBansJob } from './jobs/platform-bans.job.js';
import { deriveShiftsJob } from './jobs/derive-shifts.job.js';
import { sampleConcurrencyJob } from './jobs/sample-concurrency.job.js';
import { ingestHealthJob } from './jobs/ingest-health.job.js';
import { pruneAccessLogJob } from './jobs/prune-access-log.job.js';
import { processCount, runProcesses } from '../src/runtime/process-fork.js';
import { serveAggregatedWorkerMetrics, serveWorkerMetrics, WorkerMetrics, type MetricsServer } from '../src/adapters/metrics/worker-metrics.js';
import cluster from 'node:cluster';

/** Scheduled roles ignore the job; producer-fed roles read its data (and the lock token to delay it). */
type Processor = (job: Job, token?: string) => Promise<unknown>;

/** How often the job schedulers are upserted again (ms): the longest a lost scheduler iteration stops a role. */
const SCHEDULER_REFRESH_MS = 30_000;

/** How long SIGTERM waits for running jobs (ms) before abandoning them; below the usual 30 s orchestrator kill. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * How long SIGTERM waits (ms), after the grace, for queues and connections to close before exiting anyway.
 * A close can wait on a Redis reply that a busy or failing Redis never sends; nothing is owed by then (see
 * `stop`), so the process must not outlive the orchestrator's kill on it.
 */
const CLOSE_GRACE_MS = 4_000;

const PROCESSORS: Record<RoleName, (ctx: JobContext) => Processor> = {
  'flush-events': flushEventsJob,
  'flush-sessions': flushSessionsJob,
  'flush-command-log': flushCommandLogJob,
  'flush-access-log': flushAccessLogJob,
  'sweep-liveness': sweepLivenessJob,
  'expire-commands': expireCommandsJob,
  'publish-nudges': publishNudgesJob,
  'platform-bans': (ctx) => platformBansJob(ctx),
  'derive-shifts': deriveShiftsJob,
  'sample-concurrency': sampleConcurrencyJob,
  'ingest-health': ingestHealthJob,
  'prune-access-log': pruneAccessLogJob,
};

async function main(): Promise<void> {
  // Signals are taken before anything starts: a SIGTERM while the roles are still starting (a slow Redis,
  // a busy host) must stop the process once they have, not kill it with the default handler. Whatever the
  // state, the process is gone SHUTDOWN_GRACE_MS + CLOSE_GRACE_MS after the first signal.
  let stop: ((signal: string) => Promise<void>) | undefined = undefined;
  let stopRequested: string | undefined;
  const onSignal = (signal: string) => {
    if (stopRequested) return;
    stopRequested = signal;
    setTimeout(() => {
      log.warn('shutdown: queues or connections did not close in time; exiting', { signal, waitedMs: SHUTDOWN_GRACE_MS + CLOSE_GRACE_MS });
      process.exit(0);
    }, SHUTDOWN_GRACE_MS + CLOSE_GRACE_MS).unref();
    if (stop) void stop(signal);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  const config = loadConfig();
  setLogLevel(config.logLevel);
  const roles = resolveRoles(config.workerRoles);
  // Below the API's priority where they share cores: a flush burst must not queue heartbeats behind it.
  // Only ever lowered (raising needs privileges): a process started with more niceness keeps it.
  if (getPriority() < config.workerNice) setPriority(config.workerNice);
  const redis = createRedis(config.redisUrl, { name: 'worker' });
  const bullConnection = createRedis(config.redisUrl, { name: 'worker-bull', forWorker: true });
  const metrics = new WorkerMetrics();
  const persistence = new PersistenceMonitor(redis, {
    processName: 'workers',
    redisUrl: config.redisUrl,
    durability: config.redisDurability,
    recheckSeconds: config.redisPersistenceRecheckSeconds,
    onChange: (report) => metrics.setRedisPersistence(report.mode),
  });
  await persistence.start();
  const db = createDb(config.databaseUrl, config.dbPoolSize);
  const keySpace = new KeySpace(config.redisPrefix, config);
  metrics.watchStreams({ db, redis, keySpace });
  // A copy of a `--processes N` group is scraped through the primary's aggregated endpoint.
  let metricsServer: MetricsServer | null = null;
  if (!cluster.isWorker) {
    metricsServer = await serveWorkerMetrics(metrics, config.workersMetricsHost, config.workersMetricsPort, () => ({ pid: process.pid, roles }));
    log.info('worker metrics listening', { host: config.workersMetricsHost, port: metricsServer.port });
  }
  const ctx: JobContext = { config, redis, db, keySpace, games: new GameDirectory(redis, db, keySpace), consumerName: `${hostname()}-${process.pid}`, redisDurable: () => persistence.current.durable };
  const prefix = keySpace.global.bullPrefix();

  const queues: Queue[] = [];
  const workers: Worker[] = [];
  const schedules: (() => Promise<unknown>)[] = [];
  // BullMQ adds a scheduler's next job when the current one starts. A Redis that comes back from a crash
  // may have lost its last writes (a host crash under appendfsync everysec: about the last second; docs/
  // architecture.md), and a Cluster master that fails over may lose what its replica had not received;
  // when those held a next iteration, that role would never run again until the workers restart:
  // accepted events would sit in Redis unflushed. So the schedulers registered so far are upserted again
  // on every reconnect of a single Redis and, since a Cluster client does not reconnect as a whole when
  // one node fails over, every SCHEDULER_REFRESH_MS as well (idempotent: the same ids, as at boot).
  const upsertAgain = (reason: string) => {
    if (!schedules.length) return;
    void Promise.all(schedules.map((schedule) => schedule())).then(
      () => log.log(reason === 'reconnect' ? 'info' : 'debug', 'job schedulers upserted again', { reason, schedulers: schedules.length }),
      (err: unknown) => log.warn('job schedulers not upserted again; next try at the next reconnect or refresh', { reason, err: String(err) }),
    );
  };
  bullConnection.on('ready', () => upsertAgain('reconnect'));
  const refresh = setInterval(() => upsertAgain('refresh'), SCHEDULER_REFRESH_MS);
  refresh.unref();
  for (const role of roles) {
    const spec = ROLES[role];
    const queue = new Queue(spec.queue, { connection: bullConnection, prefix });
    absorbSharedConnectionErrors(queue, `queue:${spec.queue}`);
    if ('schedulerId' in spec) {
      const schedule = () => queue.upsertJobScheduler(spec.schedulerId, { every: spec.everyMs }, { name: role, opts: JOB_OPTIONS });
      schedules.push(schedule);
      // A Cluster master failing over while the workers start must not stop them: the refresh above
      // upserts the scheduler again (measured by scripts/failover-probe.ts, where it killed the process).
      await schedule().catch((err: unknown) => {
        if (!isDependencyUnavailable(err)) throw err;
        log.warn('job scheduler not upserted at start; the next refresh retries', { role, err: String(err).split('\n')[0] });
      });
    }
    const run = PROCESSORS[role](ctx);
    const worker = new Worker(spec.queue, (job, token) => logContext.run({ jobId: `${role}:${job.id}` }, () => run(job, token)), {
      connection: bullConnection,
      prefix,
      concurrency: 'concurrency' in spec ? spec.concurrency : 1,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 100 },
    });
    // The worker's own blocking connection is a duplicate of bullConnection; its errors surface here.
    watchConnection(worker, { name: `worker:${spec.queue}`, readySource: bullConnection });
    // A dependency outage fails every run of a scheduled job (flush-events: 4 a second); log the outage
    // once per role when it starts and once when a job completes again, real failures every time.
    let dependencyDown = false;
    worker.on('failed', (job, err) => {
      if (!isDependencyUnavailable(err)) return log.error('job failed', { role, jobId: job?.id, err: err.message });
      if (!dependencyDown) log.warn('jobs failing: dependency unavailable', { role, err: err.message.split('\n').filter(Boolean).pop() });
      dependencyDown = true;
    });
    worker.on('failed', () => metrics.jobFinished(spec.queue, false));
    worker.on('completed', () => {
      metrics.jobFinished(spec.queue, true);
      if (dependencyDown) log.info('jobs completing again', { role });
      dependencyDown = false;
    });
    queues.push(queue);
    workers.push(worker);
  }
  log.info('workers up', { roles, pid: process.pid });

  stop = async (signal: string) => {
    log.info('workers shutting down', { signal });
    clearInterval(refresh);
    // Running jobs get SHUTDOWN_GRACE_MS to finish; a flush stuck behind a slow dependency is then
    // abandoned: every job is idempotent and acknowledges its stream entries only after its commit, so
    // the next worker re-reads what this one left (nothing answered 200 is lost).
    const graceful = Promise.allSettled(workers.map((w) => w.close()));
    const graceElapsed = await Promise.race([graceful.then(() => false), new Promise<boolean>((r) => setTimeout(r, SHUTDOWN_GRACE_MS, true).unref())]);
    if (graceElapsed) {
      log.warn('shutdown grace elapsed: abandoning running jobs to the next worker', { graceMs: SHUTDOWN_GRACE_MS });
      await Promise.allSettled(workers.map((w) => w.close(true)));
    }
    await Promise.allSettled([...queues.map((q) => q.close()), metrics.close(), metricsServer?.close()]);
    persistence.stop();
    await Promise.allSettled([redis.quit(), bullConnection.quit(), db.$disconnect()]);
    process.exit(0);
  };
  if (stopRequested) void stop(stopRequested);
}

function entry(): Promise<void> {
  let n: number;
  try {
    n = processCount(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\nusage: npm run workers -- [--processes N]`);
    process.exit(2);
  }
  return runProcesses(n, 'workers', main, async (alive) => {
    const config = loadConfig();
    const server = await serveAggregatedWorkerMetrics(config.workersMetricsHost, config.workersMetricsPort, () => ({ pid: process.pid, processes: alive() }));
    log.info('worker metrics listening (aggregated over the processes)', { host: config.workersMetricsHost, port: server.port });
  });
}

entry().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else if (err instanceof DurabilityRefusedError) log.error(err.message, { process: 'workers', mode: err.report.mode });
  else log.error('workers failed to start', { err: String(err) });
  process.exit(1);
});
