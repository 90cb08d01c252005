/**
 * scripts/services/index.ts (`npm run services:up|down|status`) — make Redis and PostgreSQL reachable before anything else runs.
 *
 * Usage:  node_modules/.bin/tsx scripts/services/index.ts <up|down|status> [--test] [--allow-volatile-redis] [--cluster [--replicas N]]
 *
 * Why this exists
 * ---------------
 * The service needs two backing stores: Redis (hot state, BullMQ queues) and PostgreSQL (the durable
 * record, schema managed by Prisma migrations). Developers and CI machines differ: some already run
 * both on the standard ports, some run neither, some point at remote servers. Rather than asking
 * everyone to follow a checklist (start Redis with AOF, initdb, create the database, run the
 * migrations with the offline Prisma wrapper), `up` does the whole thing idempotently and quickly:
 *
 *   1. Resolve the URLs: REDIS_URL (default redis://127.0.0.1:6379) and DATABASE_URL (default
 *      postgresql://postgres@127.0.0.1:5432/gis); with --test, TEST_DATABASE_URL (default
 *      postgresql://postgres@127.0.0.1:5432/gis_test) instead of DATABASE_URL.
 *   2. Probe each service (TCP connect, then Redis PING / `select 1` on the `postgres` database).
 *   3. If a service does not answer and its URL was NOT set in the environment, start a project-local
 *      instance whose data lives under `.data/` (git-ignored) on the URL's host/port:
 *        - Redis:      redis-server with AOF on (appendfsync everysec), no RDB snapshots, and maxmemory-policy noeviction,
 *                      because BullMQ requires noeviction and queue state must survive a restart;
 *        - PostgreSQL: initdb (first time) + pg_ctl start, trust auth, superuser `postgres`. initdb and
 *                      postgres refuse to run as root, so as root the data dir is owned by (and the
 *                      server runs as) the `postgres` system user, or a dedicated `gis-postgres` user
 *                      that is created when no `postgres` user exists.
 *      If the URL WAS set explicitly, the script never substitutes a local server: it fails and says so,
 *      because silently using a different server than the one configured hides real problems.
 *   4. Create the target database if missing and apply migrations with `scripts/prisma-cli.sh migrate
 *      deploy` (the offline wrapper; see that file and the README for why).
 *
 * Redis persistence (issue #22, README "Durability"). A 200 means "in Redis", so the stack must not run
 * on a Redis that keeps nothing on disk without saying so. `up` reads the persistence of the Redis it
 * would use (src/store/redis-persistence.ts):
 *   - durable (AOF everysec or always): used;
 *   - anything less (none, rdb, aof-no, unknown) at the DEFAULT URL: the script says so and starts the
 *     project-local AOF Redis on another port instead (the port it used last time, else a free one),
 *     unless `--allow-volatile-redis` is given, which uses the volatile Redis and says so;
 *   - anything less at an EXPLICIT REDIS_URL: refused (exit 1) unless `--allow-volatile-redis`.
 * It then writes the Redis it chose to `.data/services.env` (REDIS_URL, and REDIS_DURABILITY=required
 * for a durable one, best-effort otherwise) and prints it. `npm start`, `npm run workers`, `admin`,
 * `simulate` and `demo` load that file with Node's `--env-file-if-exists`; variables set in the shell
 * win over it. With `--test` nothing of this applies: tests use REDIS_URL or the default Redis whatever
 * its persistence (their data is disposable), the mode is only printed, and no env file is written.
 *
 * `down` stops only the instances this script started (found through the pid files under `.data/`) and
 * removes `.data/services.env`; services it found already running are never touched. `status` prints
 * reachability, the Redis persistence mode, and whether a local instance is running.
 *
 * Exit codes: 0 ok; 1 a service is unreachable / could not be started / migrations failed;
 *             2 usage error; 3 server binaries missing (the message names the Debian packages).
 *
 * Redis Cluster (issue #17, cluster.ts): `up --cluster [--replicas N]` starts (or finds) a local 3-master
 * cluster on 127.0.0.1:7001… instead of the single Redis and writes its connection setting,
 * `REDIS_URL=redis+cluster://127.0.0.1:7001,…` with REDIS_DURABILITY=required (AOF everysec), to
 * `.data/services.env` (with `--test` it only prints it: run the tests with that REDIS_URL). `down`
 * stops its nodes too; `status` reports it.
 *
 * Layout: common.ts (shared helpers), targets.ts (which URLs), redis.ts, cluster.ts, postgres.ts,
 * env-file.ts.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDurable } from '../../src/store/redis-persistence.js';
import { parseCli } from '../support/cli-args.js';
import { EXIT_FAILURE, EXIT_MISSING_BINARIES, ServiceError, errMessage, redact, rel } from './common.js';
import { readServicesEnv, removeServicesEnv, SERVICES_ENV, writeServicesEnv } from './env-file.js';
import { databaseExists, databaseName, ensurePostgres, localPostgresPid, maintenanceUrl, probePostgres, stopLocalPostgres } from './postgres.js';
import { clusterStatus, ensureCluster, MAX_REPLICAS, stopCluster } from './cluster.js';
import { describePersistence, ensureRedis, localRedisPid, localRedisUrl, probeRedis, redisPersistenceOf, stopLocalRedis } from './redis.js';
import { resolveTargets } from './targets.js';

/** Runs every task even when one fails; prints result lines; returns the exit code. */
async function report(tasks: Promise<string>[]): Promise<number> {
  const results = await Promise.allSettled(tasks);
  let code = 0;
  for (const r of results) {
    if (r.status === 'fulfilled') {
      console.log(r.value);
    } else {
      const err: unknown = r.reason;
      const exit = err instanceof ServiceError ? err.exitCode : EXIT_FAILURE;
      console.error(err instanceof ServiceError ? `error: ${err.message}` : `error: ${errMessage(err)}`);
      if (code === 0 || exit === EXIT_MISSING_BINARIES) code = exit; // missing binaries wins: it names the fix
    }
  }
  return code;
}

