/**
 * scripts/bench/api-cpu.ts — the API process's CPU time per request of each hot request kind, at a fixed
 * modest rate (issue #20 "Cheaper hot path"; not a test). On a shared machine throughput is noise; CPU
 * time per request, and the shares of a CPU profile, are what can be compared across builds.
 *
 * Usage:  npm run bench:api-cpu -- [--requests 2000] [--rate 200] [--runs 3] [--warmup 300]
 *             [--kinds heartbeat,bans,join,bulk,cached] [--connections 8] [--cpu-prof] [--prof-interval-us 100]
 *             [--top 10] [--baseline-dir DIR] [--from dist|src] [--redis-url redis://…] [--prefix gisbench-cpu] [--json]
 *
 * Kinds (each request freshly signed with a request nonce, as the reference clients send them):
 *   heartbeat  POST heartbeat of a seeded live server: its unchanged 30-player roster, 5 new events;
 *   bans       POST bans/check of a user never checked (no ban: the common answer);
 *   join       POST bans/check with `includeDoors` of a user never checked: a joining player's one
 *              request (the ban check and the bulk door check together), what a fleet's join storm sends;
 *   bulk       POST doors/bulk of a user never checked (a join: every door evaluated, the member's rows
 *              read from Postgres, the decisions cached and access-logged);
 *   cached     POST doors/check of a (user, door) pair decided by a bulk check just before the phase
 *              (the decision cache answers; the share of `cached: true` answers is printed).
 * The game has the simulator's four doors with their policies (packages/simulator/src/door-play.ts).
 *
 * The API runs as `npm start` runs it, from the build (`dist/src/server.js`: run `npm run build` first,
 * also in a `--baseline-dir`); `--from src` runs `src/server.ts` under tsx instead, whose esbuild
 * transform (keepNames) adds a `__name` call to every closure the code creates, per request too.
 *
 * One run = a fresh API process (LOG_LEVEL=warn, console listener on a free port), `--warmup` requests of every kind, then per kind `--requests` requests at `--rate`/s
 * (scripts/support/paced-load.ts, `--connections` keep-alive sockets). Around each phase it reads the
 * API's CPU time (the sum over its threads of /proc/<pid>/task/<tid>/schedstat: nanoseconds on a CPU,
 * JIT and GC threads included) and, on the private Redis, its main thread's CPU (INFO cpu). Per kind it
 * prints the median and range over `--runs` runs of API CPU µs per request (and Redis's), the statuses,
 * and the load average before and after.
 *
 * `--baseline-dir DIR` (a checkout of another build, e.g. `git archive <commit> | tar -x -C DIR` with
 * this checkout's node_modules linked in) runs an API from DIR beside the one from this checkout, both at
 * once, each phase driving both at the rate over the same seconds, so the drift of a shared machine
 * weighs on both alike. It prints both builds' medians and the median of the per-run ratios
 * current ÷ baseline; the Redis figure is then of both builds' requests together.
 *
 * `--cpu-prof` adds one more run with the API's inspector open: each kind's measured phase is profiled
 * alone (scripts/bench/inspector-profiler.ts, sampling every `--prof-interval-us` µs), written to
 * `.data/bench-profiles/api-cpu-<kind>-<id>.cpuprofile` and summarised by self time
 * (scripts/bench/cpu-profile-top.ts, `--top` rows). That run's CPU figures are left out of the medians
 * (sampling costs CPU).
 *
 * Redis: a private `redis-server` (no persistence) on a free port, so its CPU reading is this run's
 * alone; `--redis-url` uses an existing one (its CPU figure then includes other clients). Postgres:
 * DATABASE_URL (default the dev database), rows in a fresh fixture workspace removed afterwards with the
 * prefix's Redis keys (also on failure or Ctrl-C).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { percentile } from '@gis/client';
import { cleanFixtures, deleteByPattern, initialRoster, MAX_PLAYERS, seedFixtures, type Fixtures, type SeededGame } from '../fixtures.js';
import { loadConfig } from '../../src/config.js';
import { createRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { createDb } from '../../src/store/prisma.js';
import { sign } from '../../src/auth/signature.js';
import { heartbeatQuota } from '../../src/limits/quotas.js';
import { seedSimulatedDoors } from '@gis/simulator';
import { freePort } from '../support/free-port.js';
import { nodeBinary, ROOT, startChild, waitUntil, type ManagedChild } from '../support/child-process.js';
import { parseCli } from '../support/cli-args.js';
import { pacedLoad, type PacedRequest } from '../support/paced-load.js';
import { formatTop, topFunctions, type ProfileRow } from './cpu-profile-top.js';
import { InspectorProfiler, inspectorUrl } from './inspector-profiler.js';

const KINDS = ['heartbeat', 'bans', 'join', 'bulk', 'cached'] as const;
type Kind = (typeof KINDS)[number];
const EVENTS_PER_HEARTBEAT = 5;
/** Times each (user, door) pair is checked in the cached phase (the door-check quota allows 10 per TTL). */
const CHECKS_PER_PAIR = 2;

