/**
 * Fleet simulator: `npm run simulate -- --servers N --players M --duration S [--procs P] [--ramp S]
 * [--fill S] [--url U] [--interval S] [--key K] [--wait S] [--commands R] [--nudges] [--probe-rate R]
 * [--timeout S] [--watch-pids PIDS] [--no-memory-scan] [--cpu-prof DIR] [--json]`.
 *
 * A fleet of N simulated game servers, each a reference client (@gis/client) against a running API,
 * spread over P fleet worker processes (packages/simulator/src/fleet-worker.ts), plus one **probe** process
 * (packages/simulator/src/probe.ts: one server of the same game at a fixed low rate, open loop) whose latency is
 * the service's latency as a lone client sees it (issue #15 item 4). This process coordinates: unless
 * `--key` is given it creates a workspace, a game (interval `--interval`, default 15 s) with four doors and
 * a key with every scope; it boots server i at a random time of the first `--ramp` seconds (default 10:
 * a game update restarts every server at once); each server's players arrive over `--fill` seconds
 * (default 30) and then come and go (packages/simulator/src/sim-server.ts); it issues `--commands` moderation
 * commands a minute to players the workers report; with `--nudges` the game's urgent nudges reach every
 * server through a local cloud messaging imitation.
 *
 * Measured window: from the first boot (t0) to t0 + duration. Phases: `boot` = the first ramp + one
 * interval seconds, `steady` = the rest; `idle` = the probe's few seconds before t0 (baseline). At the end
 * of the window the coordinator reads Redis memory (INFO used_memory against the baseline before t0, and
 * MEMORY USAGE of every key of the game, by family), waits up to one interval for issued commands, stops
 * the fleet (players leave, final heartbeats flush the queues), then waits (up to `--wait` s) for the
 * workers to bring Postgres up to date.
 *
 * The summary (`--json`: one JSON object on stdout; progress goes to stderr) gives per endpoint the
 * attempts by status, timeouts (outcome unknown), latency p50/p90/p99/max per phase, the 429/503
 * refusals with their Retry-After spread, the probe's latency per phase, the simulator's own event-loop
 * delay (monitorEventLoopDelay p99/max per process) and CPU (seconds, µs per request) next to the
 * machine's CPU use, Redis memory per live server, events sent vs rows in Postgres and sessions opened
 * and closed vs what the rosters imply. A run is **void** when any simulator process's loop delay p99
 * exceeded 50 ms: its latencies then measure the simulator, not the service.
 *
 * Accounting with unknown outcomes: a request that timed out got no answer; the service may have applied
 * it. Its events stay queued in the client and are resent (eventIds make that a no-op), so events match
 * when rows in Postgres lie between the events acknowledged by a 200 and that plus the events still
 * queued that a timed-out heartbeat carried; sessions match within the roster changes only such
 * heartbeats carried (`ambiguous`).
 *
 * Exit codes: 0 ok; 1 events sent and rows in Postgres differ after the wait, events were left unsent, or
 * a server hit a setup error (400/401/403/404); 2 usage or configuration error.
 */
import { randomBytes } from 'node:crypto';
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { realSleep } from '@gis/client';
import { loadConfig, ConfigError, type Config } from '../../../src/config.js';
import { createDb, type Db } from '../../../src/store/prisma.js';
import { createGame, createWorkspace, checkInterval } from '../../../src/games/game-service.js';
import { createKey } from '../../../src/auth/key-service.js';
import { parseServerKey } from '../../../src/auth/server-key.js';
import { SCOPES } from '../../../src/auth/scopes.js';
import { createRedis, type AppRedis } from '../../../src/store/redis.js';
import { KeySpace } from '../../../src/store/keyspace/key-space.js';
import { NudgeQueue } from '../../../src/commands/nudge-queue.js';
import { attachNudgeImitation, CommandLoad, type CommandLoadSummary } from './command-load.js';
import { emptyDoorSummary, mergeDoorSummary, seedSimulatedDoors, type DoorPlaySummary } from './door-play.js';
import { addCounts, describeLoopAndGc, ENDPOINTS, ProcessMeter, RequestStats, timelineSummary, type Endpoint, type ProcessReport, type Timeline, type TimelineSummary } from './sim-stats.js';
import { Histogram, type LatencySummary } from './histogram.js';
import { machineJiffies, processTreeCpuSeconds } from './proc-stat.js';
import type { FleetFinal, FleetProgress, FleetStart, FromChild, ProbeFinal, ProbeStart, TargetSample, ToChild } from './protocol.js';

const USAGE = `usage: npm run simulate -- --servers N --players M --duration S [options]
  --servers     simulated game servers (default 5)
  --players     players kept on each server, about (default 10)
  --duration    seconds of the measured window, from the first boot (default 60)
  --procs       fleet worker processes (default: cores - 1, at least 1; the probe is one more)
  --ramp        servers boot at random times over this many seconds (default 10)
  --fill        a booted server's players arrive over this many seconds (default 30)
  --url         API origin (default http://127.0.0.1:<PORT of the configuration, 3000>)
  --interval    heartbeat interval of the created game, 15-60 s (default 15; ignored with --key)
  --key         use this existing server key (svc_live_<prefix>.<secret>) instead of creating a game
  --wait        seconds to wait for Postgres to catch up at the end (default 30)
  --commands    moderation commands to issue per minute (default 6; 0 with --key)
  --nudges      publish urgent nudges through a local cloud messaging imitation (not with --key)
  --probe-rate  signed requests per second of the probe process (default 5; 0: no probe)
  --timeout     per-request timeout of the clients, seconds (default 10)
  --watch-pids  comma-separated pids (API, workers, redis-server, a postmaster, ...) whose CPU seconds over
                the window to report, each with all its descendants (a postmaster's backends included)
  --no-memory-scan  skip MEMORY USAGE of the game's keys at the end of the window
  --cpu-prof DIR    write V8 CPU profiles of the fleet and probe processes into DIR
  --json        print the summary as one JSON object on stdout`;

