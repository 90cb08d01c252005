/**
 * scripts/bench/capacity.ts — what one Redis shard and one API process carry (issue #17 "Capacity model",
 * docs/scaling.md; not a test).
 *
 * Usage:  npm run bench:capacity -- [--heartbeats 20000] [--door-checks 10000] [--ban-checks 10000]
 *             [--servers 2000] [--connections 50] [--ratio-duration 10] [--port-base 4410]
 *             [--redis-url redis://…] [--prefix gisbench-cap] [--skip-ratio] [--json]
 *
 * One run (~2 min with the defaults):
 *   1. Starts a private Redis (redis-server from PATH on --port-base + 9, AOF everysec as `services:up`
 *      runs it, data in a temporary directory) so `INFO commandstats` and `INFO cpu` count this run's
 *      commands only; `--redis-url` uses an existing Redis instead (then other clients' commands count too).
 *   2. Memory per live server: `INFO memory` used_memory before and after seeding --servers live servers
 *      of 30 players (scripts/fixtures.ts), less the stream entries the seeding left (MEMORY USAGE; they
 *      leave once flushed); plus what a heartbeat leaves outside the streams (its replay-cache entry and
 *      quota counters: used_memory growth over the heartbeat phase less the streams' growth, per
 *      heartbeat) times the (300 + 30) s / 20 s = 16.5 heartbeats a server's replay entries span (kept to
 *      their timestamp + 300 s + margin, src/store/lua/lib/replay-claim.ts): bytes per live
 *      server at steady state, whatever the key layout.
 *   3. Starts two API processes (src/server.ts, Node 24 of node_modules/.bin, `--import tsx`) on
 *      --port-base and --port-base + 1 (console listeners on + 2 and + 3), LOG_LEVEL=warn, no workers.
 *   4. Phases against the first API, each a fixed number of freshly signed requests with autocannon in
 *      this process, each between two readings of INFO commandstats and INFO cpu (the readings' own INFO
 *      calls are left out):
 *        heartbeat    30-player roster, 5 events, round-robin over the seeded servers;
 *        door cached  POST doors/check of (user, door) pairs already decided (one bulk check per user
 *                     first): the decision comes from the Redis decision cache;
 *        door cold    POST doors/check of pairs never checked: cache miss, evaluation, cache write;
 *        ban check    POST bans/check of users never checked (no bans: the common answer).
 *      Per operation: the API process's CPU µs (from /proc), Redis CPU µs (used_cpu_user + used_cpu_sys of the main thread, which is what
 *      saturates a shard), Redis command time µs (sum of commandstats usec) and Redis commands.
 *   5. Events per second per flusher: starts one worker process with WORKER_ROLES=flush-events and times
 *      how fast it moves the heartbeat phase's events into PlayerEvent (from its first row to the last),
 *      with Redis CPU µs per event flushed.
 *   6. 1→2 API process throughput ratio (unless --skip-ratio): heartbeats at full speed for
 *      --ratio-duration s against one API, then the same connections split over both APIs (two autocannon
 *      instances); prints req/s of each and the CPU (cores) the APIs, Redis and this load generator used,
 *      which says what limits the second process on this machine.
 *   Prints a table (or with --json one JSON object) and removes everything it created (workspace, keys of
 *   the prefix, private Redis, children), also on failure.
 *
 * The machine is shared: figures from a busy machine are labelled so in docs/scaling.md and re-measured on
 * an idle one. The database is DATABASE_URL (default the dev database); rows go into a fresh workspace.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { cleanFixtures, initialRoster, MAX_PLAYERS, seedFixtures, type Fixtures, type SeededGame } from '../fixtures.js';
import { loadConfig } from '../../src/config.js';
import { createRedis } from '../../src/store/redis.js';
import { createDb } from '../../src/store/prisma.js';
import { sign } from '../../src/auth/signature.js';
import { createDoor } from '../../src/doors/door-admin-service.js';
import { REPLAY_MARGIN_SECONDS } from '../../src/store/keys.js';
import { SIGNATURE_WINDOW_SECONDS } from '../../src/auth/signature.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { autocannon, type AcRequest, type AcResult } from '../support/autocannon.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NODE = fs.existsSync(path.join(ROOT, 'node_modules/.bin/node')) ? path.join(ROOT, 'node_modules/.bin/node') : process.execPath;
/** The heartbeat interval the capacity model is stated for (issue #17), seconds. */
const INTERVAL_SECONDS = 20;
/** Seconds a heartbeat's replay claim is kept after it (src/store/lua/lib/replay-claim.ts), for a well-clocked server. */
const REPLAY_KEPT_SECONDS = SIGNATURE_WINDOW_SECONDS + REPLAY_MARGIN_SECONDS;
const EVENTS_PER_HEARTBEAT = 5;
const DOORS = 5;
/** Cached checks per (user, door) pair after the warming bulk check: the door-check quota allows 10 per TTL. */
const CACHED_CHECKS_PER_PAIR = 2;

