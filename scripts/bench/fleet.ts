/**
 * scripts/bench/fleet.ts — fleet capacity in players per service core, valid by construction on a
 * two-core machine (issue #32 item 1; docs/benchmarks.md; not a test).
 *
 * Usage:  npm run bench:fleet -- [--steps 1000,2000,3000,5000] [--players 30] [--duration 120]
 *             [--interval 15] [--ramp 10] [--probe-rate 5] [--wait 60] [--service-cpu 0] [--sim-cpu 1]
 *             [--max-probe-p99-ms 100] [--max-refusal-pct 1] [--idle 20] [--door-ttl S] [--cpu-prof DIR]
 *             [--pg-settings name=value,…] [--redis-settings name=value,…] [--pg-nice N] [--from dist|src] [--sim-procs 1]
 *             [--api-node-args="--flag …"]
 *             [--timeline] [--no-docs] [--json]
 *
 * A fleet simulation shares the machine with the service it loads; on two cores the simulator's own
 * event loop set the latencies it reported (ENVIRONMENT.md, "Load generation on two cores"). So this
 * benchmark gives each side a core of its own:
 *   1. Starts a private stack on free ports, data in a temporary directory: Redis (AOF everysec,
 *      noeviction, as `services:up` runs it), PostgreSQL (initdb; migrated), one API process and one
 *      worker process, LOG_LEVEL=warn. With `--from dist` (the default) they run from the build, as
 *      `npm start` and `npm run workers` run them (dist/src/server.js, dist/workers/index.js): the bench
 *      runs `npm run build` first, so the build is the checkout's. `--from src` runs src/server.ts and
 *      workers/index.ts under tsx, whose transform (esbuild `keepNames`) adds a `__name` call to every
 *      closure created, per request too.
 *   2. Pins every service process to --service-cpu (`taskset -a -cp`: all threads; the postmaster and
 *      every backend it has forked, later backends inherit its mask) and runs the simulator, fleet and
 *      probe processes, under `taskset -c --sim-cpu`.
 *   3. Measures the idle service for --idle seconds (flushers polling, the liveness sweep, Redis and
 *      PostgreSQL housekeeping): the share of its core it uses with no fleet.
 *   4. Steps the fleet up, one `npm run simulate` per step (a fresh game each time, --players per
 *      server), and stops at the first step over the knee: the probe's steady p99 over --max-probe-p99-ms,
 *      refusals (429/503) over --max-refusal-pct of all requests, or any request timed out.
 *   5. Per step: the service's CPU over the measured window, every process with its descendants (the
 *      postmaster's backends included, also those that exited: packages/simulator/src/proc-stat.ts), per request
 *      and per live player; the service core's share used; what one fully used core would hold at that
 *      cost above idle (players × (1 − idle share) ÷ (step share − idle share)); the simulator's void rule (any simulator process's loop-delay p99 over 50 ms voids the step's
 *      latencies, and a void step ends the run: its figures measure the simulator).
 *   With --timeline, each step also prints its run in 10 s slices (scripts/bench/fleet-timeline.ts): the
 *      simulator's requests, refusals, timeouts and probe latency beside each service process's share of
 *      the core in the same slice, sampled once a second.
 *   6. Reports the knee as players per service core: the players of the last step within the limits
 *      (and the CPU-projected figure beside it), prints the table and, unless --no-docs, appends it with
 *      the date, the settings and the machine's load average to docs/benchmarks.md.
 * Everything it started is stopped and the temporary directory removed, also on failure.
 *
 * Only meaningful on a quiet machine: another process on either core makes the figures a measure of it.
 * The load average at the start is printed and written with the table.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCli } from '../support/cli-args.js';
import { nodeBinary, ROOT, runCommand, startNodeScript, type ManagedChild } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { describeLoopAndGc, descendants, processTreeCpuSeconds, type LatencySummary, type ProcessReport, type TimelineSummary } from '@gis/simulator';
import { CpuSampler, timelineRows, timelineTable, type TimelineRow } from './fleet-timeline.js';
import { Redis } from 'ioredis';
import { startLocalRedis, stopLocalRedis } from '../services/redis.js';
import { ensureDatabase, migrateDeploy, startLocalPostgres, stopLocalPostgres } from '../services/postgres.js';
import { describePgStep, PgProfile, type PgStepProfile } from './pg-profile.js';

const USAGE = `usage: npm run bench:fleet -- [--steps 1000,2000,3000,5000] [--players 30] [--duration 120] [--interval 15]
  [--ramp 10] [--probe-rate 5] [--wait 60] [--service-cpu 0] [--sim-cpu 1] [--max-probe-p99-ms 100]
  [--max-refusal-pct 1] [--idle 20] [--door-ttl S] [--cpu-prof DIR] [--pg-settings name=value,…] [--redis-settings name=value,…] [--pg-nice N] [--from dist|src]
  [--sim-procs 1] [--api-node-args="--flag …"] [--timeline] [--no-docs] [--json]`;

const cli = parseCli(USAGE, {
  options: {
    steps: { type: 'string', default: '1000,2000,3000,5000' },
    players: { type: 'string' },
    duration: { type: 'string' },
    interval: { type: 'string' },
    ramp: { type: 'string' },
    'probe-rate': { type: 'string' },
    wait: { type: 'string' },
    'service-cpu': { type: 'string' },
    'sim-cpu': { type: 'string' },
    'max-probe-p99-ms': { type: 'string' },
    'max-refusal-pct': { type: 'string' },
    idle: { type: 'string' },
    'door-ttl': { type: 'string' },
    'pg-settings': { type: 'string' },
    'redis-settings': { type: 'string' },
    'pg-nice': { type: 'string' },
    'cpu-prof': { type: 'string' },
    'sim-procs': { type: 'string' },
    'api-node-args': { type: 'string' },
    from: { type: 'string', default: 'dist' },
    timeline: { type: 'boolean', default: false },
    'no-docs': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const steps = cli.values.steps.split(',').map((s) => Number(s.trim()));
if (!steps.length || steps.some((n) => !Number.isInteger(n) || n < 1)) cli.fail('--steps must be comma-separated server counts');
/** `--pg-settings` or `--redis-settings` `name=value,name=value` as a record; exits with the usage on a pair without `=`. */
function settingsOf(option: string, raw: string | undefined): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const kv of (raw ?? '').split(',').filter(Boolean)) {
    const [name, value] = kv.split('=', 2);
    if (!name || !value) return cli.fail(`--${option} takes name=value pairs separated by commas, not ${JSON.stringify(kv)}`);
    settings[name] = value;
  }
  return settings;
}