/** A simulator process whose event-loop delay p99 exceeds this (ms) voids the run's latencies. */
export const VOID_LOOP_DELAY_P99_MS = 50;
const PROGRESS_MS = 5000;

class UsageError extends Error {}

interface Options {
  servers: number;
  players: number;
  durationSeconds: number;
  procs: number;
  rampSeconds: number;
  fillSeconds: number;
  url: string;
  intervalSeconds: number;
  key?: string;
  waitSeconds: number;
  commandsPerMinute: number;
  nudges: boolean;
  probeRate: number;
  timeoutSeconds: number;
  watchPids: number[];
  memoryScan: boolean;
  /** Write V8 CPU profiles of the child processes into this directory (`--cpu-prof`). */
  cpuProfDir?: string;
  json: boolean;
}

function int(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max} (got ${value})`);
  return n;
}

function parseOptions(argv: string[], defaultPort: number): Options | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      servers: { type: 'string' },
      players: { type: 'string' },
      duration: { type: 'string' },
      procs: { type: 'string' },
      ramp: { type: 'string' },
      fill: { type: 'string' },
      url: { type: 'string' },
      interval: { type: 'string' },
      key: { type: 'string' },
      wait: { type: 'string' },
      commands: { type: 'string' },
      nudges: { type: 'boolean', default: false },
      'probe-rate': { type: 'string' },
      timeout: { type: 'string' },
      'watch-pids': { type: 'string' },
      'no-memory-scan': { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return null;
  const intervalSeconds = int('interval', values.interval, 15, 1, 3600);
  try {
    checkInterval(intervalSeconds);
  } catch (err) {
    throw new UsageError(`--interval: ${(err as Error).message}`);
  }
  const url = values.url ?? `http://127.0.0.1:${defaultPort}`;
  if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) origin (got ${url})`);
  if (values.key !== undefined && !parseServerKey(values.key)) throw new UsageError('--key must look like svc_live_<prefix>.<secret>');
  const pids = (values['watch-pids'] ?? '').split(',').filter(Boolean).map(Number);
  if (pids.some((p) => !Number.isInteger(p) || p <= 0)) throw new UsageError('--watch-pids must be comma-separated process ids');
  const servers = int('servers', values.servers, 5, 1, 20_000);
  return {
    servers,
    players: int('players', values.players, 10, 0, 1000),
    durationSeconds: int('duration', values.duration, 60, 1, 86_400),
    procs: Math.min(servers, int('procs', values.procs, Math.max(1, availableParallelism() - 1), 1, 64)),
    rampSeconds: int('ramp', values.ramp, 10, 0, 3600),
    fillSeconds: int('fill', values.fill, 30, 0, 3600),
    url,
    intervalSeconds,
    key: values.key,
    waitSeconds: int('wait', values.wait, 30, 0, 3600),
    commandsPerMinute: int('commands', values.commands, values.key === undefined ? 6 : 0, 0, 6000),
    nudges: values.nudges ?? false,
    probeRate: int('probe-rate', values['probe-rate'], 5, 0, 100),
    timeoutSeconds: int('timeout', values.timeout, 10, 1, 120),
    watchPids: pids,
    memoryScan: !values['no-memory-scan'],
    cpuProfDir: values['cpu-prof'],
    json: values.json ?? false,
  };
}

const log = (line: string): void => {
  process.stderr.write(`[simulate] ${line}\n`);
};

async function resolveGame(db: Db, opts: Options): Promise<{ gameId: string; key: string; intervalSeconds: number; created: boolean }> {
  if (opts.key) {
    const prefix = parseServerKey(opts.key)!.prefix;
    const row = await db.apiKey.findUnique({ where: { prefix }, include: { game: true } });
    if (!row) throw new UsageError(`no key with prefix ${prefix} in the database`);
    return { gameId: row.gameId, key: opts.key, intervalSeconds: row.game.heartbeatIntervalSeconds, created: false };
  }
  const stamp = new Date().toISOString();
  const ws = await createWorkspace(db, `simulator ${stamp}`);
  const game = await createGame(db, { workspaceId: ws.id, name: `simulated game ${stamp}`, heartbeatIntervalSeconds: opts.intervalSeconds });
  const created = await createKey(db, game.id, [...SCOPES], 'simulator');
  return { gameId: game.id, key: created.key, intervalSeconds: game.heartbeatIntervalSeconds, created: true };
}

interface DbCounts {
  events: number;
  sessions: number;
  sessionsClosed: number;
  /** Closed by the liveness sweep (`server_gone`): the server was silent for its gone-after time. */
  sessionsClosedAsGone: number;
}

async function countRows(db: Db, gameId: string, serverPrefix: string): Promise<DbCounts> {
  const mine = { gameId, externalServerId: { startsWith: serverPrefix } };
  const [events, sessions, sessionsClosed, sessionsClosedAsGone] = await Promise.all([
    db.playerEvent.count({ where: mine }),
    db.session.count({ where: mine }),
    db.session.count({ where: { ...mine, closedAt: { not: null } } }),
    db.session.count({ where: { ...mine, closeReason: 'server_gone' } }),
  ]);
  return { events, sessions, sessionsClosed, sessionsClosedAsGone };
}

/**
 * {@link countRows}, tried again every second until `deadlineMs` (epoch ms) when it fails: at the end of
 * an overloaded run Postgres, on the service's saturated core, can take longer than the pool's connect
 * timeout (800 ms, the API's budget) to open a connection, which must not lose the run's summary.
 * @throws the last error once the deadline has passed.
 */
async function countRowsPatiently(db: Db, gameId: string, serverPrefix: string, deadlineMs: number): Promise<DbCounts> {
  for (;;) {
    try {
      return await countRows(db, gameId, serverPrefix);
    } catch (err) {
      if (Date.now() >= deadlineMs) throw err;
      log(`counting the rows in Postgres failed (${String(err).split('\n')[0]}); trying again`);
      await realSleep(1000);
    }
  }
}

/** A forked child and its last messages. */
interface Child {
  role: 'fleet' | 'probe';
  proc: ChildProcess;
  ready: Promise<void>;
  final: Promise<FleetFinal | ProbeFinal | null>;
  progress?: FleetProgress;
  /** The last non-empty sample of servers and players. */
  sample?: TargetSample[];
}

function forkChild(role: 'fleet' | 'probe', cpuProfDir?: string): Child {
  const file = new URL(`./${role === 'fleet' ? 'fleet-worker' : 'probe'}.ts`, import.meta.url).pathname;
  // A fleet process keeps a fleet's queued events and players for up to a heartbeat interval, so its old
  // generation is large and a major GC comes every ~20 s. With V8's helper threads on the same core (the
  // process has one core, as under bench:fleet) the concurrent marking starved the event loop for 0.6–1.3 s
  // each time, and what the servers meant to send meanwhile left as one burst: a stall of the simulator,
  // not of a real fleet. Single-threaded, the marking runs in small steps between callbacks.
  const gc = role === 'fleet' ? ['--single-threaded-gc'] : [];
  const execArgv = [...gc, '--import', 'tsx', ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [])];
  const proc = fork(file, [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const child = { role, proc } as Child;
  child.ready = new Promise((resolve, reject) => {
    proc.on('message', (m: FromChild) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'progress') {
        child.progress = m;
        if (m.sample.length) child.sample = m.sample;
      }
      else if (m.type === 'log') log(`${role} ${proc.pid}: ${m.line}`);
    });
    proc.once('exit', (code) => reject(new Error(`${role} process exited with ${code} before it was ready`)));
  });
  child.final = new Promise((resolve) => {
    proc.on('message', (m: FromChild) => {
      if (m.type === 'final') resolve(m);
    });
    proc.once('exit', () => resolve(null));
  });
  return child;
}

const toChild = (c: Child, m: ToChild): void => {
  if (c.proc.connected) c.proc.send(m);
};

async function usedMemory(redis: AppRedis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/** The key family of a game key: the suffix after `{g:…}:` up to its variable part (`replay`, `rl:ban`, `doors:dc`, ...). */
function familyOf(key: string, base: string): string {
  const rest = key.slice(base.length + 1).split(':');
  if (rest[0] === 'rl' || rest[0] === 'doors' || rest[0] === 'cmd' || rest[0] === 'banw') return rest.length > 2 ? `${rest[0]}:${rest[1]}` : rest.join(':');
  return rest[0] ?? '?';
}

/** MEMORY USAGE of every key of the game, by family (SCAN + pipelined MEMORY USAGE). */
async function gameKeyMemory(redis: AppRedis, keySpace: KeySpace, gameId: string): Promise<{ keys: number; bytes: number; byFamily: Record<string, { keys: number; bytes: number }> }> {
  const base = keySpace.game(gameId).base;
  const byFamily: Record<string, { keys: number; bytes: number }> = {};
  let keys = 0;
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${base.replace(/[[\]*?]/g, '\\$&')}:*`, 'COUNT', 2000);
    cursor = next;
    if (!batch.length) continue;
    const pipe = redis.pipeline();
    for (const k of batch) pipe.memory('USAGE', k, 'SAMPLES', '0');
    const sizes = (await pipe.exec()) ?? [];
    batch.forEach((k, i) => {
      const size = Number(sizes[i]?.[1] ?? 0);
      const fam = familyOf(k, base);
      byFamily[fam] ??= { keys: 0, bytes: 0 };
      byFamily[fam].keys++;
      byFamily[fam].bytes += size;
      keys++;
      bytes += size;
    });
  } while (cursor !== '0');
  return { keys, bytes, byFamily };
}