const USAGE =
  'usage: npm run bench:api-cpu -- [--requests 2000] [--rate 200] [--runs 3] [--warmup 300] [--kinds heartbeat,bans,join,bulk,cached] [--connections 8] [--cpu-prof] [--prof-interval-us 100] [--top 10] [--baseline-dir DIR] [--from dist|src] [--redis-url URL] [--prefix gisbench-cpu] [--json]';
const cli = parseCli(USAGE, {
  options: {
    requests: { type: 'string' },
    rate: { type: 'string' },
    runs: { type: 'string' },
    warmup: { type: 'string' },
    kinds: { type: 'string', default: KINDS.join(',') },
    connections: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'prof-interval-us': { type: 'string' },
    top: { type: 'string' },
    'baseline-dir': { type: 'string' },
    from: { type: 'string', default: 'dist' },
    'redis-url': { type: 'string' },
    prefix: { type: 'string', default: 'gisbench-cpu' },
    json: { type: 'boolean', default: false },
  },
});
const args = {
  requests: cli.number('requests', 2000, 100, 1_000_000, { integer: true }),
  rate: cli.number('rate', 200, 1, 20_000),
  runs: cli.number('runs', 3, 0, 100, { integer: true }),
  warmup: cli.number('warmup', 300, 0, 100_000, { integer: true }),
  connections: cli.number('connections', 8, 1, 1000, { integer: true }),
  profIntervalUs: cli.number('prof-interval-us', 100, 10, 100_000, { integer: true }),
  top: cli.number('top', 10, 1, 100, { integer: true }),
  cpuProf: cli.values['cpu-prof'] === true,
  prefix: cli.values.prefix,
  json: cli.values.json === true,
};
const kinds = cli.values.kinds.split(',').map((k) => k.trim()) as Kind[];
for (const k of kinds) if (!KINDS.includes(k)) cli.fail(`--kinds: unknown kind "${k}" (known: ${KINDS.join(', ')})`);
if (args.prefix === 'gis') cli.fail('--prefix: use a dedicated prefix, its keys are deleted afterwards');
if (!args.runs && !args.cpuProf) cli.fail('--runs 0 needs --cpu-prof');
const from = cli.values.from;
if (from !== 'dist' && from !== 'src') cli.fail('--from must be dist or src');
/** The API's entry point inside a checkout, and how node runs it. */
const entry = from === 'dist' ? { file: 'dist/src/server.js', nodeArgs: [] } : { file: 'src/server.ts', nodeArgs: ['--import', 'tsx'] };
const baselineDir = cli.values['baseline-dir'] === undefined ? undefined : path.resolve(cli.values['baseline-dir']);
for (const dir of [ROOT, ...(baselineDir ? [baselineDir] : [])]) {
  if (!fs.existsSync(path.join(dir, entry.file))) cli.fail(`no ${entry.file} in ${dir}${from === 'dist' ? ' (run npm run build there first)' : ''}`);
}

