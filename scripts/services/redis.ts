/**
 * scripts/services/redis.ts — the Redis half of `npm run services:up|down|status` (see index.ts): probing a
 * Redis, reading its persistence, starting and stopping the project-local AOF instance under
 * `.data/redis`, and settling on the Redis `up` uses (issue #22, README "Durability").
 */
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { GUARANTEES, readPersistence, type PersistenceReport } from '../../src/store/redis-persistence.js';
import { freePort } from '../support/free-port.js';
import { runCommand, tail, waitUntil } from '../support/child-process.js';
import {
  DATA_DIR, EXIT_MISSING_BINARIES, PROBE_TIMEOUT_MS, START_TIMEOUT_MS, ServiceError, errMessage, hostOf, isLocalHost, livePid,
  logTail, parseUrl, pidAlive, portOf, readPid, redact, rel, tcpProbe, which, type ProbeResult, type Started,
} from './common.js';
import type { Targets } from './targets.js';

export const REDIS_DIR = path.join(DATA_DIR, 'redis');

/** A short-lived client that fails at once instead of retrying (probes, persistence reads). */
function probeClient(url: string): Redis {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => {}); // reported through the caller's promise
  return client;
}

/** TCP connect, then PING, against `url`. */
export async function probeRedis(url: string): Promise<ProbeResult> {
  const u = new URL(url);
  if (u.protocol === 'redis:' || u.protocol === 'rediss:') {
    const tcpErr = await tcpProbe(hostOf(u), portOf(u, 6379));
    if (tcpErr) return { ok: false, listening: false, detail: tcpErr };
  }
  const client = probeClient(url);
  try {
    await client.connect();
    const pong = await client.ping();
    return { ok: pong === 'PONG', listening: true, detail: `PING answered ${pong}` };
  } catch (err) {
    return { ok: false, listening: true, detail: errMessage(err) };
  } finally {
    client.disconnect();
  }
}

export interface LocalRedisOptions {
  host: string;
  port: number;
  /** Data dir (AOF, pid file, log). Default .data/redis. */
  dir?: string;
  /** Extra redis-server arguments (bench:fleet's `--redis-settings`). */
  extraArgs?: readonly string[];
}

function redisFiles(dir: string): { pidFile: string; logFile: string; portFile: string } {
  return { pidFile: path.join(dir, 'redis.pid'), logFile: path.join(dir, 'redis.log'), portFile: path.join(dir, 'redis.port') };
}

/**
 * `redis://127.0.0.1:<port>` of the local Redis in `dir`: the port it was last started on (recorded in
 * `redis.port`), or undefined when it was never started by this version of the script.
 */
export function localRedisUrl(dir = REDIS_DIR): string | undefined {
  const port = readPid(redisFiles(dir).portFile); // a positive integer, like a pid
  return port === undefined ? undefined : `redis://127.0.0.1:${port}`;
}

/** Pid of the local Redis started by this script, if it is still running. */
export function localRedisPid(dir = REDIS_DIR): number | undefined {
  return livePid(redisFiles(dir).pidFile, 'redis-server');
}

/** The redis-server binary. @throws {ServiceError} (exit 3, naming the Debian package) when it is not installed. */
export function redisServerBinary(why: string): string {
  const bin = which('redis-server');
  if (!bin) {
    throw new ServiceError(
      `redis: ${why} and redis-server is not installed; install the Debian package \`redis-server\` ` +
        '(apt-get install redis-server) or set REDIS_URL to a running server',
      EXIT_MISSING_BINARIES,
    );
  }
  return bin;
}

export interface RedisServerSpec {
  host: string;
  port: number;
  /** Data dir: AOF, `redis.pid`, `redis.log` (and a cluster node's `nodes.conf`). */
  dir: string;
  /** Extra redis-server arguments, e.g. the cluster-mode settings. */
  extraArgs?: readonly string[];
}

/**
 * Starts a daemonized redis-server with AOF on (appendfsync everysec, rewritten from 1 GB on) and maxmemory-policy noeviction
 * (BullMQ requires it; queue state must survive a restart) and waits until it answers PING.
 * @returns its pid (from its pid file)
 * @throws {ServiceError} when it fails to start or does not answer within START_TIMEOUT_MS, with its log.
 */