/** `--from dist|src`: where the API and the workers start from. */
function entriesOf(from: string): { from: 'dist' | 'src'; api: string; workers: string } {
  if (from === 'dist') return { from, api: 'dist/src/server.js', workers: 'dist/workers/index.js' };
  if (from === 'src') return { from, api: 'src/server.ts', workers: 'workers/index.ts' };
  return cli.fail(`--from must be dist or src, not ${JSON.stringify(from)}`);
}

const args = {
  steps,
  players: cli.number('players', 30, 1, 200, { integer: true }),
  duration: cli.number('duration', 120, 10, 3600, { integer: true }),
  interval: cli.number('interval', 15, 15, 60, { integer: true }),
  ramp: cli.number('ramp', 10, 1, 600, { integer: true }),
  probeRate: cli.number('probe-rate', 5, 1, 100),
  wait: cli.number('wait', 60, 5, 600, { integer: true }),
  serviceCpu: cli.number('service-cpu', 0, 0, 1023, { integer: true }),
  simCpu: cli.number('sim-cpu', 1, 0, 1023, { integer: true }),
  maxProbeP99Ms: cli.number('max-probe-p99-ms', 100, 1, 60_000),
  maxRefusalPct: cli.number('max-refusal-pct', 1, 0, 100),
  idle: cli.number('idle', 20, 5, 600, { integer: true }),
  /** The service's DOOR_CACHE_TTL_SECONDS (null: its default): how long the fleet's clients cache a decision. */
  doorTtl: cli.values['door-ttl'] === undefined ? null : cli.number('door-ttl', 60, 5, 3600, { integer: true }),
  /** Settings of the private PostgreSQL (`--pg-settings name=value,name=value`), for a trial of its configuration. */
  pgSettings: settingsOf('pg-settings', cli.values['pg-settings']),
  /** Settings of the private Redis (`--redis-settings name=value,…`, passed as `--name value`), for a trial of its configuration. */
  redisSettings: settingsOf('redis-settings', cli.values['redis-settings']),
  /**
   * Niceness of the private PostgreSQL's autogroup (0–19; null: left at 0). The daemonised postmaster
   * forms an autogroup of its own, and Linux shares a core between autogroups before nice values count
   * (`/proc/sys/kernel/sched_autogroup_enabled`); the autogroup's own nice is what ranks Postgres against the API.
   */
  pgNice: cli.values['pg-nice'] === undefined ? null : cli.number('pg-nice', 0, 0, 19, { integer: true }),
  /**
   * Where the API and worker processes write a V8 CPU profile at exit (`node --cpu-prof`), and each step's
   * simulator processes theirs (under `simulator-<servers>`), or null.
   */
  cpuProfDir: cli.values['cpu-prof'] ?? null,
  /**
   * The simulator's fleet processes (`simulate --procs`), all on the simulator's core, for a trial: each
   * holds its share of the fleet's queued events and players, so a garbage collection stalls a smaller
   * part of the fleet, but the processes take turns on the one core (docs/benchmarks.md, "A slow host,
   * the accept queue, and a join's bulk check when its ban check was refused": no clear gain on a slow host).
   */
  simProcs: cli.number('sim-procs', 1, 1, 64, { integer: true }),
  /** Node flags of the API process alone (`--api-node-args="--max-semi-space-size=32"`: with `=`, as the value starts with a dash), for a trial of its V8 settings. */
  apiNodeArgs: (cli.values['api-node-args'] ?? '').split(' ').filter((a) => a !== ''),
  /** The API's and the workers' entry points: the build's (as `npm start` runs them) or the sources' under tsx. */
  entries: entriesOf(cli.values.from),
  /** Print each step slice by slice (scripts/bench/fleet-timeline.ts). */
  timeline: cli.values.timeline,
  docs: !cli.values['no-docs'],
  json: cli.values.json,
};
if (args.serviceCpu === args.simCpu) cli.fail('--service-cpu and --sim-cpu must differ');