const say = (line: string) => {
  if (!args.json) console.log(line);
};
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

// ---------------------------------------------------------------------------------------------------
// CPU readings

/** CPU time a process has used so far, ns: the sum over its threads of schedstat's time on a CPU, and the main thread's. */
function processCpuNs(pid: number): { all: number; main: number } {
  let all = 0;
  let main = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      all += ns;
      if (Number(tid) === pid) main = ns;
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return { all, main };
}

/** User and system CPU ticks (1/100 s) of a process so far, all threads (/proc/<pid>/stat fields 14 and 15). */
function userSystemTicks(pid: number): [number, number] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]), Number(fields[12])];
}

/** The main thread's CPU seconds of the Redis behind `stats` (INFO cpu). */
async function redisCpuSeconds(stats: Redis): Promise<number> {
  const info = await stats.info('cpu');
  const f = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return f('used_cpu_user_main_thread') + f('used_cpu_sys_main_thread');
}

// ---------------------------------------------------------------------------------------------------
// Requests

/** Builds signed requests of each kind; `tag` keeps users and event ids of separate phases apart. */
class Requests {
  private hb = 0;
  private readonly rosters: string[];

  constructor(private readonly game: SeededGame, private readonly doors: string[], private readonly runId: string) {
    this.rosters = game.servers.map((sid) => JSON.stringify(initialRoster(sid)));
  }