/** Options of `up` beyond `--test`. */
export interface UpOptions {
  /** `--allow-volatile-redis`: use a Redis without durable persistence, saying so. */
  allowVolatile?: boolean;
  /** `--cluster`: a local Redis Cluster with this many replicas per master instead of the single Redis. */
  clusterReplicas?: number;
}

/** `up` (module comment): Redis and PostgreSQL reachable, migrated, and (without `test`) services.env written. */
export async function up(test: boolean, opts: UpOptions = {}): Promise<number> {
  const t = resolveTargets(test);
  // On failure the file of an earlier run stays: removing it would send the npm scripts back to the
  // default Redis, which may be exactly the volatile one this script refuses.
  const redis =
    opts.clusterReplicas !== undefined
      ? ensureCluster({ replicas: opts.clusterReplicas }).then(({ url, message }) =>
          test ? message : `${message}\n${writeServicesEnv(url, true)}${t.redisExplicit ? '\nredis cluster: NOTE: REDIS_URL is set in this shell and wins over .data/services.env' : ''}`,
        )
      : ensureRedis(t, { test, allowVolatile: opts.allowVolatile ?? false }).then((choice) =>
          test ? choice.message : `${choice.message}\n${writeServicesEnv(choice.url, isDurable(choice.persistence.mode))}`,
        );
  return report([redis, ensurePostgres(t)]);
}

/** `down`: stops the project-local instances this script started and removes services.env. */
export async function down(): Promise<number> {
  return report([stopLocalRedis(), stopCluster(), stopLocalPostgres(), Promise.resolve().then(removeServicesEnv)]);
}

/** `status`: reachability, persistence and local instances. */
export async function status(test: boolean): Promise<number> {
  const t = resolveTargets(test);
  const redisTask = (async () => {
    // The Redis the npm scripts would use: the shell's REDIS_URL, else the one `up` recorded, else the default.
    const recorded = test || t.redisExplicit ? undefined : readServicesEnv().REDIS_URL;
    const url = recorded ?? t.redisUrl;
    const cluster = await clusterStatus();
    if (cluster !== undefined && url.startsWith('redis+cluster:')) return cluster;
    const p = await probeRedis(url);
    const pid = localRedisPid();
    const local = pid !== undefined ? `; local instance running (pid ${pid}${localRedisUrl() ? `, ${localRedisUrl()}` : ''})` : '';
    const from = recorded ? ` (from ${rel(SERVICES_ENV)})` : '';
    if (!p.ok) throw new ServiceError(`redis: NOT reachable at ${redact(url)}${from} (${p.detail})${local}`);
    return `redis: reachable at ${redact(url)}${from}, ${describePersistence(await redisPersistenceOf(url))}${local}${cluster ? `\n${cluster}` : ''}`;
  })();
  const pgTask = (async () => {
    const p = await probePostgres(t.databaseUrl);
    const pid = localPostgresPid();
    const local = pid !== undefined ? `; local instance running (pid ${pid})` : '';
    const server = redact(maintenanceUrl(t.databaseUrl)).replace(/\/postgres(\?.*)?$/, '');
    if (!p.ok) throw new ServiceError(`postgres: NOT reachable at ${server} (${p.detail})${local}`);
    const exists = await databaseExists(t.databaseUrl);
    return `postgres: reachable at ${server}; database "${databaseName(t.databaseUrl)}" ${exists ? 'exists' : 'missing'}${local}`;
  })();
  return report([redisTask, pgTask]);
}

const USAGE = 'usage: tsx scripts/services/index.ts <up|down|status> [--test] [--allow-volatile-redis] [--cluster [--replicas 0-2]]';

/** The CLI: parses `argv` and runs the command; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const cli = parseCli(USAGE, {
    allowPositionals: true,
    options: {
      test: { type: 'boolean', default: false },
      'allow-volatile-redis': { type: 'boolean', default: false },
      cluster: { type: 'boolean', default: false },
      replicas: { type: 'string' },
    },
  }, argv);
  const { test, 'allow-volatile-redis': allowVolatile, cluster } = cli.values;
  if (cli.positionals.length !== 1) cli.fail('expected exactly one command');
  if (cli.values.replicas !== undefined && !cluster) cli.fail('--replicas goes with --cluster');
  const replicas = cli.number('replicas', 0, 0, MAX_REPLICAS, { integer: true });
  switch (cli.positionals[0]) {
    case 'up':
      return up(test, { allowVolatile, clusterReplicas: cluster ? replicas : undefined });
    case 'down':
      return down();
    case 'status':
      return status(test);
    default:
      return cli.fail(`unknown command ${cli.positionals[0]}`);
  }
}

function isMainModule(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return fs.realpathSync(entry) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exitCode = EXIT_FAILURE;
    },
  );
}