const log = (line: string): void => void process.stderr.write(`[bench:fleet] ${line}\n`);

/** What one step of the fleet measured. */
interface Step {
  servers: number;
  players: number;
  /** Null when valid, else why the simulator's figures do not count (its loop delay). */
  void: string | null;
  simLoopP99Ms: number;
  requests: number;
  refusals: number;
  refusalPct: number;
  /** Refusals and timeouts by endpoint and status, e.g. `doorsManifest 429×12`. */
  refusalsByEndpoint: string;
  /** Requests (attempts, retries included) by endpoint, largest first, e.g. `doorsCheck 61234`. */
  requestsByEndpoint: string;
  timeouts: number;
  probeSteadyP99Ms: number | null;
  heartbeatSteadyP99Ms: number | null;
  windowSeconds: number;
  /** Service CPU seconds over the window, by process (with descendants). */
  cpu: Record<string, number | null>;
  serviceCpuSeconds: number;
  /** Share of one core the service used over the window. */
  serviceCoreShare: number;
  cpuUsPerRequest: number;
  cpuUsPerPlayerSecond: number;
  /** Players one fully used service core would hold at this step's CPU per player above idle. */
  projectedPlayersPerCore: number;
  eventsMatch: boolean;
  sessionsMatch: boolean;
  /** Redis commands of the step with the most time (INFO commandstats: a script's own commands count twice, in it and in EVALSHA). */
  redisTopCommands: { command: string; calls: number; usec: number }[];
  /** PostgreSQL over the step: statements by time (pg_stat_statements where installed), rows written, WAL. */
  postgres: PgStepProfile;
  /** Sessions the liveness sweep closed as gone (servers silent for 3 intervals under the load). */
  sessionsClosedAsGone: number;
  bytesPerLiveServer: number | null;
  /** The game's Redis bytes per live server by key family (bench:memory's families), largest first. */
  bytesPerLiveServerByFamily: { family: string; bytes: number }[];
  /** Why this step is over the knee, or null. */
  over: string | null;
  /** The step in 10 s slices (--timeline), else absent. */
  timeline?: TimelineRow[];
}

/** The parts of `simulate --json`'s summary (packages/simulator/src/simulate.ts) this benchmark reads. */
interface SimSummary {
  durationSeconds: number;
  void: string | null;
  simulator: { loopDelayP99WorstMs: number; processes: Pick<ProcessReport, 'role' | 'loopDelayMs' | 'gc'>[] };
  requests: Record<string, { attempts: number; byStatus: Record<string, number>; latencyMs: { steady: LatencySummary } }>;
  refusals: { total: number };
  timeouts: number;
  probe: { latencyMs: { steady: { all: LatencySummary } | null } } | null;
  watchedPids: { pid: number; cpuSeconds: number | null }[];
  events: { match: boolean };
  sessions: { match: boolean; closedAsGone: number };
  timeline: TimelineSummary;
  redisMemory: { liveServers: number; gameKeys: { bytesPerLiveServer: number | null; byFamily: Record<string, { bytes: number }> } | null };
}

