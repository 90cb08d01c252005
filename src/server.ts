/**
 * API process entry: `npm start`. Loads config, connects Redis and Postgres once, subscribes to key
 * invalidations, serves the game listener (`PORT`) and the moderator console listener (`CONSOLE_PORT`,
 * src/adapters/console/: page, /console/api, /metrics of this process, /openapi.json), and shuts down gracefully on
 * SIGTERM/SIGINT (stop accepting on both, finish in-flight requests, close connections).
 *
 * Before listening it reads Redis persistence (src/store/redis-persistence.ts): one `redis persistence`
 * log line; with REDIS_DURABILITY=required and a Redis below AOF everysec it logs why, naming the setting
 * to change, and exits 1 without listening. The reading is re-read while it runs and shown by /readyz
 * and `gis_redis_persistence` on /metrics.
 *
 * `--processes N` (`npm start -- --processes 4`): N such processes behind one pair of ports, forked by a
 * `node:cluster` primary (src/runtime/process-fork.ts).
 */
import { loadConfig, ConfigError } from './config.js';
import { log, setLogLevel } from './log.js';
import { createRedis } from './store/redis.js';
import { KeySpace } from './store/keyspace/key-space.js';
import { createReplicaAck } from './store/replica-ack.js';
import { createDb } from './store/prisma.js';
import { subscribeInvalidations } from './auth/invalidation.js';
import { KeyVerifier } from './auth/key-verifier.js';
import { VerifiedDigests } from './auth/verified-digests.js';
import { KeyRecords, startKeyRecordReconcile } from './auth/key-records.js';
import { admissionFor, createApp } from './app.js';
import { ApiMetrics } from './adapters/metrics/api-metrics.js';
import { startConsole } from './adapters/console/console-server.js';
import { DurabilityRefusedError, PersistenceMonitor } from './store/redis-persistence.js';
import { processCount, runProcesses } from './runtime/process-fork.js';

async function main(): Promise<void> {
  const config = loadConfig();
  setLogLevel(config.logLevel);
  // Every Redis key this process touches comes from this one object (src/store/keyspace/key-space.ts).
  const keySpace = new KeySpace(config.redisPrefix, config);
  const redis = createRedis(config.redisUrl, { name: 'api' });
  const subscriber = createRedis(config.redisUrl, { name: 'api-sub', forWorker: true });
  // REDIS_WAIT_REPLICAS ≥ 1: heartbeats write and WAIT on a client of their own (src/store/replica-ack.ts).
  const replicaAck = createReplicaAck(config.redisUrl, config.redisWait);
  const db = createDb(config.databaseUrl, config.dbPoolSize);
  const metrics = new ApiMetrics();
  const persistence = new PersistenceMonitor(redis, {
    processName: 'api',
    redisUrl: config.redisUrl,
    durability: config.redisDurability,
    recheckSeconds: config.redisPersistenceRecheckSeconds,
    onChange: (report) => metrics.setRedisPersistence(report.mode),
  });
  await persistence.start();
  const keyRecords = new KeyRecords(redis, keySpace);
  const verifier = new KeyVerifier(db, new VerifiedDigests(redis, keySpace), metrics, keyRecords);
  await subscribeInvalidations(subscriber, verifier, keySpace);
  // In the background: a boot during a Postgres outage serves from the records an earlier boot wrote.
  const stopReconcile = startKeyRecordReconcile(db, redis, keySpace);

  // Admission control of the game listener (src/limits/admission.ts): its ceilings come from config.
  const admission = admissionFor({ config, keySpace, redis, db, verifier, metrics, replicaAck });
  const app = createApp({ config, keySpace, redis, db, verifier, metrics, admission, persistence, replicaAck, keyRecords });
  const server = app.listen({ port: config.port, host: config.host, backlog: config.listenBacklog }, () => {
    log.info('game listener up', { port: config.port, host: config.host, backlog: config.listenBacklog, pid: process.pid });
  });
  server.keepAliveTimeout = 65_000;
  const consoleListener = await startConsole({ config, keySpace, redis, db, metrics });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    // Stop accepting, let in-flight requests finish (their Lua scripts are atomic either way), then
    // cut whatever keep-alive connections remain after a bounded wait.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const consoleClosed = consoleListener.close();
    await Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]);
    server.closeAllConnections();
    admission.close();
    stopReconcile();
    await consoleClosed;
    // Fire-and-forget writes started by the last responses (decision cache, active marks) get a moment.
    await new Promise((r) => setTimeout(r, 250));
    persistence.stop();
    await Promise.allSettled([redis.quit(), subscriber.quit(), replicaAck?.client.quit(), db.$disconnect()]);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function entry(): Promise<void> {
  let n: number;
  try {
    n = processCount(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\nusage: npm start -- [--processes N]`);
    process.exit(2);
  }
  return runProcesses(n, 'api', main);
}

entry().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else if (err instanceof DurabilityRefusedError) {
    log.error(err.message, { process: 'api', mode: err.report.mode });
  } else {
    log.error('API failed to start', { err: String(err) });
  }
  process.exit(1);
});