export async function launchRedisServer(bin: string, spec: RedisServerSpec): Promise<number | undefined> {
  const { pidFile, logFile } = redisFiles(spec.dir);
  const url = `redis://${spec.host.includes(':') ? `[${spec.host}]` : spec.host}:${spec.port}`;
  fs.mkdirSync(spec.dir, { recursive: true });
  fs.rmSync(pidFile, { force: true });
  const bind = spec.host === 'localhost' ? ['127.0.0.1', '-::1'] : [spec.host];
  const args = [
    '--port', String(spec.port),
    '--bind', ...bind,
    '--dir', spec.dir,
    '--appendonly', 'yes',
    '--appendfsync', 'everysec',
    // A rewrite forks and rewrites the dataset on the same cores as the service: at Redis's 64 MB a busy
    // stack rewrote every ~17 s (docs/benchmarks.md "One request per joining player").
    '--auto-aof-rewrite-min-size', '1gb',
    '--maxmemory-policy', 'noeviction',
    '--daemonize', 'yes',
    '--pidfile', pidFile,
    '--logfile', logFile,
    ...(spec.extraArgs ?? []),
  ];
  const res = await runCommand(bin, args, { cwd: spec.dir, timeoutMs: 10_000 });
  if (res.code !== 0) {
    throw new ServiceError(
      `redis: redis-server failed to start on port ${spec.port} (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output)}\n${logTail(logFile)}`,
    );
  }
  const up = await waitUntil(async () => (await probeRedis(url)).ok, START_TIMEOUT_MS);
  if (!up) {
    throw new ServiceError(
      `redis: started redis-server but it did not answer at ${url} within ${START_TIMEOUT_MS / 1000} s; log ${rel(logFile)}:\n${logTail(logFile)}`,
    );
  }
  return readPid(pidFile);
}

/**
 * Stops the redis-server whose pid file is in `dir` (SIGTERM: it shuts down cleanly, flushing the AOF)
 * and removes the pid file; `label` names it in the returned line.
 * @throws {ServiceError} when it has not exited after 20 s.
 */
export async function stopRedisServer(dir: string, label: string): Promise<string> {
  const { pidFile } = redisFiles(dir);
  if (!fs.existsSync(pidFile)) return `${label}: no local instance (nothing to stop)`;
  const pid = livePid(pidFile, 'redis-server');
  if (pid === undefined) {
    fs.rmSync(pidFile, { force: true });
    return `${label}: local instance was not running (removed stale pid file)`;
  }
  process.kill(pid, 'SIGTERM');
  const gone = await waitUntil(() => !pidAlive(pid), 20_000, 100);
  if (!gone) throw new ServiceError(`${label}: local instance (pid ${pid}) did not stop within 20 s`);
  fs.rmSync(pidFile, { force: true });
  return `${label}: stopped local instance (pid ${pid})`;
}

/**
 * Starts the project-local Redis in `opts.dir` (default .data/redis) on `opts.port`, recording the port
 * in `redis.port` so later runs find it again: {@link launchRedisServer}'s settings without RDB snapshots.
 * @throws {ServiceError} for a non-local host, a missing redis-server (exit 3), an instance of ours still
 *   running, or a failed start.
 */
export async function startLocalRedis(opts: LocalRedisOptions): Promise<Started> {
  const dir = opts.dir ?? REDIS_DIR;
  const url = `redis://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  if (!isLocalHost(opts.host)) {
    throw new ServiceError(`redis: cannot start a local instance for non-local host ${opts.host}`);
  }
  const bin = redisServerBinary('not reachable');
  const running = localRedisPid(dir);
  if (running !== undefined) {
    throw new ServiceError(
      `redis: a local instance started earlier by this script is still running (pid ${running}, ${rel(dir)}) and ` +
        `${url} did not answer; run \`npm run services:down\` and try again`,
    );
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(redisFiles(dir).portFile, `${opts.port}\n`);
  // No RDB snapshots: the AOF is what a restart loads. Without a config file redis-server keeps its
  // default save points (`3600 1 300 100 60 10000`), so a busy stack forked every 60 s to write a
  // snapshot nobody reads, its child on the service's cores (docs/benchmarks.md "No RDB snapshots").
  // The local cluster's nodes (cluster.ts) keep them: without, a whole cluster restarted under load served
  // heartbeats again 0.14–3.4 s after it was ok (5 runs) instead of 0.004–0.73 s (6 runs), and the fault
  // test's 3 s allowance failed once (test/faults/cluster-outage.fault.ts); why is not known.
  const pid = await launchRedisServer(bin, { host: opts.host, port: opts.port, dir, extraArgs: ['--save', '', ...(opts.extraArgs ?? [])] });
  return { pid, dir };
}

/** Stops the project-local Redis of `dir` (default .data/redis), if this script started it. */
export function stopLocalRedis(dir = REDIS_DIR): Promise<string> {
  return stopRedisServer(dir, 'redis');
}

/** The Redis `up` settled on, with its persistence reading and the lines to print. */
export interface RedisChoice {
  url: string;
  persistence: PersistenceReport;
  message: string;
}

/** Reads the persistence of the Redis at `url` with a short-lived client (src/store/redis-persistence.ts). */
export async function redisPersistenceOf(url: string): Promise<PersistenceReport> {
  const client = probeClient(url);
  try {
    await client.connect();
    return await readPersistence(client);
  } catch (err) {
    throw new ServiceError(`redis: could not read the persistence settings of ${redact(url)}: ${errMessage(err)}`);
  } finally {
    client.disconnect();
  }
}