/** Pins `pid` and all its threads to `cpu`. @throws when taskset fails (not Linux, no such CPU). */
async function pin(pid: number, cpu: number): Promise<void> {
  const res = await runCommand('taskset', ['-a', '-cp', String(cpu), String(pid)]);
  if (res.code !== 0) throw new Error(`taskset -a -cp ${cpu} ${pid} failed: ${res.output.trim()}`);
}

/**
 * Connections the kernel dropped because a listener's accept queue was full (TcpExt ListenOverflows of
 * /proc/net/netstat), machine-wide; null where that file is missing. On a machine running only the bench,
 * they are the API's: the simulator connects to nothing else in numbers.
 */
function listenOverflows(): number | null {
  try {
    const lines = fs.readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
    const names = lines[0]?.split(/\s+/) ?? [];
    const values = lines[1]?.split(/\s+/) ?? [];
    const i = names.indexOf('ListenOverflows');
    return i > 0 ? Number(values[i]) : null;
  } catch {
    return null;
  }
}

/** The Redis counters of its forks and AOF writes that a step moves (INFO stats and persistence). */
async function persistenceStats(redis: Redis): Promise<Record<string, number>> {
  const text = (await redis.info('stats')) + (await redis.info('persistence'));
  const out: Record<string, number> = {};
  for (const name of ['total_forks', 'aof_delayed_fsync', 'latest_fork_usec', 'aof_rewrites']) {
    const m = new RegExp(`^${name}:(\\d+)`, 'm').exec(text);
    if (m) out[name] = Number(m[1]);
  }
  return out;
}

/** What a step did to Redis persistence: forks (AOF rewrites), AOF writes delayed by a slow fsync, the last fork's time. */
function describePersistence(before: Record<string, number>, after: Record<string, number>): string {
  const moved = (n: string) => (after[n] ?? 0) - (before[n] ?? 0);
  return `forks ${moved('total_forks')}, AOF writes delayed by a pending fsync ${moved('aof_delayed_fsync')}, last fork ${after.latest_fork_usec ?? '?'} µs`;
}

/** Calls and µs of every Redis command so far (INFO commandstats). */
async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const info = await redis.info('commandstats');
  const out = new Map<string, { calls: number; usec: number }>();
  for (const [, cmd, calls, usec] of info.matchAll(/^cmdstat_(\S+?):calls=(\d+),usec=(\d+)/gm)) out.set(cmd!, { calls: Number(calls), usec: Number(usec) });
  return out;
}

/** The `top` commands by time between two {@link commandStats} readings. */
function topCommands(before: Map<string, { calls: number; usec: number }>, after: Map<string, { calls: number; usec: number }>, top = 10): Step['redisTopCommands'] {
  return [...after]
    .map(([command, a]) => ({ command, calls: a.calls - (before.get(command)?.calls ?? 0), usec: a.usec - (before.get(command)?.usec ?? 0) }))
    .filter((c) => c.calls > 0)
    .sort((x, y) => y.usec - x.usec)
    .slice(0, top);
}

/** Runs one `simulate` step pinned to the simulator's core; resolves to its JSON summary. */
function simulate(env: Record<string, string>, apiUrl: string, servers: number, watch: number[]): Promise<SimSummary> {
  const simArgs = [
    '-c', String(args.simCpu), nodeBinary(), '--import', 'tsx', 'packages/simulator/src/simulate.ts',
    '--servers', String(servers), '--players', String(args.players), '--duration', String(args.duration),
    '--interval', String(args.interval), '--ramp', String(args.ramp), '--probe-rate', String(args.probeRate),
    '--wait', String(args.wait), '--procs', String(args.simProcs), '--url', apiUrl, '--watch-pids', watch.join(','), '--json',
    ...(args.cpuProfDir ? ['--cpu-prof', path.resolve(args.cpuProfDir, `simulator-${servers}`)] : []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', simArgs, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(out) as SimSummary);
      } catch {
        reject(new Error(`simulate exited ${code} without a JSON summary: ${out.slice(0, 500)}`));
      }
    });
  });
}