const pct = (part: number, all: number): number | null => (all > 0 ? Math.round((1000 * part) / all) / 10 : null);

async function run(opts: Options, config: Readonly<Config>): Promise<number> {
  const db = createDb(config.databaseUrl, 2);
  const redis: AppRedis = createRedis(config.redisUrl, { name: 'simulate' });
  const keySpace = new KeySpace(config.redisPrefix);
  let nudgeQueue: NudgeQueue | undefined;
  let push: Awaited<ReturnType<typeof attachNudgeImitation>> | undefined;
  const children: Child[] = [];
  try {
    const game = await resolveGame(db, opts);
    const runTag = randomBytes(3).toString('hex');
    if (game.created) {
      // The first players of the first two servers are the VIPs of the armory and the heli spawner.
      const vips = [0, 1].flatMap((server) => [0, 1, 2].map((n) => `p-${runTag}-${server}-${n}`));
      await seedSimulatedDoors({ db, redis, keySpace }, game.gameId, vips);
    }
    const prefix = parseServerKey(game.key)!.prefix;
    log(
      `${game.created ? 'created' : 'using'} game ${game.gameId} (interval ${game.intervalSeconds} s), key svc_live_${prefix}.…; ` +
        `${opts.servers} servers × ~${opts.players} players, ramp ${opts.rampSeconds} s, fill ${opts.fillSeconds} s, ${opts.durationSeconds} s, ` +
        `${opts.procs} fleet process(es)${opts.probeRate ? ` + a probe at ${opts.probeRate}/s` : ''} against ${opts.url} (run ${runTag})`,
    );
    if (!game.created && opts.intervalSeconds !== 15) log('--interval is ignored with --key (the game keeps its interval)');

    for (let p = 0; p < opts.procs; p++) children.push(forkChild('fleet', opts.cpuProfDir));
    if (opts.probeRate > 0) children.push(forkChild('probe', opts.cpuProfDir));
    await Promise.all(children.map((c) => c.ready));
    const fleetChildren = children.filter((c) => c.role === 'fleet');
    const probe = children.find((c) => c.role === 'probe');

    // Moderation while the fleet plays: random commands through the service, optionally nudged.
    let load: CommandLoad | undefined;
    if (opts.commandsPerMinute > 0) {
      nudgeQueue = new NudgeQueue(redis, keySpace);
      load = new CommandLoad({ db, redis, keySpace, gameId: game.gameId, nudges: nudgeQueue, issuedBy: `simulator:${runTag}` });
    }
    if (opts.nudges && !game.created) log('--nudges is ignored with --key (the game keeps its platform settings)');
    if (opts.nudges && game.created) {
      push = await attachNudgeImitation(db, game.gameId);
      let pending = false;
      push.subscribe(() => {
        if (pending) return;
        pending = true;
        setTimeout(() => {
          pending = false;
          for (const c of fleetChildren) toChild(c, { type: 'nudge' });
        }, 50);
      });
      log(`nudges on: the game publishes to ${push.platform.baseUrl} (the workers must run publish-nudges)`);
    }

    // The timeline: a short idle baseline for the probe, then the ramp.
    const memoryBefore = await usedMemory(redis);
    // The probe warms up for 2 s (connection, JIT: not reported), then measures a 3 s idle baseline.
    const t0 = Date.now() + (probe ? 5000 : 500);
    const timeline: Timeline = { idleFromMs: t0 - 3000, t0, bootEndMs: t0 + (opts.rampSeconds + game.intervalSeconds) * 1000, endMs: t0 + opts.durationSeconds * 1000 };
    const requestTimeoutMs = opts.timeoutSeconds * 1000;
    const shares: { indices: number[]; bootAtMs: number[] }[] = fleetChildren.map(() => ({ indices: [], bootAtMs: [] }));
    for (let i = 0; i < opts.servers; i++) {
      const share = shares[i % shares.length]!;
      share.indices.push(i);
      share.bootAtMs.push(Math.random() * opts.rampSeconds * 1000);
    }
    fleetChildren.forEach((c, k) => {
      const m: FleetStart = { type: 'start', url: opts.url, key: game.key, runTag, players: opts.players, fillSeconds: opts.fillSeconds, timeline, requestTimeoutMs, ...shares[k]! };
      toChild(c, m);
    });
    if (probe) {
      const m: ProbeStart = { type: 'start', url: opts.url, key: game.key, runTag, rate: opts.probeRate, timeline, requestTimeoutMs };
      toChild(probe, m);
    }

    let interrupted = false;
    const onSignal = (): void => {
      if (!interrupted) log('interrupted: stopping the fleet');
      interrupted = true;
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

    await realSleep(Math.max(0, t0 - Date.now()));
    const meter = new ProcessMeter();
    meter.begin();
    const cpu0 = machineJiffies();
    const watched0 = opts.watchPids.map(processTreeCpuSeconds);
    const commandsPerSecond = opts.commandsPerMinute / 60;
    let lastProgress = Date.now();
    while (!interrupted && Date.now() < timeline.endMs) {
      const targets: TargetSample[] = fleetChildren.flatMap((c) => c.sample ?? []);
      const fleetTargets = targets.map((t) => ({ id: t.id, players: () => t.players }));
      for (let n = Math.floor(commandsPerSecond) + (Math.random() < commandsPerSecond % 1 ? 1 : 0); load && fleetTargets.length && n > 0; n--) await load.issueRandom(fleetTargets);
      if (Date.now() - lastProgress >= PROGRESS_MS) {
        lastProgress = Date.now();
        const sum = (f: (p: FleetProgress) => number) => fleetChildren.reduce((n, c) => n + (c.progress ? f(c.progress) : 0), 0);
        log(
          `t=${Math.round((Date.now() - t0) / 1000)}s servers ${sum((p) => p.booted)}/${opts.servers}, players ${sum((p) => p.players)}, heartbeats ok ${sum((p) => p.heartbeatsOk)}/${sum((p) => p.heartbeatsSent)}, ` +
            `requests ${sum((p) => p.requests)}, events tracked ${sum((p) => p.eventsTracked)} acked ${sum((p) => p.eventsAcked)} queued ${sum((p) => p.eventsQueued)}, commands ${sum((p) => p.commandsAcked)}/${sum((p) => p.commandsReceived)}`,
        );
      }
      await realSleep(Math.min(1000, Math.max(0, timeline.endMs - Date.now())));
    }
    meter.end();
    const cpu1 = machineJiffies();
    const watched1 = opts.watchPids.map(processTreeCpuSeconds);
    const windowSeconds = Math.round((Date.now() - t0) / 100) / 10;

    // Redis memory at the end of the window, fleet still live.
    const liveServers = await redis.zcount(keySpace.game(game.gameId).servers(), '-inf', '+inf');
    const memoryAtEnd = await usedMemory(redis);
    const keyMemory = opts.memoryScan ? await gameKeyMemory(redis, keySpace, game.gameId) : null;

    if (load && !interrupted) log(`waiting (up to one interval) for the ${load.issuedIds.length} issued commands to be acked or failed`);
    const issued = load && (await load.settle(interrupted ? 0 : (game.intervalSeconds + 5) * 1000));

    log('stopping the fleet: players leave, final heartbeats flush the queues');
    for (const c of children) toChild(c, { type: 'stop' });
    const finals = await Promise.race([Promise.all(children.map((c) => c.final)), realSleep(90_000).then(() => null)]);
    if (!finals) throw new Error('simulator processes did not report within 90 s of stop');
    const fleetFinals = finals.filter((f, i): f is FleetFinal => !!f && children[i]!.role === 'fleet');
    const probeFinal = finals.find((f, i): f is ProbeFinal => !!f && children[i]!.role === 'probe');
    if (fleetFinals.length !== fleetChildren.length) throw new Error(`${fleetChildren.length - fleetFinals.length} fleet process(es) died without a report`);

    // Merge the fleet's reports.
    const requests = new RequestStats();
    const t = {
      heartbeats: { sent: 0, ok: 0, outcomeUnknown: 0, byStatus: {} as Record<string, number> },
      events: { tracked: 0, acked: 0, queued: 0, outcomeUnknown: 0, dropped: 0 },
      sessions: { opened: 0, closed: 0, ambiguous: 0 },
      commands: { received: 0, acked: 0, failed: 0, duplicate: 0 },
      bans: { checked: 0, answered: 0, failOpen: 0, refused: 0 },
      problems: {} as Record<string, number>,
    };
    const doors = emptyDoorSummary();
    const setupErrors: FleetFinal['setupErrors'] = [];
    for (const f of fleetFinals) {
      requests.add(f.requests);
      requests.addSlices(f.slices);
      t.heartbeats.sent += f.heartbeats.sent;
      t.heartbeats.ok += f.heartbeats.ok;
      t.heartbeats.outcomeUnknown += f.heartbeats.outcomeUnknown;
      addCounts(t.heartbeats.byStatus, f.heartbeats.byStatus);
      for (const k of Object.keys(t.events) as (keyof typeof t.events)[]) t.events[k] += f.events[k];
      for (const k of Object.keys(t.sessions) as (keyof typeof t.sessions)[]) t.sessions[k] += f.sessions[k];
      for (const k of Object.keys(t.commands) as (keyof typeof t.commands)[]) t.commands[k] += f.commands[k];
      for (const k of Object.keys(t.bans) as (keyof typeof t.bans)[]) t.bans[k] += f.bans[k];
      addCounts(t.problems, f.problems);
      mergeDoorSummary(doors, f.doors);
      setupErrors.push(...f.setupErrors);
    }

    // Workers flush Redis streams to Postgres asynchronously: wait (bounded) until the rows catch up.
    const serverPrefix = `sim-${runTag}-`;
    const eventsLow = t.events.acked;
    const eventsHigh = t.events.acked + t.events.outcomeUnknown;
    const eventsOk = (c: DbCounts) => c.events >= eventsLow && c.events <= eventsHigh;
    const sessionsOk = (c: DbCounts) =>
      Math.abs(c.sessions - t.sessions.opened) <= t.sessions.ambiguous && Math.abs(c.sessionsClosed - t.sessions.closed) <= t.sessions.ambiguous;
    const waitStart = Date.now();
    const deadline = waitStart + opts.waitSeconds * 1000;
    let rows = await countRowsPatiently(db, game.gameId, serverPrefix, deadline);
    while (!(eventsOk(rows) && sessionsOk(rows)) && Date.now() < deadline && !interrupted) {
      await realSleep(1000);
      rows = await countRowsPatiently(db, game.gameId, serverPrefix, deadline);
    }
    const waited = Math.round((Date.now() - waitStart) / 100) / 10;

    // The simulator's own cost, and whether its lag voids the run.
    const processes: ProcessReport[] = [...finals.filter((f): f is FleetFinal | ProbeFinal => !!f).map((f) => f.process), meter.result('coordinator', 0)];
    const generators = processes.filter((p) => p.role !== 'coordinator');
    const worstP99 = Math.max(...generators.map((p) => p.loopDelayMs.p99));
    const fleetProcs = processes.filter((p) => p.role === 'fleet');
    const fleetSum = (f: (p: ProcessReport) => number) => fleetProcs.reduce((n, p) => n + f(p), 0);
    const fleetCpu = fleetSum((p) => p.cpuSeconds);
    const fleetRequests = fleetSum((p) => p.requests);
    const perRequest = (x: number, scale: number) => (fleetRequests ? Math.round((x * scale) / fleetRequests) : null);
    const voidReason = worstP99 > VOID_LOOP_DELAY_P99_MS ? `simulator event-loop delay p99 ${worstP99} ms > ${VOID_LOOP_DELAY_P99_MS} ms: latencies measure the simulator` : null;
    const machine = cpu0 && cpu1 ? { cpuBusyPercent: pct(cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]), cores: availableParallelism() } : null;

    const endpointSummary = (e: Endpoint) => {
      const s = requests.endpoints[e];
      return {
        attempts: s.attempts,
        byStatus: s.byStatus,
        timeouts: s.byStatus.timeout ?? 0,
        latencyMs: { all: requests.latency(e, ['boot', 'steady', 'tail']), boot: requests.latency(e, ['boot']), steady: requests.latency(e, ['steady']) },
        refusals: s.retryAfter,
      };
    };
    const refusalSpread: Record<string, number> = {};
    let status409 = 0;
    for (const e of ENDPOINTS) {
      addCounts(refusalSpread, requests.endpoints[e].retryAfter);
      status409 += requests.endpoints[e].byStatus['409'] ?? 0;
    }
    const refusalsTotal = Object.values(refusalSpread).reduce((a, b) => a + b, 0);
    const probeStats = probeFinal ? new RequestStats().add(probeFinal.requests).addSlices(probeFinal.slices) : null;
    const probeAll = (phases: ('idle' | 'boot' | 'steady')[]) => {
      if (!probeStats) return null;
      const both = new Histogram();
      for (const e of ['heartbeat', 'bansCheck'] as const) for (const p of phases) both.add(probeStats.endpoints[e].latency[p]);
      return { all: both.summary(), heartbeat: probeStats.latency('heartbeat', phases), bansCheck: probeStats.latency('bansCheck', phases) };
    };
    const eventsMatch = eventsOk(rows);
    const sessionsMatch = sessionsOk(rows);
    const summary: SimulationSummary = {
      url: opts.url,
      gameId: game.gameId,
      keyPrefix: prefix,
      run: runTag,
      servers: opts.servers,
      playersPerServer: opts.players,
      procs: opts.procs,
      rampSeconds: opts.rampSeconds,
      fillSeconds: opts.fillSeconds,
      durationSeconds: windowSeconds,
      intervalSeconds: game.intervalSeconds,
      phases: { bootSeconds: opts.rampSeconds + game.intervalSeconds, note: 'boot = first ramp + one interval seconds from the first boot; steady = the rest of the window' },
      void: voidReason,
      simulator: {
        loopDelayP99WorstMs: worstP99,
        fleetCpuSeconds: Math.round(fleetCpu * 100) / 100,
        fleetRequests,
        fleetCpuUsPerRequest: perRequest(fleetCpu, 1e6),
        fleetCpuUserUsPerRequest: perRequest(fleetSum((p) => p.cpuUserSeconds), 1e6),
        fleetCpuSystemUsPerRequest: perRequest(fleetSum((p) => p.cpuSystemSeconds), 1e6),
        fleetWakeupsPerRequest: fleetRequests ? Math.round((fleetSum((p) => p.wakeups) / fleetRequests) * 100) / 100 : null,
        fleetCpuCoreShare: windowSeconds ? Math.round((fleetCpu / windowSeconds) * 1000) / 1000 : null,
        processes,
      },
      machine,
      watchedPids: opts.watchPids.map((pid, i) => ({ pid, cpuSeconds: watched0[i] !== null && watched1[i] !== null ? Math.round((watched1[i]! - watched0[i]!) * 100) / 100 : null })),
      requests: Object.fromEntries(ENDPOINTS.map((e) => [e, endpointSummary(e)])),
      refusals: { total: refusalsTotal, withoutRetryAfter: refusalSpread.none ?? 0, retryAfterSeconds: Object.fromEntries(Object.entries(refusalSpread).filter(([k]) => k !== 'none')) },
      status409,
      timeouts: ENDPOINTS.reduce((n, e) => n + (requests.endpoints[e].byStatus.timeout ?? 0), 0),
      probe: probeStats
        ? {
            rate: opts.probeRate,
            byStatus: addCounts(addCounts({}, probeStats.endpoints.heartbeat.byStatus), probeStats.endpoints.bansCheck.byStatus),
            latencyMs: { idle: probeAll(['idle']), boot: probeAll(['boot']), steady: probeAll(['steady']), all: probeAll(['boot', 'steady']) },
          }
        : null,
      timeline: timelineSummary(timeline.t0, requests, probeStats),
      heartbeats: t.heartbeats,
      latencyMs: requests.latency('heartbeat', ['boot', 'steady', 'tail']),
      events: { tracked: t.events.tracked, sent: t.events.acked, outcomeUnknown: t.events.outcomeUnknown, unsent: t.events.queued - t.events.outcomeUnknown, dropped: t.events.dropped, rowsInPostgres: rows.events, match: eventsMatch },
      sessions: { opened: rows.sessions, closed: rows.sessionsClosed, closedAsGone: rows.sessionsClosedAsGone, expectedOpened: t.sessions.opened, expectedClosed: t.sessions.closed, ambiguous: t.sessions.ambiguous, match: sessionsMatch },
      commands: { ...t.commands, ...(issued ? { issued, nudgesPublished: push?.platform.accepted.length ?? 0 } : {}) },
      bans: t.bans,
      bansRefused: t.bans.refused,
      doors,
      redisMemory: {
        usedBeforeBytes: memoryBefore,
        usedAtEndBytes: memoryAtEnd,
        liveServers,
        bytesPerLiveServer: liveServers ? Math.round((memoryAtEnd - memoryBefore) / liveServers) : null,
        note: 'INFO used_memory is the whole Redis: on a shared Redis other tenants move it; gameKeys counts only this game',
        gameKeys: keyMemory ? { ...keyMemory, bytesPerLiveServer: liveServers ? Math.round(keyMemory.bytes / liveServers) : null } : null,
      },
      problems: t.problems,
      setupErrors,
      waitedSeconds: waited,
    };

    if (opts.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else process.stdout.write(`${humanSummary(summary)}\n`);
    if (voidReason) log(`VOID: ${voidReason}`);
    if (!eventsMatch) log(`events sent (${eventsLow}${eventsHigh > eventsLow ? `–${eventsHigh}` : ''}) and rows in Postgres (${rows.events}) differ after ${waited} s`);
    if (!sessionsMatch) {
      log(`sessions in Postgres (${rows.sessions} opened, ${rows.sessionsClosed} closed, ${rows.sessionsClosedAsGone} of them by the liveness sweep) differ from the accepted rosters (${t.sessions.opened}, ${t.sessions.closed}, ±${t.sessions.ambiguous})`);
    }
    const unsent = t.events.queued - t.events.outcomeUnknown;
    return eventsMatch && unsent === 0 && setupErrors.length === 0 ? 0 : 1;
  } finally {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGTERM');
    await Promise.allSettled([nudgeQueue?.close(), push?.platform.stop()]);
    await Promise.allSettled([redis.quit(), db.$disconnect()]);
  }
}

/** One endpoint's figures in the summary. */
interface EndpointSummary {
  attempts: number;
  /** Attempts by HTTP status (`'200'`, `'409'`) or `timeout` / `network`. */
  byStatus: Record<string, number>;
  timeouts: number;
  latencyMs: { all: LatencySummary; boot: LatencySummary; steady: LatencySummary };
  /** 429/503 refusals by `Retry-After` seconds (`none` without the header). */
  refusals: Record<string, number>;
}

/** The probe's latency in one phase: both endpoints together and each alone. */
interface ProbeLatency {
  all: LatencySummary;
  heartbeat: LatencySummary;
  bansCheck: LatencySummary;
}

/** The run's summary: what `--json` prints as one object, and what {@link humanSummary} renders. */
interface SimulationSummary {
  url: string;
  gameId: string;
  keyPrefix: string;
  run: string;
  servers: number;
  playersPerServer: number;
  procs: number;
  rampSeconds: number;
  fillSeconds: number;
  /** The measured window as it ran, seconds. */
  durationSeconds: number;
  intervalSeconds: number;
  phases: { bootSeconds: number; note: string };
  /** Why the run is void (a simulator process's loop delay), or null when valid. */
  void: string | null;
  simulator: {
    loopDelayP99WorstMs: number;
    fleetCpuSeconds: number;
    fleetRequests: number;
    /** Fleet CPU over the window ÷ the requests it started in the window; then its user and system parts. */
    fleetCpuUsPerRequest: number | null;
    fleetCpuUserUsPerRequest: number | null;
    fleetCpuSystemUsPerRequest: number | null;
    /** Voluntary context switches (event-loop wake-ups) of the fleet processes per request. */
    fleetWakeupsPerRequest: number | null;
    fleetCpuCoreShare: number | null;
    processes: ProcessReport[];
  };
  machine: { cpuBusyPercent: number | null; cores: number } | null;
  watchedPids: { pid: number; cpuSeconds: number | null }[];
  /** By endpoint name (see ENDPOINTS). */
  requests: Record<string, EndpointSummary>;
  refusals: { total: number; withoutRetryAfter: number; retryAfterSeconds: Record<string, number> };
  status409: number;
  timeouts: number;
  probe: {
    rate: number;
    byStatus: Record<string, number>;
    latencyMs: { idle: ProbeLatency | null; boot: ProbeLatency | null; steady: ProbeLatency | null; all: ProbeLatency | null };
  } | null;
  timeline: TimelineSummary;
  heartbeats: { sent: number; ok: number; outcomeUnknown: number; byStatus: Record<string, number> };
  latencyMs: LatencySummary;
  events: { tracked: number; sent: number; outcomeUnknown: number; unsent: number; dropped: number; rowsInPostgres: number; match: boolean };
  /** `closedAsGone`: closed by the liveness sweep (closeReason `server_gone`). */
  sessions: { opened: number; closed: number; closedAsGone: number; expectedOpened: number; expectedClosed: number; ambiguous: number; match: boolean };
  commands: { received: number; acked: number; failed: number; duplicate: number; issued?: CommandLoadSummary; nudgesPublished?: number };
  bans: { checked: number; answered: number; failOpen: number; refused: number };
  bansRefused: number;
  doors: DoorPlaySummary;
  redisMemory: {
    usedBeforeBytes: number;
    usedAtEndBytes: number;
    liveServers: number;
    bytesPerLiveServer: number | null;
    note: string;
    gameKeys: { keys: number; bytes: number; byFamily: Record<string, { keys: number; bytes: number }>; bytesPerLiveServer: number | null } | null;
  };
  problems: Record<string, number>;
  setupErrors: FleetFinal['setupErrors'];
  waitedSeconds: number;
}

/** The summary for a terminal. */
function humanSummary(s: SimulationSummary): string {
  const lat = (l: LatencySummary | null | undefined) =>
    l && l.n ? `p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms (${l.n})` : 'none';
  const lines = [
    `game ${s.gameId} (key svc_live_${s.keyPrefix}.…), ${s.servers} servers × ~${s.playersPerServer}, ${s.durationSeconds} s, interval ${s.intervalSeconds} s, ramp ${s.rampSeconds} s, ${s.procs} fleet process(es)`,
    s.void ? `VOID         ${s.void}` : `valid        simulator loop delay p99 ≤ ${VOID_LOOP_DELAY_P99_MS} ms in every process (worst ${s.simulator.loopDelayP99WorstMs} ms)`,
    `simulator    fleet CPU ${s.simulator.fleetCpuSeconds} s for ${s.simulator.fleetRequests} requests = ${s.simulator.fleetCpuUsPerRequest} µs/request ` +
      `(user ${s.simulator.fleetCpuUserUsPerRequest}, system ${s.simulator.fleetCpuSystemUsPerRequest}; ${s.simulator.fleetWakeupsPerRequest} wake-ups/request; ${s.simulator.fleetCpuCoreShare} of a core); ` +
      s.simulator.processes.map((p) => `${p.role} ${p.pid}: ${describeLoopAndGc(p)}, CPU ${p.cpuSeconds} s`).join('; '),
    ...(s.machine ? [`machine      CPU busy ${s.machine.cpuBusyPercent} % of ${s.machine.cores} cores over the window`] : []),
    ...s.watchedPids.map((w) => `watched      pid ${w.pid}: ${w.cpuSeconds} CPU s`),
  ];
  for (const e of ENDPOINTS) {
    const r = s.requests[e];
    if (!r?.attempts) continue;
    lines.push(`${e.padEnd(13)}${r.attempts} attempts ${JSON.stringify(r.byStatus)}; boot ${lat(r.latencyMs.boot)}; steady ${lat(r.latencyMs.steady)}`);
  }
  lines.push(`refusals     ${s.refusals.total} (429/503), ${s.refusals.withoutRetryAfter} without Retry-After; Retry-After spread ${JSON.stringify(s.refusals.retryAfterSeconds)}; 409s ${s.status409}; timeouts ${s.timeouts}`);
  if (s.probe) {
    lines.push(`probe        ${s.probe.rate}/s ${JSON.stringify(s.probe.byStatus)}; idle ${lat(s.probe.latencyMs.idle?.all)}; boot ${lat(s.probe.latencyMs.boot?.all)}; steady ${lat(s.probe.latencyMs.steady?.all)}`);
  }
  lines.push(
    `heartbeats   sent ${s.heartbeats.sent}, ok ${s.heartbeats.ok}, outcome unknown ${s.heartbeats.outcomeUnknown}`,
    `events       sent ${s.events.sent}${s.events.outcomeUnknown ? ` (+${s.events.outcomeUnknown} outcome unknown)` : ''}, rows in Postgres ${s.events.rowsInPostgres} ${s.events.match ? '(match)' : '(MISMATCH)'}; tracked ${s.events.tracked}, unsent ${s.events.unsent}`,
    `sessions     opened ${s.sessions.opened}, closed ${s.sessions.closed} (${s.sessions.closedAsGone} by the liveness sweep; rosters imply ${s.sessions.expectedOpened} opened, ${s.sessions.expectedClosed} closed${s.sessions.ambiguous ? `, ±${s.sessions.ambiguous}` : ''}) ${s.sessions.match ? '(match)' : '(MISMATCH)'}`,
    `commands     received ${s.commands.received}, acked ${s.commands.acked}, failed ${s.commands.failed}`,
  );
  const issued = s.commands.issued;
  if (issued) {
    lines.push(
      `moderation   issued ${issued.issued} (refused ${issued.refused}): acked ${issued.acked}, failed ${issued.failed}, expired ${issued.expired}, open ${issued.open}; ` +
        `issue→ack p50 ${issued.issueToAckMs.p50} ms, p99 ${issued.issueToAckMs.p99} ms; nudges ${s.commands.nudgesPublished ?? 'off'}`,
    );
  }
  lines.push(
    `bans         checked ${s.bans.checked}: answered ${s.bans.answered}, failed open ${s.bans.failOpen}; ${s.bans.refused} join(s) refused (banned)`,
    `doors        opened ${s.doors.opened}: allowed ${s.doors.allowed}, denied ${s.doors.denied}; answered by ${JSON.stringify(s.doors.bySource)}; reasons ${JSON.stringify(s.doors.byReason)}`,
    `redis        used_memory ${s.redisMemory.usedBeforeBytes} → ${s.redisMemory.usedAtEndBytes} B with ${s.redisMemory.liveServers} live servers: ${s.redisMemory.bytesPerLiveServer} B/server` +
      (s.redisMemory.gameKeys ? `; the game's keys ${s.redisMemory.gameKeys.keys} = ${s.redisMemory.gameKeys.bytes} B (${s.redisMemory.gameKeys.bytesPerLiveServer} B/server)` : ''),
    `waited ${s.waitedSeconds} s for Postgres`,
  );
  if (Object.keys(s.problems).length) lines.push(`problems     ${JSON.stringify(s.problems)}`);
  for (const e of s.setupErrors) lines.push(`SETUP ERROR  ${e.server}: ${e.status} ${e.code} ${e.message}`);
  return lines.join('\n');
}

async function main(): Promise<number> {
  let opts: Options | null;
  let config: Readonly<Config>;
  try {
    config = loadConfig();
    opts = parseOptions(process.argv.slice(2), config.port);
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : `${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!opts) {
    console.log(USAGE);
    return 0;
  }
  try {
    return await run(opts, config);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    console.error(`simulate failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`simulate failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