const { values: opts } = parseArgs({
  options: {
    heartbeats: { type: 'string', default: '20000' },
    'door-checks': { type: 'string', default: '10000' },
    'ban-checks': { type: 'string', default: '10000' },
    servers: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '50' },
    'ratio-duration': { type: 'string', default: '10' },
    'port-base': { type: 'string', default: '4410' },
    'redis-url': { type: 'string' },
    prefix: { type: 'string', default: 'gisbench-cap' },
    'skip-ratio': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const num = (name: keyof typeof opts, min: number, max: number): number => {
  const v = Number(opts[name]);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return v;
};
const args = {
  heartbeats: num('heartbeats', 100, 1_000_000),
  doorChecks: num('door-checks', 100, 1_000_000),
  banChecks: num('ban-checks', 100, 1_000_000),
  servers: num('servers', 10, 50_000),
  connections: num('connections', 2, 1000),
  ratioDuration: num('ratio-duration', 1, 600),
  portBase: num('port-base', 1024, 65_000),
  prefix: opts.prefix,
};
if (args.prefix === 'gis') throw new Error('use a dedicated --prefix: its keys are deleted afterwards');
const say = (line: string) => {
  if (!opts.json) console.log(line);
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------
// Redis readings

/** One reading of a Redis: command calls and time by command, CPU seconds. */
interface RedisReading {
  commands: Map<string, { calls: number; usec: number }>;
  /** used_cpu_user + used_cpu_sys of the main thread, seconds. */
  cpuMain: number;
  /** Of the whole process (background threads: AOF fsync, lazy free), seconds. */
  cpuAll: number;
  usedMemory: number;
}

/** Reads INFO commandstats, cpu and memory. */
async function readRedis(redis: Redis): Promise<RedisReading> {
  const info = await redis.info('all');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  const commands = new Map<string, { calls: number; usec: number }>();
  for (const [, cmd, calls, usec] of info.matchAll(/^cmdstat_(\S+?):calls=(\d+),usec=(\d+)/gm)) commands.set(cmd!, { calls: Number(calls), usec: Number(usec) });
  return {
    commands,
    cpuMain: field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread'),
    cpuAll: field('used_cpu_user') + field('used_cpu_sys'),
    usedMemory: field('used_memory'),
  };
}

/** Redis cost of `ops` operations between two readings; INFO (the readings themselves) left out. */
interface RedisCost {
  ops: number;
  cpuUsPerOp: number;
  cpuAllUsPerOp: number;
  /**
   * Sum of commandstats usec per op. A script's usec includes the commands it calls, which are counted
   * again under their own names, so this overstates; the CPU figures are the ones to size with.
   */
  commandUsPerOp: number;
  commandsPerOp: number;
  /** Commands per op by name, the biggest first. */
  byCommand: Record<string, number>;
}
function costOf(before: RedisReading, after: RedisReading, ops: number): RedisCost {
  let calls = 0;
  let usec = 0;
  const byCommand: [string, number][] = [];
  for (const [cmd, a] of after.commands) {
    if (cmd === 'info') continue;
    const b = before.commands.get(cmd) ?? { calls: 0, usec: 0 };
    if (a.calls === b.calls) continue;
    calls += a.calls - b.calls;
    usec += a.usec - b.usec;
    byCommand.push([cmd, (a.calls - b.calls) / ops]);
  }
  byCommand.sort((x, y) => y[1] - x[1]);
  return {
    ops,
    cpuUsPerOp: ((after.cpuMain - before.cpuMain) * 1e6) / ops,
    cpuAllUsPerOp: ((after.cpuAll - before.cpuAll) * 1e6) / ops,
    commandUsPerOp: usec / ops,
    commandsPerOp: calls / ops,
    byCommand: Object.fromEntries(byCommand.slice(0, 6).map(([c, n]) => [c, Math.round(n * 100) / 100])),
  };
}

// ---------------------------------------------------------------------------------------------------
// Children

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;
/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
function cpuSecondsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name: state is [0], utime [11], stime [12] (proc(5) fields 14 and 15).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

const children: ChildProcess[] = [];
function start(name: string, command: string, argv: string[], env: Record<string, string | undefined>): ChildProcess {
  const child = spawn(command, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const tail: string[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > 20) tail.shift();
      if (/"level":"error"/.test(line)) process.stderr.write(`[${name}] ${line}\n`);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  child.on('exit', (code, signal) => {
    if (!stopping && !stopped.has(child)) process.stderr.write(`[bench] ${name} exited (code ${code}, signal ${signal}); last output:\n${tail.join('\n')}\n`);
  });
  return child;
}
let stopping = false;
/** Children this script stopped itself (their exit is not reported). */
const stopped = new WeakSet<ChildProcess>();

async function waitFor(what: string, ready: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
}

// ---------------------------------------------------------------------------------------------------
// Requests

/** The first few answers other than 200, for the report on stderr. */
const unexpected: string[] = [];

/**
 * A signed POST to `pathname` for autocannon: a fresh body per request, sent with a request nonce that the
 * signature covers (README "Replays on a shared key"), so equal bodies in one second are not replays.
 */
function signedPost(game: SeededGame, pathname: string, body: () => string): AcRequest {
  return {
    method: 'POST',
    setupRequest: (req) => {
      const b = body();
      const ts = String(Math.floor(Date.now() / 1000));
      const query = `nonce=${randomUUID()}`;
      return { ...req, path: `${pathname}?${query}`, body: b, headers: { 'content-type': 'application/json', authorization: `Bearer ${game.key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(game.secret, ts, b, query) } };
    },
    onResponse: (status, body) => {
      if (status !== 200 && unexpected.length < 5) unexpected.push(`${pathname} ${status} ${body.slice(0, 300)}`);
    },
  };
}

/** Heartbeat bodies round-robin over the seeded servers: full roster, {@link EVENTS_PER_HEARTBEAT} unique events. */
function heartbeatBodies(game: SeededGame, runId: string): () => string {
  const rosters = game.servers.map((sid) => JSON.stringify(initialRoster(sid)));
  let n = 0;
  return () => {
    const i = n++;
    const s = i % game.servers.length;
    const sid = game.servers[s]!;
    const at = new Date().toISOString();
    let events = '';
    for (let k = 0; k < EVENTS_PER_HEARTBEAT; k++) {
      events += `${k ? ',' : ''}{"eventId":"${runId}-${i}-${k}","type":"bench_${k}","externalId":"${sid}-p${k}","occurredAt":"${at}","payload":{"damage":${(i * 7 + k) % 100},"round":${i % 30}}}`;
    }
    return `{"externalServerId":"${sid}","externalScopeId":"bench-place-1","playerCount":30,"maxPlayers":${MAX_PLAYERS},"sdkVersion":"1.0.0-bench","region":"bench-eu","uptimeSeconds":${1000 + i},"players":${rosters[s]},"events":[${events}],"acks":[]}`;
  };
}

function okCount(r: AcResult): number {
  return r.statusCodeStats['200']?.count ?? 0;
}
function statuses(r: AcResult): Record<string, number> {
  return Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]));
}

// ---------------------------------------------------------------------------------------------------
// The run

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-bench-capacity-'));
const redisPort = args.portBase + 9;
let redisUrl = opts['redis-url'];
if (!redisUrl) {
  start('redis', 'redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', tmpDir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction'], process.env);
  redisUrl = `redis://127.0.0.1:${redisPort}`;
}
const env = { ...process.env, REDIS_URL: redisUrl, REDIS_PREFIX: args.prefix, LOG_LEVEL: 'warn', REDIS_DURABILITY: 'best-effort', ADMISSION_MAX_LOOP_LAG_MS: '0' };
const config = loadConfig(env);
const keySpace = new KeySpace(config.redisPrefix);
const stats = new Redis(redisUrl);
const redis = createRedis(redisUrl, { name: 'bench' });
const db = createDb(config.databaseUrl, 2);
let fx: Fixtures | undefined;
const onSignal = () => {
  void cleanup().then(() => process.exit(130));
};
process.once('SIGINT', onSignal);
// A fire-and-forget write of the service code (e.g. the active-game mark) timing out on a busy machine
// must not end the run without its clean-up (the private Redis would outlive it).
process.on('unhandledRejection', (err) => process.stderr.write(`[bench] unhandled rejection (run continues): ${String(err)}\n`));
process.once('SIGTERM', onSignal);

async function cleanup(): Promise<void> {
  stopping = true;
  const redisChild = opts['redis-url'] ? undefined : children[0];
  const others = children.filter((c) => c !== redisChild);
  await Promise.all(others.map((c) => stop(c)));
  if (fx) await cleanFixtures({ prefix: args.prefix, env, workspaceId: fx.workspaceId }).catch((err: unknown) => process.stderr.write(`clean-up: ${String(err)}\n`));
  await Promise.allSettled([stats.quit(), redis.quit(), db.$disconnect()]);
  if (redisChild) await stop(redisChild);
  fs.rmSync(tmpDir, { recursive: true, force: true });
}

/** SIGTERM, and SIGKILL after 8 s; resolves when `child` has exited. */
async function stop(child: ChildProcess): Promise<void> {
  stopped.add(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(timer);
}

try {
  await waitFor('redis', async () => (await stats.ping()) === 'PONG');
  const runId = randomUUID().slice(0, 8);

  // 2. memory per live server
  const memBefore = (await readRedis(stats)).usedMemory;
  // Seeding sends every server's first heartbeat at once; on a busy machine some exceed the client's
  // 800 ms command timeout. seedFixtures removes what it made before it throws, so a retry starts clean.
  for (let attempt = 1; !fx; attempt++) {
    try {
      fx = await seedFixtures({ servers: args.servers, prefix: args.prefix, env });
    } catch (err) {
      if (attempt === 3) throw err;
      process.stderr.write(`[bench] seeding failed (${String(err)}); retrying\n`);
    }
  }
  const game = fx.games[0]!;
  const keys = keySpace.game(game.gameId);
  const memAfter = (await readRedis(stats)).usedMemory;
  const streamKeys = [keys.eventStream(), keys.sessionStream(), keys.commandLog(), keys.accessStream()];
  const streamBytes = async () => {
    let n = 0;
    for (const k of streamKeys) n += Number((await stats.memory('USAGE', k)) ?? 0);
    return n;
  };
  const seededStreams = await streamBytes();

  // doors: DOORS doors allowing everyone, decided from the policies (no member rows needed)
  for (let d = 0; d < DOORS; d++) await createDoor({ db, redis, keySpace }, { gameId: game.gameId, key: `gate-${d}`, name: `Gate ${d}`, kind: 'door', defaultEffect: 'allow' }, 'bench');

  // 3. two API processes
  const apiPorts = [args.portBase, args.portBase + 1];
  const apis = apiPorts.map((port, i) =>
    start(`api${i + 1}`, NODE, ['--import', 'tsx', 'src/server.ts'], { ...env, PORT: String(port), HOST: '127.0.0.1', CONSOLE_PORT: String(args.portBase + 2 + i), CONSOLE_HOST: '127.0.0.1' }),
  );
  for (const port of apiPorts) await waitFor(`API on ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
  const url = (i = 0) => `http://127.0.0.1:${apiPorts[i]}`;
  const cannon = (requests: AcRequest[], amount: number, i = 0) => autocannon({ url: url(i), connections: args.connections, duration: 3600, amount, requests });
  // warm both APIs: key verification (argon2) and the compiled paths, outside the measured phases
  for (let i = 0; i < apiPorts.length; i++) await cannon([signedPost(game, '/api/v1/game/heartbeat', heartbeatBodies(game, `${runId}-w${i}`))], 200, i);

  // 4. phases
  const phases: Record<string, RedisCost & { rps: number; apiCpuUsPerOp: number; statuses: Record<string, number> }> = {};
  const phase = async (name: string, requests: AcRequest[], amount: number) => {
    const before = await readRedis(stats);
    const apiBefore = cpuSecondsOf(apis[0]!.pid!);
    const r = await cannon(requests, amount);
    const apiAfter = cpuSecondsOf(apis[0]!.pid!);
    const after = await readRedis(stats);
    const ok = okCount(r);
    if (ok < amount * 0.95) process.stderr.write(`[bench] ${name}: only ${ok} of ${amount} answered 200: ${JSON.stringify(statuses(r))}; first: ${unexpected.join(' | ')}\n`);
    phases[name] = { ...costOf(before, after, Math.max(ok, 1)), rps: Math.round(r.requests.average), apiCpuUsPerOp: Math.round(((apiAfter - apiBefore) * 1e6) / Math.max(ok, 1)), statuses: statuses(r) };
  };
  const eventsBefore = await db.playerEvent.count({ where: { gameId: game.gameId } });
  const hbMemBefore = (await readRedis(stats)).usedMemory;
  const hbStreamsBefore = await streamBytes();
  await phase('heartbeat', [signedPost(game, '/api/v1/game/heartbeat', heartbeatBodies(game, runId))], args.heartbeats);
  // What a heartbeat leaves in Redis besides its stream entries: its replay-cache entry (and per-window
  // quota counters), whatever the key layout stores them as.
  const replayBytes = Math.max(0, ((await readRedis(stats)).usedMemory - hbMemBefore - ((await streamBytes()) - hbStreamsBefore)) / phases.heartbeat!.ops);
  const perServerSeeded = (memAfter - memBefore - seededStreams) / args.servers - replayBytes;
  const replayPerServer = (REPLAY_KEPT_SECONDS / INTERVAL_SECONDS) * replayBytes;
  const memory = { servers: args.servers, bytesPerServerState: Math.round(perServerSeeded), replayBytesPerHeartbeat: Math.round(replayBytes), bytesPerLiveServer: Math.round(perServerSeeded + replayPerServer) };
  say(`memory: ${args.servers} live servers of 30 players took ${memAfter - memBefore} B (streams ${seededStreams} B left out): ${memory.bytesPerServerState} B of state per server + ${REPLAY_KEPT_SECONDS / INTERVAL_SECONDS} heartbeats' replay entries × ${memory.replayBytesPerHeartbeat} B = ${memory.bytesPerLiveServer} B per live server at a ${INTERVAL_SECONDS} s interval`);
  const eventsToFlush = (phases.heartbeat!.ops + 400) * EVENTS_PER_HEARTBEAT; // with the warm-up's

  const cachedUsers = Math.ceil(args.doorChecks / (DOORS * CACHED_CHECKS_PER_PAIR));
  let u = 0;
  await cannon([signedPost(game, '/api/v1/game/doors/bulk', () => `{"externalId":"cached-${u++ % cachedUsers}","externalServerId":"bench-s"}`)], cachedUsers);
  let pair = 0;
  await phase('door cached', [signedPost(game, '/api/v1/game/doors/check', () => {
    const p = pair++ % (cachedUsers * DOORS);
    return `{"doorKey":"gate-${p % DOORS}","externalId":"cached-${Math.floor(p / DOORS)}","externalServerId":"bench-s"}`;
  })], args.doorChecks);
  let cold = 0;
  await phase('door cold', [signedPost(game, '/api/v1/game/doors/check', () => {
    const p = cold++;
    return `{"doorKey":"gate-${p % DOORS}","externalId":"cold-${runId}-${Math.floor(p / DOORS)}","externalServerId":"bench-s"}`;
  })], args.doorChecks);
  let ban = 0;
  await phase('ban check', [signedPost(game, '/api/v1/game/bans/check', () => `{"externalId":"ban-${runId}-${ban++}","externalServerId":"bench-s"}`)], args.banChecks);

  // 5. one event flusher
  const flushBefore = await readRedis(stats);
  const worker = start('worker', NODE, ['--import', 'tsx', 'workers/index.ts'], { ...env, WORKER_ROLES: 'flush-events', WORKER_NICE: '0' });
  let firstAt = 0;
  let lastCount = eventsBefore;
  let lastAt = 0;
  const flushDeadline = Date.now() + 120_000;
  while (Date.now() < flushDeadline) {
    const n = await db.playerEvent.count({ where: { gameId: game.gameId } });
    if (n > eventsBefore && !firstAt) firstAt = Date.now();
    if (n > lastCount) {
      lastCount = n;
      lastAt = Date.now();
    }
    if (n - eventsBefore >= eventsToFlush) break;
    // no new row for 10 s after the first: the rest is not coming (reported below)
    if (firstAt && Date.now() - lastAt > 10_000) break;
    await sleep(100);
  }
  const flushAfter = await readRedis(stats);
  const flushed = lastCount - eventsBefore;
  await stop(worker);
  const flush = {
    events: flushed,
    seconds: firstAt ? (lastAt - firstAt) / 1000 : 0,
    eventsPerSecond: firstAt && lastAt > firstAt ? Math.round(flushed / ((lastAt - firstAt) / 1000)) : 0,
    redisCpuUsPerEvent: Math.round((((flushAfter.cpuMain - flushBefore.cpuMain) * 1e6) / Math.max(flushed, 1)) * 10) / 10,
  };
  if (flushed < eventsToFlush) process.stderr.write(`[bench] flush: ${flushed} of ${eventsToFlush} events reached Postgres within the time allowed\n`);

  // 6. 1 → 2 API processes
  let ratio: Record<string, unknown> | undefined;
  if (!opts['skip-ratio']) {
    const cpuOf = () => ({ apis: apis.map((a) => cpuSecondsOf(a.pid!)), self: process.cpuUsage() });
    const run = async (n: 1 | 2) => {
      const bodies = heartbeatBodies(game, `${runId}-r${n}`);
      const r0 = await readRedis(stats);
      const c0 = cpuOf();
      const t0 = Date.now();
      const runs = await Promise.all(
        Array.from({ length: n }, (_, i) => autocannon({ url: url(i), connections: Math.max(1, Math.round(args.connections / n)), duration: args.ratioDuration, requests: [signedPost(game, '/api/v1/game/heartbeat', bodies)] })),
      );
      const seconds = (Date.now() - t0) / 1000;
      const c1 = cpuOf();
      const r1 = await readRedis(stats);
      const ok = runs.reduce((s, r) => s + okCount(r), 0);
      const self = process.cpuUsage(c0.self);
      return {
        rps: Math.round(ok / seconds),
        cores: {
          api: Math.round((c1.apis.reduce((s, x, i) => s + x - c0.apis[i]!, 0) / seconds) * 100) / 100,
          redis: Math.round(((r1.cpuAll - r0.cpuAll) / seconds) * 100) / 100,
          loadGenerator: Math.round(((self.user + self.system) / 1e6 / seconds) * 100) / 100,
        },
        non200: runs.reduce((s, r) => s + r.non2xx + r.errors, 0),
      };
    };
    const one = await run(1);
    const two = await run(2);
    ratio = { one, two, ratio: Math.round((two.rps / Math.max(one.rps, 1)) * 100) / 100, cpus: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100) };
  }

  const result = { machine: { cpus: os.cpus().length, loadavg: os.loadavg() }, memory, phases, flush, ratio };
  if (opts.json) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    say('');
    say('| operation | ops | req/s (1 API) | API CPU µs/op | Redis CPU µs/op (main thread) | Redis CPU µs/op (all threads) | Redis commands/op (scripts and the commands they call) | most frequent |');
    say('| --- | --- | --- | --- | --- | --- | --- | --- |');
    const f = (x: number) => x.toFixed(1);
    for (const [name, p] of Object.entries(phases)) say(`| ${name} | ${p.ops} | ${p.rps} | ${p.apiCpuUsPerOp} | ${f(p.cpuUsPerOp)} | ${f(p.cpuAllUsPerOp)} | ${f(p.commandsPerOp)} | ${Object.entries(p.byCommand).map(([c, n]) => `${c} ${n}`).join(', ')} |`);
    say('');
    say(`memory per live server (30 players, ${INTERVAL_SECONDS} s interval): ${memory.bytesPerLiveServer} B (${memory.bytesPerServerState} B state + ${REPLAY_KEPT_SECONDS / INTERVAL_SECONDS} × ${memory.replayBytesPerHeartbeat} B left per heartbeat outside the streams)`);
    say(`events/s per flusher (one worker process, flush-events only): ${flush.eventsPerSecond} (${flush.events} events in ${flush.seconds.toFixed(1)} s), Redis CPU ${flush.redisCpuUsPerEvent} µs per event flushed`);
    if (ratio) say(`1→2 API processes (heartbeats, ${args.connections} connections, ${args.ratioDuration} s each): ${JSON.stringify(ratio)}`);
    say(`machine: ${os.cpus().length} CPUs, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  }
} finally {
  await cleanup();
}