/** The step's figures from a simulate summary and the watched processes' names. */
function stepOf(servers: number, s: SimSummary, names: string[], idleShare: number, redisTopCommands: Step['redisTopCommands'], postgres: PgStepProfile): Step {
  const requests = Object.values(s.requests).reduce((n, r) => n + r.attempts, 0);
  const refusals = s.refusals.total;
  const windowSeconds = s.durationSeconds;
  const cpu: Record<string, number | null> = {};
  s.watchedPids.forEach((w, i) => (cpu[names[i]!] = w.cpuSeconds));
  const serviceCpuSeconds = Object.values(cpu).reduce<number>((n, c) => n + (c ?? 0), 0);
  const players = servers * args.players;
  const refusalPct = requests ? (100 * refusals) / requests : 0;
  const probeSteady = s.probe?.latencyMs.steady?.all;
  const probeSteadyP99Ms = probeSteady?.n ? probeSteady.p99 : null;
  const heartbeatSteady = s.requests.heartbeat?.latencyMs.steady;
  const over = s.void
    ? `void: ${s.void}`
    : probeSteadyP99Ms === null || probeSteadyP99Ms > args.maxProbeP99Ms
      ? `probe p99 ${probeSteadyP99Ms ?? 'none'} ms > ${args.maxProbeP99Ms}`
      : refusalPct > args.maxRefusalPct
        ? `refusals ${refusalPct.toFixed(2)} % > ${args.maxRefusalPct} %`
        : s.timeouts > 0
          ? `${s.timeouts} timeouts`
          : null;
  return {
    servers,
    players,
    void: s.void,
    simLoopP99Ms: s.simulator.loopDelayP99WorstMs,
    requests,
    refusals,
    refusalPct: Math.round(refusalPct * 100) / 100,
    refusalsByEndpoint: refusalSplit(s.requests),
    requestsByEndpoint: Object.entries(s.requests).sort(([, a], [, b]) => b.attempts - a.attempts).map(([endpoint, r]) => `${endpoint} ${r.attempts}`).join(', '),
    timeouts: s.timeouts,
    probeSteadyP99Ms,
    heartbeatSteadyP99Ms: heartbeatSteady?.n ? heartbeatSteady.p99 : null,
    windowSeconds,
    cpu,
    serviceCpuSeconds: Math.round(serviceCpuSeconds * 100) / 100,
    serviceCoreShare: Math.round((serviceCpuSeconds / windowSeconds) * 1000) / 1000,
    cpuUsPerRequest: Math.round((serviceCpuSeconds * 1e6) / Math.max(1, requests)),
    cpuUsPerPlayerSecond: Math.round((serviceCpuSeconds * 1e6) / (players * windowSeconds)),
    projectedPlayersPerCore: Math.round((players * (1 - idleShare)) / Math.max(serviceCpuSeconds / windowSeconds - idleShare, 1e-9)),
    eventsMatch: s.events.match,
    sessionsMatch: s.sessions.match,
    sessionsClosedAsGone: s.sessions.closedAsGone,
    redisTopCommands,
    postgres,
    bytesPerLiveServer: s.redisMemory.gameKeys?.bytesPerLiveServer ?? null,
    bytesPerLiveServerByFamily: Object.entries(s.redisMemory.gameKeys?.byFamily ?? {})
      .map(([family, f]) => ({ family, bytes: Math.round(f.bytes / Math.max(1, s.redisMemory.liveServers)) }))
      .sort((a, b) => b.bytes - a.bytes),
    over,
  };
}

/** `endpoint status×count` for every 429, 503 and timeout of a step (`none` when there were none). */
function refusalSplit(requests: SimSummary['requests']): string {
  const parts: string[] = [];
  for (const [endpoint, r] of Object.entries(requests)) {
    for (const status of ['429', '503', 'timeout']) if (r.byStatus[status]) parts.push(`${endpoint} ${status}×${r.byStatus[status]}`);
  }
  return parts.join(', ') || 'none';
}