/** `aof-everysec`, or `none (appendonly no, save "")` and the like: the mode with the settings behind it. */
export function describePersistence(r: PersistenceReport): string {
  if (r.mode === 'unknown') return `persistence unknown: ${r.detail ?? 'CONFIG GET refused'}`;
  if (r.durable) return `persistence ${r.mode}`;
  const settings = r.appendonly === 'yes' ? `appendonly yes, appendfsync ${r.appendfsync ?? '?'}` : `appendonly no, save "${r.save ?? ''}"`;
  return `persistence ${r.mode} (${settings})`;
}

/** A port for the project-local Redis beside a volatile one: the one it used last time if free, else any free port. */
async function localRedisPort(avoid: number): Promise<number> {
  const last = localRedisUrl();
  const port = last ? Number(new URL(last).port) : undefined;
  if (port !== undefined && port !== avoid && (await tcpProbe('127.0.0.1', port)) !== undefined) return port;
  return freePort();
}

export interface RedisPolicy {
  /** `--test`: the test suite's Redis; persistence is only reported. */
  test: boolean;
  /** `--allow-volatile-redis`: use a Redis without durable persistence, saying so. */
  allowVolatile: boolean;
}

/**
 * Settles on the Redis for `up` (module comment, "Redis persistence"): the project-local instance when it
 * runs, else the target URL if its persistence is durable (or the policy allows less), else a new
 * project-local AOF Redis on another port. Starts nothing for an explicit REDIS_URL.
 * @throws {ServiceError} when the Redis cannot be used (unreachable, or volatile at an explicit URL
 *   without `--allow-volatile-redis`), with the message to print.
 */
export async function ensureRedis(t: Targets, policy: RedisPolicy): Promise<RedisChoice> {
  const u = parseUrl(t.redisUrl, 'REDIS_URL');
  const shown = redact(t.redisUrl);
  // The project-local instance started earlier, possibly beside a volatile Redis on the default port.
  const localUrl = localRedisUrl();
  const localPid = localRedisPid();
  if (!policy.test && !t.redisExplicit && localUrl && localPid !== undefined) {
    const probe = await probeRedis(localUrl);
    if (!probe.ok) {
      throw new ServiceError(`redis: the project-local instance (pid ${localPid}, ${localUrl}) does not answer (${probe.detail}); run \`npm run services:down\` and try again`);
    }
    const persistence = await redisPersistenceOf(localUrl);
    return { url: localUrl, persistence, message: `redis: project-local instance at ${localUrl} (pid ${localPid}, ${describePersistence(persistence)}, data in ${rel(REDIS_DIR)})` };
  }
  const probe = await probeRedis(t.redisUrl);
  if (probe.ok) {
    const persistence = await redisPersistenceOf(t.redisUrl);
    if (persistence.durable) return { url: t.redisUrl, persistence, message: `redis: reachable at ${shown} (${describePersistence(persistence)})` };
    if (policy.test) return { url: t.redisUrl, persistence, message: `redis: reachable at ${shown} (${describePersistence(persistence)}; used by the tests anyway: their data is disposable)` };
    const what = `redis: ${shown} answers, ${describePersistence(persistence)}: ${GUARANTEES[persistence.mode]}`;
    if (policy.allowVolatile) return { url: t.redisUrl, persistence, message: `${what}\nredis: WARNING: using it anyway (--allow-volatile-redis)` };
    if (t.redisExplicit) {
      const fix = persistence.mode === 'unknown'
        ? 'if it does keep an AOF (a managed Redis may hide CONFIG), pass --allow-volatile-redis'
        : 'turn on AOF there (CONFIG SET appendonly yes, appendfsync everysec, and the same in its redis.conf), or pass --allow-volatile-redis to use it as it is';
      throw new ServiceError(`${what}. REDIS_URL is set, so this script does not start another Redis: ${fix}; or unset REDIS_URL to let this script start a project-local AOF Redis`);
    }
    const port = await localRedisPort(portOf(u, 6379));
    const started = await startLocalRedis({ host: '127.0.0.1', port });
    const url = `redis://127.0.0.1:${port}`;
    const mine = await redisPersistenceOf(url);
    return {
      url,
      persistence: mine,
      message: `${what}; not using it (pass --allow-volatile-redis to use it).\nredis: started the project-local Redis at ${url} instead (pid ${started.pid ?? '?'}, ${describePersistence(mine)}, data in ${rel(started.dir)})`,
    };
  }
  if (probe.listening) {
    throw new ServiceError(`redis: something is listening at ${shown} but PING failed (${probe.detail})`);
  }
  if (t.redisExplicit) {
    throw new ServiceError(
      `redis: REDIS_URL is set to ${shown} but nothing answers there (${probe.detail}); start that server, ` +
        'or unset REDIS_URL to let this script start a local one',
    );
  }
  const started = await startLocalRedis({ host: hostOf(u), port: portOf(u, 6379) });
  const persistence = await redisPersistenceOf(t.redisUrl);
  return { url: t.redisUrl, persistence, message: `redis: started locally at ${shown} (pid ${started.pid ?? '?'}, ${describePersistence(persistence)}, data in ${rel(started.dir)})` };
}