  /** A signed POST of `body` to `pathname`, with a request nonce its signature covers. */
  signed(pathname: string, body: string, context?: unknown): PacedRequest {
    const ts = String(Math.floor(Date.now() / 1000));
    const query = `nonce=${randomUUID()}`;
    return {
      method: 'POST',
      path: `${pathname}?${query}`,
      body,
      context,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.game.key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(this.game.secret, ts, body, query) },
    };
  }

  heartbeat(): PacedRequest {
    const i = this.hb++;
    const s = i % this.game.servers.length;
    const sid = this.game.servers[s]!;
    const at = new Date().toISOString();
    let events = '';
    for (let k = 0; k < EVENTS_PER_HEARTBEAT; k++) {
      events += `${k ? ',' : ''}{"eventId":"${this.runId}-${i}-${k}","type":"bench_${k}","externalId":"${sid}-p${k}","occurredAt":"${at}","payload":{"damage":${(i * 7 + k) % 100},"round":${i % 30}}}`;
    }
    return this.signed('/api/v1/game/heartbeat', `{"externalServerId":"${sid}","externalScopeId":"bench-place-1","playerCount":30,"maxPlayers":${MAX_PLAYERS},"sdkVersion":"1.0.0-bench","region":"bench-eu","uptimeSeconds":${1000 + i},"players":${this.rosters[s]},"events":[${events}],"acks":[]}`);
  }

  ban(user: string, includeDoors = false): PacedRequest {
    return this.signed('/api/v1/game/bans/check', `{"externalId":"${user}","externalServerId":"${this.game.servers[0]}"${includeDoors ? ',"includeDoors":true' : ''}}`);
  }

  bulk(user: string): PacedRequest {
    return this.signed('/api/v1/game/doors/bulk', `{"externalId":"${user}","externalServerId":"${this.game.servers[0]}"}`);
  }

  check(user: string, door: string): PacedRequest {
    return this.signed('/api/v1/game/doors/check', `{"doorKey":"${door}","externalId":"${user}","externalServerId":"${this.game.servers[0]}"}`, 'check');
  }

  /** `n` requests of `kind` under `tag`, and for `cached` the bulk checks that decide its pairs first. */
  phase(kind: Kind, n: number, tag: string): { prepare: number; prepareNext: () => PacedRequest; next: () => PacedRequest } {
    let i = 0;
    const user = () => `${kind}-${this.runId}-${tag}-${i++}`;
    switch (kind) {
      case 'heartbeat':
        return { prepare: 0, prepareNext: () => this.heartbeat(), next: () => this.heartbeat() };
      case 'bans':
        return { prepare: 0, prepareNext: () => this.ban(user()), next: () => this.ban(user()) };
      case 'join':
        return { prepare: 0, prepareNext: () => this.ban(user(), true), next: () => this.ban(user(), true) };
      case 'bulk':
        return { prepare: 0, prepareNext: () => this.bulk(user()), next: () => this.bulk(user()) };
      case 'cached': {
        const users = Math.max(1, Math.ceil(n / (this.doors.length * CHECKS_PER_PAIR)));
        const name = (u: number) => `cached-${this.runId}-${tag}-${u}`;
        let prepared = 0;
        let pair = 0;
        return {
          prepare: users,
          prepareNext: () => this.bulk(name(prepared++)),
          next: () => {
            const p = pair++ % (users * this.doors.length);
            return this.check(name(Math.floor(p / this.doors.length)), this.doors[p % this.doors.length]!);
          },
        };
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The run

interface PhaseFigures {
  apiCpuUs: number;
  /** Share of the API's CPU time spent in the kernel (system time), from /proc ticks. */
  systemShare: number;
  /** Share of the API's CPU time on its main (JavaScript) thread; the rest is V8's compiler and GC threads and libuv's pool. */
  mainShare: number;
  statuses: Record<string, number>;
  errors: number;
  p50Ms: number;
  /** cached only: share of answers with `cached: true`. */
  cacheHits?: number;
}

const children: ManagedChild[] = [];
const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-bench-api-cpu-'));
let privateRedis: ManagedChild | undefined;
let redisUrl = cli.values['redis-url'];
if (!redisUrl) {
  const port = await freePort();
  privateRedis = startChild({ name: 'redis', command: 'redis-server', args: ['--port', String(port), '--bind', '127.0.0.1', '--dir', tmpDir, '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'] });
  redisUrl = `redis://127.0.0.1:${port}`;
}
const env = { ...process.env, REDIS_URL: redisUrl, REDIS_PREFIX: args.prefix };
const config = loadConfig(env);
const stats = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
let fx: Fixtures | undefined;
let stopping = false;

async function cleanup(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all(children.map((c) => c.stop()));
  if (fx) await cleanFixtures({ prefix: args.prefix, env, workspaceId: fx.workspaceId }).catch((err: unknown) => process.stderr.write(`clean-up: ${String(err)}\n`));
  if (!privateRedis) {
    const redis = createRedis(redisUrl!, { name: 'bench-clean' });
    await deleteByPattern(redis, `${args.prefix}:*`).catch(() => 0);
    await redis.quit();
  }
  stats.disconnect();
  await privateRedis?.stop();
  fs.rmSync(tmpDir, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void cleanup().finally(() => process.exit(130)));

/** Starts the API of the checkout at `dir`; with `inspect` its inspector listens on a free port. */
async function startApi(dir: string, inspect: boolean): Promise<{ api: ManagedChild; port: number; profiler?: InspectorProfiler }> {
  const port = await freePort();
  const api = startChild({
    name: dir === ROOT ? 'api' : 'api(baseline)',
    command: nodeBinary(),
    args: [...(inspect ? ['--inspect=127.0.0.1:0'] : []), ...entry.nodeArgs, entry.file],
    cwd: dir,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', CONSOLE_PORT: String(await freePort()), CONSOLE_HOST: '127.0.0.1', LOG_LEVEL: 'warn', REDIS_DURABILITY: 'best-effort', ADMISSION_MAX_LOOP_LAG_MS: '0', NODE_OPTIONS: undefined },
    echo: /"level":"(warn|error)"|Error/,
    reportUnexpectedExit: true,
  });
  children.push(api);
  await api.waitForUrl(`http://127.0.0.1:${port}/healthz`, 60_000);
  if (!inspect) return { api, port };
  await api.waitForLine(/Debugger listening on ws:/);
  const url = inspectorUrl(api.output())!;
  return { api, port, profiler: await InspectorProfiler.connect(url, args.profIntervalUs) };
}

/** Sends `n` requests from `next` at the configured rate; resolves to the load's result. */
function drive(port: number, n: number, next: () => PacedRequest, onResponse?: (status: number, body: string, context: unknown) => void) {
  return pacedLoad({ port, rate: args.rate, duration: n / args.rate, connections: args.connections, next, onResponse });
}

type Build = 'current' | 'baseline';
type Top = { busyMs: number; rows: ProfileRow[]; file: string };
interface RunResult {
  figures: Record<Build, Partial<Record<Kind, PhaseFigures>>>;
  /** Redis main-thread CPU µs per request of each phase, all builds' requests together (null: not a private Redis). */
  redisCpuUs: Partial<Record<Kind, number | null>>;
  tops: Record<Build, Partial<Record<Kind, Top>>>;
}

/**
 * One run: a fresh API process per build, all running at once; warm-up, then each kind measured on every
 * build over the same stretch of time (each build its own paced load at the rate), profiled when `profile`.
 */
async function run(requests: Requests, runNo: number, builds: { build: Build; dir: string }[], profile: boolean): Promise<RunResult> {
  const apis = await Promise.all(builds.map(async (b) => ({ ...b, ...(await startApi(b.dir, profile)) })));
  const result: RunResult = { figures: { current: {}, baseline: {} }, redisCpuUs: {}, tops: { current: {}, baseline: {} } };
  try {
    for (const kind of args.warmup ? kinds : []) {
      await Promise.all(
        apis.map(async (a) => {
          const w = requests.phase(kind, args.warmup, `r${runNo}w${a.build}`);
          if (w.prepare) await drive(a.port, w.prepare, w.prepareNext);
          const r = await drive(a.port, args.warmup, w.next);
          if (Object.keys(r.statuses).some((s) => s !== '200')) process.stderr.write(`[bench] warm-up ${kind} (${a.build}): ${JSON.stringify(r.statuses)}\n`);
        }),
      );
    }
    for (const kind of kinds) {
      const phases = apis.map((a) => ({ ...a, p: requests.phase(kind, args.requests, `r${runNo}${a.build}`), hits: 0, samples: 0 }));
      await Promise.all(phases.map(async (ph) => (ph.p.prepare ? drive(ph.port, ph.p.prepare, ph.p.prepareNext) : undefined)));
      for (const ph of phases) await ph.profiler?.start();
      const redis0 = privateRedis ? await redisCpuSeconds(stats) : null;
      const cpu0 = phases.map((ph) => processCpuNs(ph.api.proc.pid!));
      const ticks0 = phases.map((ph) => userSystemTicks(ph.api.proc.pid!));
      const loads = await Promise.all(
        phases.map((ph) =>
          drive(ph.port, args.requests, ph.p.next, (status, body) => {
            if (kind !== 'cached' || status !== 200) return;
            ph.samples++;
            if (body.includes('"cached":true')) ph.hits++;
            else if (ph.samples - ph.hits <= 3) process.stderr.write(`[bench] cached phase (${ph.build}): a miss: ${body.slice(0, 200)}\n`);
          }),
        ),
      );
      // fire-and-forget work of the last answers (decision cache writes, access log) lands in the phase
      await new Promise((res) => setTimeout(res, 100));
      const cpu1 = phases.map((ph) => processCpuNs(ph.api.proc.pid!));
      const ticks1 = phases.map((ph) => userSystemTicks(ph.api.proc.pid!));
      const redis1 = redis0 === null ? null : await redisCpuSeconds(stats);
      result.redisCpuUs[kind] = redis0 === null ? null : Math.round((((redis1! - redis0) * 1e6) / (args.requests * phases.length)) * 10) / 10;
      for (const [i, ph] of phases.entries()) {
        if (ph.profiler) {
          const file = path.join(ROOT, '.data', 'bench-profiles', `api-cpu-${ph.build}-${kind}-${Date.now().toString(36)}.cpuprofile`);
          fs.mkdirSync(path.dirname(file), { recursive: true });
          fs.writeFileSync(file, JSON.stringify(await ph.profiler.stop()));
          result.tops[ph.build][kind] = { ...topFunctions(file, args.top), file: path.relative(ROOT, file) };
        }
        const r = loads[i]!;
        const ok = r.statuses['200'] ?? 0;
        if (ok < args.requests) process.stderr.write(`[bench] ${kind} (${ph.build}): ${ok} of ${args.requests} answered 200: ${JSON.stringify(r.statuses)}, ${r.errors} errors\n`);
        const f: PhaseFigures = {
          apiCpuUs: Math.round((cpu1[i]!.all - cpu0[i]!.all) / 1000 / args.requests),
          mainShare: Math.round(((cpu1[i]!.main - cpu0[i]!.main) / Math.max(1, cpu1[i]!.all - cpu0[i]!.all)) * 100) / 100,
          systemShare: Math.round(((ticks1[i]![1] - ticks0[i]![1]) / Math.max(1, ticks1[i]![0] - ticks0[i]![0] + ticks1[i]![1] - ticks0[i]![1])) * 100) / 100,
          statuses: r.statuses,
          errors: r.errors,
          p50Ms: Math.round(percentile(r.latenciesMs, 50) * 100) / 100,
          ...(kind === 'cached' ? { cacheHits: Math.round((ph.hits / Math.max(1, ph.samples)) * 1000) / 1000 } : {}),
        };
        result.figures[ph.build][kind] = f;
        say(`  ${ph.build} ${kind}: API ${f.apiCpuUs} µs/request (${Math.round(f.systemShare * 100)} % system, ${Math.round(f.mainShare * 100)} % main thread), p50 ${f.p50Ms} ms, statuses ${JSON.stringify(r.statuses)}${f.cacheHits === undefined ? '' : `, cache hits ${f.cacheHits}`}`);
      }
      if (result.redisCpuUs[kind] != null) say(`  ${kind}: Redis ${result.redisCpuUs[kind]} µs/request`);
    }
  } finally {
    for (const a of apis) a.profiler?.close();
    await Promise.all(apis.map((a) => a.api.stop()));
  }
  return result;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return Math.round((s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2) * 1000) / 1000;
};

try {
  await stats.connect().catch(() => undefined); // a private Redis may still be starting: the pings below wait for it
  if (!(await waitUntil(async () => (await stats.ping()) === 'PONG', 10_000, 100))) throw new Error(`Redis at ${redisUrl} does not answer`);
  const runId = randomUUID().slice(0, 8);
  await cleanFixtures({ prefix: args.prefix, env });
  // Enough servers that the round-robin stays within the per-server heartbeat quota, with room to spare.
  const quota = heartbeatQuota(20);
  const servers = Math.max(50, Math.ceil(((args.rate * (baselineDir ? 2 : 1) * 60) / quota) * 2));
  say(`seeding 1 game × ${servers} live servers × 30 players under prefix ${args.prefix} (Redis ${redisUrl}${privateRedis ? ', private' : ''})`);
  fx = await seedFixtures({ prefix: args.prefix, servers, env });
  const game = fx.games[0]!;
  const db = createDb(config.databaseUrl, 2);
  const redis = createRedis(redisUrl, { name: 'bench' });
  const doors = await seedSimulatedDoors({ db, redis, keySpace: new KeySpace(args.prefix) }, game.gameId, ['vip-1', 'vip-2']);
  await Promise.allSettled([db.$disconnect(), redis.quit()]);
  const requests = new Requests(game, doors, runId);

  const loadBefore = load();
  say(`load average before: ${loadBefore} (${os.cpus().length} CPUs); ${args.requests} requests per kind at ${args.rate}/s, ${args.connections} connections, warm-up ${args.warmup}`);
  const builds: { build: Build; dir: string }[] = [{ build: 'current', dir: ROOT }, ...(baselineDir ? [{ build: 'baseline' as const, dir: baselineDir }] : [])];
  const perRun: Record<Build, Partial<Record<Kind, PhaseFigures>>[]> = { current: [], baseline: [] };
  const redisPerRun: Partial<Record<Kind, number | null>>[] = [];
  for (let r = 1; r <= args.runs; r++) {
    say(`run ${r}/${args.runs} (load average ${load()})`);
    const res = await run(requests, r, builds, false);
    for (const b of builds) perRun[b.build].push(res.figures[b.build]);
    redisPerRun.push(res.redisCpuUs);
  }
  let profiles: RunResult['tops'] | undefined;
  if (args.cpuProf) {
    say(`profiled run (inspector, sampling every ${args.profIntervalUs} µs; load average ${load()})`);
    profiles = (await run(requests, args.runs + 1, builds, true)).tops;
  }
  const loadAfter = load();

  const spread = (xs: number[]) => (xs.length ? { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), runs: xs } : null);
  const summary: Record<string, Record<string, unknown>> = {};
  for (const kind of kinds) {
    summary[kind] = { redisCpuUs: spread(redisPerRun.map((x) => x[kind]).filter((x): x is number => typeof x === 'number')) };
    for (const { build } of builds) {
      summary[kind][build] = { apiCpuUs: spread(perRun[build].map((f) => f[kind]!.apiCpuUs)), ...(profiles?.[build][kind] ? { profile: profiles[build][kind] } : {}) };
    }
    if (baselineDir && args.runs) {
      summary[kind].ratio = spread(perRun.current.map((f, i) => Math.round((f[kind]!.apiCpuUs / perRun.baseline[i]![kind]!.apiCpuUs) * 1000) / 1000));
    }
  }
  const result = { machine: { cpus: os.cpus().length, loadBefore, loadAfter }, requests: args.requests, rate: args.rate, runs: args.runs, baselineDir, summary, perRun };
  if (args.json) {
    console.log(JSON.stringify(result, null, 2));
  } else if (args.runs) {
    type Spread = { median: number; min: number; max: number } | null;
    const cell = (x: unknown) => (x ? `${(x as NonNullable<Spread>).median} [${(x as NonNullable<Spread>).min}–${(x as NonNullable<Spread>).max}]` : '—');
    const names = builds.map((b) => b.build);
    say('');
    say(`| kind | ${names.map((b) => `${b} API CPU µs/request`).join(' | ')}${baselineDir ? ' | current ÷ baseline (per run)' : ''} | Redis CPU µs/request (main thread${baselineDir ? ', both builds' : ''}) |`);
    say(`| --- | ${names.map(() => '---').join(' | ')}${baselineDir ? ' | ---' : ''} | --- |`);
    for (const kind of kinds) {
      const s = summary[kind]!;
      say(`| ${kind} | ${names.map((b) => cell((s[b] as { apiCpuUs: Spread }).apiCpuUs)).join(' | ')}${baselineDir ? ` | ${cell(s.ratio)}` : ''} | ${cell(s.redisCpuUs)} |`);
    }
    say(`(median [range] of ${args.runs} runs)`);
  }
  if (!args.json) {
    for (const { build } of builds) {
      for (const kind of kinds) {
        const t = profiles?.[build][kind];
        if (!t) continue;
        say('');
        say(`${build} build, ${kind}: top ${args.top} by self time of ${t.busyMs} ms busy (${t.file})`);
        say(formatTop(t.rows));
      }
    }
    say('');
    say(`load average before ${loadBefore}, after ${loadAfter}`);
  }
} finally {
  await cleanup();
}