/** The Markdown table of the steps. */
function table(rows: Step[], names: string[]): string {
  const head = ['servers × players', 'sim loop p99 ms', 'requests', 'refused %', 'refused by endpoint', 'timeouts', 'probe p99 ms (steady)', 'heartbeat p99 ms (steady)', 'service core share', ...names.map((n) => `${n} CPU s`), 'CPU µs / request', 'CPU µs / player·s', 'players per core (projected above idle)', 'events / sessions', 'Redis B / live server', 'verdict'];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const r of rows) {
    lines.push(`| ${[
      `${r.servers} × ${args.players}`, r.simLoopP99Ms, r.requests, r.refusalPct, r.refusalsByEndpoint, r.timeouts, r.probeSteadyP99Ms ?? '–', r.heartbeatSteadyP99Ms ?? '–', r.serviceCoreShare,
      ...names.map((n) => r.cpu[n] ?? '–'), r.cpuUsPerRequest, r.cpuUsPerPlayerSecond, r.projectedPlayersPerCore,
      `${r.eventsMatch ? 'match' : 'MISMATCH'} / ${r.sessionsMatch ? 'match' : 'MISMATCH'}`, r.bytesPerLiveServer ?? '–', r.over ?? 'within',
    ].join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * From the API's console /metrics (src/adapters/metrics/api-metrics.ts): its `gis_admission_shed_total`
 * series, refusals by `class/reason` (e.g. `checks/loop_lag`), and prom-client's garbage-collection
 * histogram, pauses by kind (`gc`: `<kind> count` and `<kind> seconds`). Empty when the scrape fails (the
 * figures are a help, not a limit).
 */
async function apiMetrics(url: string, token: string): Promise<{ shed: Map<string, number>; gc: Map<string, number> }> {
  const shed = new Map<string, number>();
  const gc = new Map<string, number>();
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    for (const m of text.matchAll(/^gis_admission_shed_total\{([^}]*)\} (\d+)/gm)) {
      const label = (name: string) => new RegExp(`${name}="(\\w+)"`).exec(m[1]!)?.[1] ?? '?';
      shed.set(`${label('class')}/${label('reason')}`, Number(m[2]));
    }
    for (const m of text.matchAll(/^nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} ([\d.e+-]+)/gm)) {
      gc.set(`${m[2]} ${m[1] === 'count' ? 'count' : 'seconds'}`, Number(m[3]));
    }
  } catch (err) {
    log(`  could not read the API's /metrics: ${String(err)}`);
  }
  return { shed, gc };
}

/** The API's garbage collection between two {@link apiMetrics} readings, e.g. `major 12 × (0.84 s), minor 3100 × (2.1 s)`. */
function describeGc(before: Map<string, number>, after: Map<string, number>): string {
  const kinds = [...new Set([...after.keys()].map((k) => k.split(' ')[0]!))];
  const moved = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  const rows = kinds.map((kind) => [kind, moved(`${kind} count`), moved(`${kind} seconds`)] as const).filter(([, n]) => n > 0);
  return rows.length ? rows.map(([kind, n, sec]) => `${kind} ${n} × (${sec.toFixed(2)} s)`).join(', ') : 'none read';
}

/** Refusals between two {@link apiMetrics} readings, largest first, e.g. `checks/loop_lag 1200, doors/in_flight 30`. */
function describeShed(before: Map<string, number>, after: Map<string, number>): string {
  const rows = [...after].map(([k, n]) => [k, n - (before.get(k) ?? 0)] as const).filter(([, n]) => n > 0);
  return rows.length ? rows.sort(([, a], [, b]) => b - a).map(([k, n]) => `${k} ${n}`).join(', ') : 'none';
}

async function main(): Promise<number> {
  if (os.availableParallelism() < 2) throw new Error('bench:fleet needs two cores (one for the service, one for the simulator)');
  const loadAvg = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  log(`load average at start ${loadAvg} (figures are valid only on an otherwise quiet machine)`);
  if (args.entries.from === 'dist') {
    log('building the service (npm run build): the API and the workers run from dist/, as npm start runs them');
    const build = await runCommand('npm', ['run', 'build'], { timeoutMs: 300_000 });
    if (build.code !== 0) throw new Error(`npm run build failed:\n${build.output}`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-bench-fleet-'));
  fs.chmodSync(dir, 0o755); // as root, PostgreSQL runs as the postgres user and must reach its data dir
  const children: ManagedChild[] = [];
  let stats: Redis | null = null;
  let pgProfile: PgProfile | null = null;
  let redisStarted = false;
  let postgresStarted = false;
  try {
    const [redisPort, pgPort, apiPort, consolePort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const redisArgs = Object.entries(args.redisSettings).flatMap(([n, v]) => [`--${n}`, v]);
    const redis = await startLocalRedis({ host: '127.0.0.1', port: redisPort, dir: path.join(dir, 'redis'), extraArgs: redisArgs });
    redisStarted = true;
    const postgres = await startLocalPostgres({ host: '127.0.0.1', port: pgPort, dir: path.join(dir, 'postgres'), preloadIfInstalled: ['pg_stat_statements'], settings: args.pgSettings });
    postgresStarted = true;
    if (!redis.pid || !postgres.pid) throw new Error('the private Redis or PostgreSQL did not leave a pid file');
    const databaseUrl = `postgresql://postgres@127.0.0.1:${pgPort}/gis_fleet`;
    await ensureDatabase(databaseUrl);
    log(`postgres: ${await migrateDeploy(databaseUrl)}`);
    pgProfile = await PgProfile.open(databaseUrl);
    if (!pgProfile.statementsProfiled) log('postgres: pg_stat_statements is not installed; no statement profile');
    const env: Record<string, string> = { REDIS_URL: `redis://127.0.0.1:${redisPort}`, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
    if (args.doorTtl !== null) env.DOOR_CACHE_TTL_SECONDS = String(args.doorTtl);
    // Profiles (scripts/bench/cpu-profile-top.ts reads them) cover the whole life of each process: idle and every step.
    const prof = (name: string) => (args.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args.cpuProfDir, name)}`] : []);
    // The operator token lets the bench read the API's /metrics (the admission signals that refused).
    const consoleToken = randomBytes(24).toString('base64url');
    const shed = () => apiMetrics(`http://127.0.0.1:${consolePort}/metrics`, consoleToken);
    const api = startNodeScript('api', args.entries.api, { env: { ...env, PORT: String(apiPort), HOST: '127.0.0.1', CONSOLE_PORT: String(consolePort), CONSOLE_HOST: '127.0.0.1', CONSOLE_TOKEN: consoleToken }, nodeArgs: [...args.apiNodeArgs, ...prof('api')], reportUnexpectedExit: true });
    children.push(api);
    const workers = startNodeScript('workers', args.entries.workers, { env, nodeArgs: prof('workers'), reportUnexpectedExit: true });
    children.push(workers);
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await api.waitForUrl(`${apiUrl}/readyz`, 60_000);
    const watched: [string, number][] = [['API', api.proc.pid!], ['workers', workers.proc.pid!], ['Redis', redis.pid], ['Postgres', postgres.pid]];
    for (const [, pid] of watched) for (const p of [pid, ...descendants(pid)]) await pin(p, args.serviceCpu);
    if (args.pgNice !== null) fs.writeFileSync(`/proc/${postgres.pid}/autogroup`, String(args.pgNice));
    log(`service pinned to CPU ${args.serviceCpu} (${watched.map(([n, p]) => `${n} ${p}`).join(', ')}); simulator on CPU ${args.simCpu}`);

    const names = watched.map(([n]) => n);
    stats = new Redis(env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    const treeCpu = () => watched.reduce((n, [, pid]) => n + (processTreeCpuSeconds(pid) ?? 0), 0);
    const idleFrom = [treeCpu(), performance.now()] as const;
    await new Promise((r) => setTimeout(r, args.idle * 1000));
    const idleShare = (treeCpu() - idleFrom[0]) / ((performance.now() - idleFrom[1]) / 1000);
    log(`idle service: ${idleShare.toFixed(3)} of its core`);
    const rows: Step[] = [];
    for (const servers of args.steps) {
      log(`step ${servers} servers × ${args.players} players, ${args.duration} s`);
      const statsBefore = await commandStats(stats);
      const forksBefore = await persistenceStats(stats);
      const overflowsBefore = listenOverflows();
      const shedBefore = await shed();
      await pgProfile.start();
      const sampler = args.timeline ? new CpuSampler(watched.map(([, p]) => p)) : null;
      sampler?.start();
      const summary = await simulate(env, apiUrl, servers, watched.map(([, p]) => p)).finally(() => sampler?.stop());
      const step = stepOf(servers, summary, names, idleShare, topCommands(statsBefore, await commandStats(stats)), await pgProfile.end());
      if (sampler) {
        step.timeline = timelineRows(summary.timeline, sampler, names);
        log(`  timeline of ${servers} × ${args.players}, from the first boot:\n${timelineTable(step.timeline, names, summary.timeline.sliceSeconds)}`);
      }
      rows.push(step);
      log(`  ${step.over ?? 'within the limits'}; service ${step.serviceCoreShare} of its core, ${step.cpuUsPerRequest} µs CPU per request`);
      log(`  requests by endpoint: ${step.requestsByEndpoint}`);
      log(`  simulator event loops (a long stall releases what waited as one burst): ${summary.simulator.processes.map((p) => `${p.role} ${describeLoopAndGc(p)}`).join('; ')}`);
      const shedAfter = await shed();
      log(`  refused by admission control, by class and signal: ${describeShed(shedBefore.shed, shedAfter.shed)}`);
      log(`  API garbage collection (pauses by kind): ${describeGc(shedBefore.gc, shedAfter.gc)}`);
      log(`  Redis persistence: ${describePersistence(forksBefore, await persistenceStats(stats))}`);
      const overflowsAfter = listenOverflows();
      if (overflowsBefore !== null && overflowsAfter !== null) log(`  connections dropped at a full accept queue (machine-wide TcpExt ListenOverflows): ${overflowsAfter - overflowsBefore}`);
      log(`  Redis time by command: ${step.redisTopCommands.map((c) => `${c.command} ${(c.usec / 1e6).toFixed(2)} s / ${c.calls}`).join(', ')}`);
      for (const line of describePgStep(step.postgres, step.windowSeconds)) log(`  ${line}`);
      log(`  Redis B per live server by family: ${step.bytesPerLiveServerByFamily.map((f) => `${f.family} ${f.bytes}`).join(', ')}`);
      if (step.over) break;
    }
    const within = rows.filter((r) => !r.over);
    const knee = within.at(-1) ?? null;
    const verdict = knee
      ? `knee: ${knee.players.toLocaleString('en-US')} players (${knee.servers} × ${args.players}) held on one service core` +
        (rows.at(-1)?.over ? `; ${rows.at(-1)!.players.toLocaleString('en-US')} were over (${rows.at(-1)!.over})` : '; no step was over the limits') +
        `; at the knee's CPU per player above idle one fully used core would hold ${knee.projectedPlayersPerCore.toLocaleString('en-US')}`
      : `no step within the limits (first: ${rows[0]?.over ?? 'none ran'})`;
    const settings = `steps ${args.steps.join(', ')} servers × ${args.players} players, ${args.duration} s each, interval ${args.interval} s, ramp ${args.ramp} s, probe ${args.probeRate}/s, door cache TTL ${args.doorTtl ?? 'default (300)'} s${args.pgNice === null ? '' : `, PostgreSQL's autogroup at nice ${args.pgNice}`}${Object.keys(args.pgSettings).length ? `, PostgreSQL ${Object.entries(args.pgSettings).map(([n, v]) => `${n}=${v}`).join(' ')}` : ''}${Object.keys(args.redisSettings).length ? `, Redis ${Object.entries(args.redisSettings).map(([n, v]) => `${n}=${v}`).join(' ')}` : ''}; limits probe p99 ≤ ${args.maxProbeP99Ms} ms, refusals ≤ ${args.maxRefusalPct} %, no timeout; service (from ${args.entries.from}) on CPU ${args.serviceCpu} (idle: ${idleShare.toFixed(3)} of it), simulator (${args.simProcs} fleet process${args.simProcs === 1 ? '' : 'es'}) on CPU ${args.simCpu}; load average at start ${loadAvg}`;
    const md = `${table(rows, names)}\n\n${verdict}.`;
    if (args.json) console.log(JSON.stringify({ settings: args, loadAvg, steps: rows, idleShare, knee: knee ? { players: knee.players, servers: knee.servers, projectedPlayersPerCore: knee.projectedPlayersPerCore } : null }));
    else console.log(`${settings}\n\n${md}`);
    if (args.docs) {
      const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
      fs.appendFileSync(path.join(ROOT, 'docs', 'benchmarks.md'), `\n## Fleet capacity on one service core (bench:fleet, ${date} UTC)\n\n${settings}.\n\n${md}\n`);
      log('appended the table to docs/benchmarks.md');
    }
    return knee ? 0 : 1;
  } finally {
    stats?.disconnect();
    await pgProfile?.close().catch(() => undefined);
    await Promise.allSettled(children.map((c) => c.stop()));
    if (postgresStarted) await stopLocalPostgres(path.join(dir, 'postgres')).catch((err: unknown) => log(String(err)));
    if (redisStarted) await stopLocalRedis(path.join(dir, 'redis')).catch((err: unknown) => log(String(err)));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
