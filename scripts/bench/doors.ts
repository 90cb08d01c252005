/**
 * scripts/bench/doors.ts — load benchmark of the door endpoints (issue #5; not a test).
 *
 * Usage:  node_modules/.bin/tsx scripts/bench/doors.ts [--duration 8] [--connections 50] [--warmup 2]
 *             [--rounds 3] [--rate-fractions 0.5,0.8] [--light-rate 200] [--only cached,cold,bulk]
 *             [--prefix gisbenchdoors] [--cpu-prof] [--json]
 *
 * One run (~8 min, a third of it seeding):
 *   1. Seeds, in the dev database and under a dedicated Redis prefix: a workspace (scripts/fixtures.ts)
 *      with an org tree (3 organizations, 12 units up to 4 deep, 24 positions), ~104,000 members with
 *      positions, open shifts, records and tenure, a running operation; one game with an all-scope key and
 *      50 doors of 50 policies each (every subject type, every condition, denies and allows).
 *   2. Starts, the way scripts/bench/heartbeat.ts does, the API (src/server.ts) and the heartbeat ceiling
 *      of the core benchmark (scripts/bench/baseline-server.ts: raw body + HMAC + JSON.parse of a 3.9 KB
 *      heartbeat, nothing else).
 *   3. Drives them with autocannon and freshly signed requests:
 *        cached   POST doors/check, every (user, door) pair warmed by a bulk check first: cache hits;
 *                 alternated --rounds times with the ceiling (medians), so other load on the machine
 *                 weighs on both alike; every signing key used once beforehand (argon2);
 *        cold     POST doors/check for pairs never checked: replay claim + cache miss + the member's rows
 *                 from Postgres + evaluation of 50 policies + cache write;
 *        bulk     POST doors/bulk for users never checked: 50 doors × 50 policies, one subject load.
 *      Each at full speed (--connections, --duration s) for checks/s and the child's CPU µs per answer
 *      (from /proc: robust to other load); each full-speed round is followed by latency runs at each of
 *      --rate-fractions of the speed it reached (per fraction the median p99 of the rounds, with the
 *      range), and a last run at --light-rate/s, as an open-loop load with evenly spaced arrivals
 *      (scripts/support/paced-load.ts). The issue gives its p99 targets no load: the runs show them
 *      across loads.
 *   3b. p99 ratio (issue #20): in each round, the ceiling's own maximum with the scenario's body shape
 *      (a check, or a bulk check), then per fraction a ceiling run at that fraction of its maximum before
 *      the scenario's latency run; prints `p99 ratio = scenario p99 / ceiling p99` per run and the median
 *      (BENCH `<scenario>_p99_ratio_<pct>`; target ≤ 1.5).
 *   4. Prints the figures and one greppable line `BENCH doors ...`. Targets (issue #5): a cached check at
 *      ≥ 80 % of the ceiling with p99 ≤ 5 ms; a cold evaluation with 50 policies at p99 ≤ 20 ms.
 * `--only` picks door scenarios; `--cpu-prof` writes a V8 CPU profile of the API child to
 * `.data/bench-profiles/` (Chrome DevTools › Performance). Everything it created is removed afterwards
 * (also on failure or Ctrl-C).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Prisma } from '@prisma/client';
import { cleanFixtures, deleteByPattern, initialRoster, MAX_PLAYERS, seedFixtures, type SeededGame } from '../fixtures.js';
import { loadConfig } from '../../src/config.js';
import { createRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { createDb, type Db } from '../../src/store/prisma.js';
import { sign } from '../../src/auth/signature.js';
import { createDoor } from '../../src/doors/door-admin-service.js';
import { createKey } from '../../src/auth/key-service.js';
import { incrementDoorsVersion } from '../../src/doors/doors-version.js';
import { raiseDoorsVersion } from '../../src/store/lua/raise-doors-version.js';
import { parseConditions } from '../../src/doors/policy-conditions.js';
import type { AppRedis } from '../../src/store/redis.js';
import { freePort } from '../support/free-port.js';
import { startNodeScript, type ManagedChild } from '../support/child-process.js';
import { parseCli } from '../support/cli-args.js';
import { autocannon, type AcInstance } from '../support/autocannon.js';
import { pacedLoad } from '../support/paced-load.js';
import { percentile } from '@gis/client';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOORS = 50;
const POLICIES_PER_DOOR = 50;
const CACHED_USERS = 400;
/** Keys the cached scenario signs with (see the door-check quota note there). */
const CHECK_KEYS = 10;
/** Enough never-checked pairs (× 50 doors) for every cold phase (warm-up, 3 full-speed rounds with latency runs at 50 and 80 %, light) at ~2,600 cold checks/s. */
const COLD_USERS = 4000;
/** Enough never-checked users for every bulk phase (as for the cold ones) at ~1,500 bulk checks/s. */
const BULK_USERS = 100000;
const DAY_MS = 86_400_000;

// ── arguments ─────────────────────────────────────────────────────────────────────────────────────────
function parseArgs(argv: string[]) {
  const cli = parseCli(
    'usage: npm run bench:doors -- [--duration 8] [--connections 50] [--warmup 2] [--rate-fractions 0.5,0.8] [--light-rate 200] [--rounds 3] [--prefix gisbenchdoors] [--only cached,cold,bulk] [--cpu-prof] [--json]',
    {
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      warmup: { type: 'string' },
      'rate-fractions': { type: 'string' },
      'light-rate': { type: 'string' },
      rounds: { type: 'string' },
      prefix: { type: 'string' },
      only: { type: 'string' },
      'cpu-prof': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    },
    argv,
  );
  const flags = new Map(Object.entries(cli.values).filter(([, v]) => v !== undefined && v !== false).map(([k, v]) => [k, String(v)]));
  const num = (name: string, dflt: number, min: number, max: number): number => cli.number(name, dflt, min, max);
  const prefix = flags.get('prefix') ?? 'gisbenchdoors';
  if (prefix === 'gis') throw new Error('--prefix gis is the application prefix; use a dedicated one');
  const only = new Set((flags.get('only') ?? 'cached,cold,bulk').split(','));
  for (const o of only) if (!['cached', 'cold', 'bulk'].includes(o)) throw new Error(`--only takes cached, cold, bulk`);
  return {
    duration: num('duration', 8, 1, 600),
    connections: Math.round(num('connections', 50, 1, 1000)),
    warmup: num('warmup', 2, 0, 60),
    rateFractions: (flags.get('rate-fractions') ?? '0.5,0.8').split(',').map((f) => {
      const v = Number(f);
      if (!(v >= 0.05 && v <= 1)) throw new Error('--rate-fractions takes numbers from 0.05 to 1, comma-separated');
      return v;
    }),
    lightRate: Math.round(num('light-rate', 200, 1, 100_000)),
    rounds: Math.round(num('rounds', 3, 1, 20)),
    prefix,
    only,
    cpuProf: flags.has('cpu-prof'),
    json: flags.has('json'),
  };
}

// ── children ──────────────────────────────────────────────────────────────────────────────────────────
const log = (line: string) => process.stdout.write(`${line}\n`);

/** `<node> --import tsx <script>` listening on `port` (scripts/support/child-process.ts); resolves once /healthz answers. */
async function startChild(name: string, script: string, port: number, env: Record<string, string>, nodeArgs: string[] = []): Promise<ManagedChild> {
  const child = startNodeScript(name, script, { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, nodeArgs });
  await child.waitForUrl(`http://127.0.0.1:${port}/healthz`);
  return child;
}

// ── fixtures: org, members, doors and policies ────────────────────────────────────────────────────────
/** Deterministic pseudo-random numbers, so every run evaluates the same policies. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

const userId = (kind: 'c' | 'x' | 'b', n: number) => `bench-${kind}${n}`;

async function seedDoors(db: Db, redis: AppRedis, keySpace: KeySpace, workspaceId: string, gameId: string): Promise<string[]> {
  const rand = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const now = Date.now();
  const orgs: { id: string }[] = [];
  for (let i = 0; i < 3; i++) orgs.push(await db.organization.create({ data: { workspaceId, name: `bench org ${i}` } }));
  const units: { id: string }[] = [];
  for (let i = 0; i < 12; i++) {
    const parentId = i < 3 ? null : units[Math.floor((i - 3) / 3)]!.id; // 3 roots, then 3 levels below
    units.push(await db.unit.create({ data: { workspaceId, name: `bench unit ${i}`, parentId, organizationId: i < 3 ? orgs[i]!.id : null } }));
  }
  const positions: { id: string }[] = [];
  for (let i = 0; i < 24; i++) positions.push(await db.position.create({ data: { workspaceId, unitId: units[i % units.length]!.id, name: `bench position ${i}` } }));
  const externalIds = [
    ...Array.from({ length: CACHED_USERS }, (_, n) => userId('c', n)),
    ...Array.from({ length: COLD_USERS }, (_, n) => userId('x', n)),
    ...Array.from({ length: BULK_USERS }, (_, n) => userId('b', n)),
  ];
  await db.member.createMany({ data: externalIds.map((externalId, n) => ({ workspaceId, externalId, joinedAt: new Date(now - (n % 400) * DAY_MS) })) });
  const members = await db.member.findMany({ where: { workspaceId }, select: { id: true } });
  await db.assignment.createMany({ data: members.flatMap((m, n) => [{ memberId: m.id, positionId: positions[n % 24]!.id }, ...(n % 3 === 0 ? [{ memberId: m.id, positionId: positions[(n * 7) % 24]!.id }] : [])]), skipDuplicates: true });
  await db.shift.createMany({ data: members.filter((_, n) => n % 2 === 0).map((m) => ({ workspaceId, memberId: m.id, openedAt: new Date(now - 3_600_000) })) });
  await db.memberRecord.createMany({ data: members.filter((_, n) => n % 5 === 0).map((m, n) => ({ workspaceId, memberId: m.id, type: n % 2 ? 'warning' : 'strike', issuedAt: new Date(now - DAY_MS), expiresAt: new Date(now + 30 * DAY_MS) })) });
  await db.operation.create({ data: { workspaceId, type: 'raid', title: 'bench raid', startsAt: new Date(now - 3_600_000), endsAt: new Date(now + 6 * 3_600_000) } });

  const deps = { db, redis, keySpace };
  const doorKeys: string[] = [];
  const policies: Prisma.DoorPolicyCreateManyInput[] = [];
  for (let d = 0; d < DOORS; d++) {
    const key = `bench-door-${String(d).padStart(2, '0')}`;
    const door = await createDoor(deps, { gameId, key, name: `Bench door ${d}`, kind: pick(['door', 'locker', 'spawner', 'zone']), defaultEffect: d % 4 ? 'deny' : 'allow' }, 'bench');
    doorKeys.push(door.key);
    const doorId = (await db.door.findUniqueOrThrow({ where: { gameId_key: { gameId, key } }, select: { id: true } })).id;
    for (let p = 0; p < POLICIES_PER_DOOR; p++) {
      const kind = p % 10;
      const conditions =
        kind === 5 ? { clockedIn: true }
        : kind === 6 ? { noActiveRecordType: 'strike', minTenureDays: 30 }
        : kind === 7 ? { operationType: 'raid' }
        : kind === 8 ? { timeWindow: { days: ['mon', 'tue', 'wed', 'thu', 'fri'] as const, from: '06:00', to: '22:00', timeZone: 'Europe/Paris' } }
        : {};
      const subject =
        kind < 3 ? { subjectType: 'positions', subjectIds: [pick(positions).id, pick(positions).id] }
        : kind < 5 ? { subjectType: 'units', subjectIds: [pick(units).id], includeDescendants: kind === 4 }
        : kind === 9 ? { subjectType: 'users', subjectIds: Array.from({ length: 20 }, () => userId(pick(['c', 'x', 'b'] as const), Math.floor(rand() * 2000))) }
        : rand() < 0.5 ? { subjectType: 'organizations', subjectIds: [pick(orgs).id] }
        : { subjectType: 'everyone', subjectIds: [] };
      policies.push({ doorId, effect: p % 7 === 3 ? 'deny' : 'allow', priority: Math.floor(rand() * 10), conditions: parseConditions(conditions) as Prisma.InputJsonValue, ...subject });
    }
  }
  await db.doorPolicy.createMany({ data: policies });
  // Fresh statistics after the bulk inserts, as a live database would have (else the planner may scan).
  await db.$executeRawUnsafe('ANALYZE "Member", "Assignment", "Position", "Unit", "Shift", "MemberRecord", "Operation", "Door", "DoorPolicy"');
  // Policies were inserted in bulk: raise the doors version once, as a policy change through the service would.
  const version = await db.$transaction((tx) => incrementDoorsVersion(tx, gameId));
  await raiseDoorsVersion(redis, keySpace, gameId, version);
  return doorKeys;
}

// ── load ──────────────────────────────────────────────────────────────────────────────────────────────
interface Stats {
  rps: number;
  /** CPU time the driven child spent per 200 answer, µs (robust to other load on the machine). */
  cpuUs: number;
  /** CPU time this process (the load generator: signing, sending, reading) spent per answer, µs. */
  loadCpuUs: number;
  /** The paced load's own event-loop delay, ms (latency runs only; see paced-load.ts). */
  loadLoopMaxMs: number;
  p50: number;
  p99: number;
  non200: number;
  cachedShare: number;
  samples: string[];
}

let current: AcInstance | null = null;

/** CPU seconds (user + system) process `pid` has used, from /proc (Linux); 0 where unavailable. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime in clock ticks (USER_HZ = 100)
  } catch {
    return 0;
  }
}

/**
 * Drives `port` (served by process `pid`) with requests built by `next` (path and body; signed here with
 * `game`'s secret).
 */
/** One request to send: path, body, and the key that signs it (default: the game's first key). */
interface BenchRequest {
  path: string;
  body: string;
  key?: BenchKey;
}

/** A server key as the bench signs with it. */
interface BenchKey {
  key: string;
  secret: string;
}

async function drive(port: number, pid: number | undefined, game: SeededGame, next: () => BenchRequest, opts: { connections: number; duration: number; overallRate?: number }): Promise<Stats> {
  const cpuBefore = cpuSeconds(pid);
  const loadBefore = process.cpuUsage();
  let ok = 0;
  let non200 = 0;
  let cached = 0;
  const samples: string[] = [];
  const signed = () => {
    const { path: p, body, key = game } = next();
    const ts = String(Math.floor(Date.now() / 1000));
    return { path: p, body, headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(key.secret, ts, body) } };
  };
  const onResponse = (status: number, body: string) => {
    if (status === 200) {
      ok++;
      if (body.includes('"cached":true')) cached++;
    } else {
      non200++;
      if (samples.length < 3) samples.push(`${status} ${body.slice(0, 200)}`);
    }
  };
  let seconds: number;
  let p50: number;
  let p99: number;
  let failed: number;
  let loadLoopMaxMs = NaN;
  if (opts.overallRate) {
    // Latency runs: evenly spaced arrivals (autocannon's fixed rate sends each second's quota as a burst).
    const r = await pacedLoad({ port, rate: opts.overallRate, duration: opts.duration, connections: opts.connections, next: () => ({ method: 'POST', ...signed() }), onResponse });
    seconds = r.seconds;
    p50 = percentile(r.latenciesMs, 50);
    p99 = percentile(r.latenciesMs, 99);
    failed = r.errors;
    loadLoopMaxMs = r.loopDelayMaxMs;
  } else {
    current = autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: opts.connections,
      duration: opts.duration,
      timeout: 10,
      requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, ...signed() }), onResponse }],
    });
    const r = await current;
    current = null;
    seconds = r.duration;
    p50 = r.latency.p50;
    p99 = r.latency.p99;
    failed = r.errors + r.timeouts;
  }
  const cpuUs = ok ? ((cpuSeconds(pid) - cpuBefore) * 1e6) / ok : NaN;
  const load = process.cpuUsage(loadBefore);
  const loadCpuUs = ok + non200 ? (load.user + load.system) / (ok + non200) : NaN;
  return { rps: ok / seconds, cpuUs, loadCpuUs, loadLoopMaxMs, p50, p99, non200: non200 + failed, cachedShare: ok ? cached / ok : 0, samples };
}

/** One request outside autocannon, signed with `key`. @throws when the answer is not a 200. */
async function post(port: number, key: BenchKey, req: { path: string; body: string }): Promise<void> {
  const ts = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`http://127.0.0.1:${port}${req.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(key.secret, ts, req.body) },
    body: req.body,
  });
  if (res.status !== 200) throw new Error(`${req.path}: ${res.status} ${await res.text()}`);
}

const fmt = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'NaN');

/** Latency at a fraction of the maximum: the round with the median p99, and the range over the rounds, ms. */
interface AtLoad extends Stats {
  fraction: number;
  p99Min: number;
  p99Max: number;
}

function report(label: string, max: Stats, ats: AtLoad[], light: Stats | null): void {
  const lat = (name: string, x: Stats) => ` | ${name} ${fmt(x.rps, 0)}/s: p50 ${fmt(x.p50)} ms p99 ${fmt(x.p99)} ms`;
  const gen = (x: Stats) => ` (load generator ${fmt(x.loadCpuUs, 0)} µs CPU each, its event loop stalled up to ${fmt(x.loadLoopMaxMs, 0)} ms)`;
  const atText = ats.map((a) => `${lat(`${fmt(100 * a.fraction, 0)}%`, a)} (rounds ${fmt(a.p99Min)}–${fmt(a.p99Max)})${gen(a)}`).join('');
  const all = [max, ...ats, ...(light ? [light] : [])];
  log(`${label.padEnd(8)} max ${fmt(max.rps, 0)}/s (${fmt(max.cpuUs, 0)} µs CPU each) p50 ${fmt(max.p50)} ms p99 ${fmt(max.p99)} ms${atText}${light ? lat('light', light) + gen(light) : ''}` +
    ` | from cache ${fmt(100 * max.cachedShare, 1)}% | non-200 ${all.reduce((n, x) => n + x.non200, 0)}`);
  for (const s of all.flatMap((x) => x.samples)) log(`         sample: ${s}`);
}

/** The run with the median `by` (default: throughput). */
function median(runs: Stats[], by: (s: Stats) => number = (s) => s.rps): Stats {
  return [...runs].sort((a, b) => by(a) - by(b))[Math.floor(runs.length / 2)]!;
}

/** A 3.9 KB heartbeat like the core benchmark's (30 players, 5 events), unique per call. */
function heartbeatFactory(sid: string): () => BenchRequest {
  const roster = JSON.stringify(initialRoster(sid));
  let n = 0;
  return () => {
    n++;
    const at = new Date().toISOString();
    const events = [0, 1, 2, 3, 4].map((k) => `{"eventId":"hb-${n}-${k}","type":"death","externalId":"${sid}-p${k}","occurredAt":"${at}","payload":{"weapon":"rifle_mk${k}","damage":${(n * 7 + k) % 100},"headshot":${k % 2 === 0},"pos":{"x":${(n % 512) + 0.5},"y":${k * 3.25},"z":-8.75},"round":${n % 30},"match":"${sid}-match"}}`).join(',');
    return { path: '/api/v1/game/heartbeat', body: `{"externalServerId":"${sid}","externalScopeId":"bench-place-1","playerCount":30,"maxPlayers":${MAX_PLAYERS},"sdkVersion":"1.0.0-bench","uptimeSeconds":${n},"region":"bench-eu","players":${roster},"events":[${events}],"acks":[]}` };
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const config = loadConfig({ ...process.env, REDIS_PREFIX: args.prefix });
  const keySpace = new KeySpace(config.redisPrefix);
  const redis = createRedis(config.redisUrl, { name: 'bench-doors' });
  const db = createDb(config.databaseUrl, 2);
  const children: ManagedChild[] = [];
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    current?.stop();
    await Promise.allSettled(children.map((c) => c.stop(8000)));
    const r = await cleanFixtures({ prefix: args.prefix }).catch((err: unknown) => (process.stderr.write(`cleanup failed: ${String(err)}\n`), null));
    const keys = await deleteByPattern(redis, keySpace.scanPattern());
    log(`cleaned: ${r?.workspaces ?? 0} workspace(s), ${(r?.redisKeys ?? 0) + keys} Redis key(s)`);
    await Promise.allSettled([redis.quit(), db.$disconnect()]);
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

  try {
    await cleanFixtures({ prefix: args.prefix });
    await deleteByPattern(redis, keySpace.scanPattern());
    log(`seeding: ${DOORS} doors × ${POLICIES_PER_DOOR} policies, ${CACHED_USERS + COLD_USERS + BULK_USERS} members (prefix ${args.prefix})`);
    const fx = await seedFixtures({ prefix: args.prefix, games: 1, servers: 1 });
    const game = fx.games[0]!;
    const doors = await seedDoors(db, redis, keySpace, fx.workspaceId, game.gameId);

    const [apiPort, basePort] = [await freePort(), await freePort()];
    // A TTL and a shared-cache window longer than the run, so the warmed decisions are still cached when measured.
    const profDir = path.join(ROOT, '.data/bench-profiles');
    const profArgs = args.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=doors-api-${Date.now()}.cpuprofile`] : [];
    const apiEnv = { REDIS_PREFIX: args.prefix, LOG_LEVEL: 'warn', DOOR_CACHE_TTL_SECONDS: '600', DOOR_DECISION_WINDOW_SECONDS: '600', CONSOLE_PORT: String(await freePort()) };
    children.push(await startChild('api', 'src/server.ts', apiPort, apiEnv, profArgs));
    children.push(await startChild('baseline', 'scripts/bench/baseline-server.ts', basePort, { BENCH_SECRET: game.secret }));
    const [api, baseline] = children as [ManagedChild, ManagedChild];
    const full = { connections: args.connections, duration: args.duration };
    const checkOf = (user: string, door: string) => ({ path: '/api/v1/game/doors/check', body: `{"doorKey":"${door}","externalId":"${user}","externalServerId":"bench-s"}` });
    const bulkOf = (user: string) => ({ path: '/api/v1/game/doors/bulk', body: `{"externalId":"${user}","externalServerId":"bench-s"}` });
    const ceilingLoad = { label: 'ceiling', child: baseline, port: basePort, next: heartbeatFactory(game.servers[0]!) };

    /**
     * Full-speed runs of `loads`, interleaved for --rounds rounds (other load on the machine then
     * affects all alike; medians are reported). Each round ends with latency runs of the first load at
     * each of --rate-fractions of the speed it just reached: the same build's maximum moved between
     * 5,133 and 8,448/s within fifteen minutes here, so a fraction of a maximum measured earlier can
     * exceed what the machine serves by the time the latency run starts. Per fraction the round with the median p99 is reported,
     * with the range. Then one run at --light-rate.
     */
    const measure = async (loads: { label: string; child: ManagedChild; port: number; next: () => BenchRequest }[], ceilingNext: () => BenchRequest) => {
      for (const l of loads) if (args.warmup) await drive(l.port, l.child.proc.pid, game, l.next, { ...full, duration: args.warmup });
      const runs = loads.map(() => [] as Stats[]);
      const latency = args.rateFractions.map(() => [] as Stats[]);
      const p99Ratios = args.rateFractions.map(() => [] as number[]);
      const l = loads[0]!;
      for (let r = 0; r < args.rounds; r++) {
        for (const [i, x] of loads.entries()) runs[i]!.push(await drive(x.port, x.child.proc.pid, game, x.next, full));
        // The ceiling's own maximum with this endpoint's body, for the p99 ratio (issue #20).
        const ceilingMax = await drive(basePort, baseline.proc.pid, game, ceilingNext, full);
        for (const [i, f] of args.rateFractions.entries()) {
          const c = await drive(basePort, baseline.proc.pid, game, ceilingNext, { ...full, overallRate: Math.max(1, Math.round(ceilingMax.rps * f)) });
          const sv = await drive(l.port, l.child.proc.pid, game, l.next, { ...full, overallRate: Math.max(1, Math.round(runs[0]![r]!.rps * f)) });
          latency[i]!.push(sv);
          p99Ratios[i]!.push(sv.p99 / c.p99);
          log(`${l.label} at ${fmt(100 * f, 0)}%: p99 ${fmt(sv.p99)} ms / ceiling p99 ${fmt(c.p99)} ms at ${fmt(100 * f, 0)}% of its ${fmt(ceilingMax.rps, 0)}/s = p99 ratio ${fmt(sv.p99 / c.p99)}`);
        }
      }
      for (const [i, f] of args.rateFractions.entries()) {
        const sorted = [...p99Ratios[i]!].sort((a, b) => a - b);
        log(`${l.label} p99 ratio at ${fmt(100 * f, 0)}% of max = ${fmt(sorted[Math.floor((sorted.length - 1) / 2)]!)} (median of ${sorted.length}; target ≤ 1.5)`);
      }
      const max = runs.map((r) => median(r));
      const ats: AtLoad[] = latency.map((rounds, i) => {
        const p99s = rounds.map((x) => x.p99);
        return { ...median(rounds, (x) => x.p99), fraction: args.rateFractions[i]!, p99Min: Math.min(...p99s), p99Max: Math.max(...p99s) };
      });
      const light = await drive(l.port, l.child.proc.pid, game, l.next, { ...full, overallRate: args.lightRate });
      for (const [i, m] of max.entries()) report(loads[i]!.label, m, i === 0 ? ats : [], i === 0 ? light : null);
      const p99Ratio = p99Ratios.map((xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!);
      return { max: max[0]!, others: max.slice(1), ats, light, p99Ratio };
    };
    const line: string[] = [];
    /** `p99 X ms at 50% load, Y ms at 80% load, Z ms at 200/s` and its greppable `name_p99_50_ms=X …` fields. */
    const latencyText = (r: { ats: AtLoad[]; light: Stats }) => `p99 ${r.ats.map((a) => `${fmt(a.p99)} ms at ${fmt(100 * a.fraction, 0)}% load, `).join('')}${fmt(r.light.p99)} ms at ${args.lightRate}/s`;
    const latencyFields = (name: string, r: { ats: AtLoad[]; light: Stats; p99Ratio: number[] }) =>
      `${r.ats.map((a, i) => `${name}_p99_${fmt(100 * a.fraction, 0)}_ms=${fmt(a.p99)} ${name}_p99_ratio_${fmt(100 * a.fraction, 0)}=${fmt(r.p99Ratio[i]!)} `).join('')}${name}_light_p50_ms=${fmt(r.light.p50)} ${name}_light_p99_ms=${fmt(r.light.p99)}`;
    /** The ceiling's request for a p99 ratio: the endpoint's own body shape, signed with the key it knows. */
    const ceilingCheck = () => checkOf(userId('c', 0), doors[0]!);

    if (args.only.has('cached')) {
      // every (cached user, door) pair warmed with one bulk check per user, then checked round-robin
      for (let u = 0; u < CACHED_USERS; u += 20) {
        await Promise.all(Array.from({ length: Math.min(20, CACHED_USERS - u) }, (_, k) => post(apiPort, game, bulkOf(userId('c', u + k)))));
      }
      // The door-check quota allows 10 checks per (key, user, door) per window (src/limits/quotas.ts): the
      // triples are spread over CHECK_KEYS keys so none is checked more than a few times in the run.
      const keys: BenchKey[] = [game];
      for (let k = 1; k < CHECK_KEYS; k++) {
        const created = await createKey(db, game.gameId, ['doors'], 'bench-doors');
        keys.push({ key: created.key, secret: created.key.slice(created.key.indexOf('.') + 1) });
      }
      // A key's first use costs one argon2 verify (~130 ms of a core, src/auth/key-verifier.ts): paid here,
      // not inside a measured run.
      for (const k of keys) await post(apiPort, k, bulkOf(userId('c', 0)));
      let triple = 0;
      const cachedLoad = { label: 'cached', child: api, port: apiPort, next: () => {
        const i = triple++;
        return { ...checkOf(userId('c', i % CACHED_USERS), doors[Math.floor(i / CACHED_USERS) % DOORS]!), key: keys[Math.floor(i / (CACHED_USERS * DOORS)) % CHECK_KEYS] };
      } };
      const cached = await measure([cachedLoad, ceilingLoad], ceilingCheck);
      const ceiling = cached.others[0]!;
      const ratio = cached.max.rps / ceiling.rps;
      const cpuRatio = ceiling.cpuUs / cached.max.cpuUs;
      log(`cached single check: ${fmt(100 * ratio, 0)}% of the heartbeat ceiling by throughput, ${fmt(100 * cpuRatio, 0)}% by CPU per request (target ≥ 80%); ${latencyText(cached)} (target ≤ 5 ms)`);
      line.push(`ceiling_rps=${fmt(ceiling.rps, 0)} ceiling_cpu_us=${fmt(ceiling.cpuUs, 0)} cached_rps=${fmt(cached.max.rps, 0)} cached_cpu_us=${fmt(cached.max.cpuUs, 0)} cached_ratio=${fmt(ratio, 3)} cached_cpu_ratio=${fmt(cpuRatio, 3)} cached_hit=${fmt(cached.max.cachedShare, 3)} ${latencyFields('cached', cached)}`);
    }

    if (args.only.has('cold')) {
      // pairs never checked before: each cold user × every door, in order
      let coldPair = 0;
      const cold = await measure([{ label: 'cold', child: api, port: apiPort, next: () => {
        const i = coldPair++;
        return checkOf(userId('x', i % COLD_USERS), doors[Math.floor(i / COLD_USERS) % DOORS]!);
      } }], ceilingCheck);
      if (coldPair > COLD_USERS * DOORS) log(`warning: ${coldPair} cold checks for ${COLD_USERS * DOORS} pairs; later ones were cache hits`);
      log(`cold evaluation, 50 policies: ${latencyText(cold)} (target ≤ 20 ms)`);
      line.push(`cold_rps=${fmt(cold.max.rps, 0)} cold_cpu_us=${fmt(cold.max.cpuUs, 0)} cold_hit=${fmt(cold.max.cachedShare, 3)} ${latencyFields('cold', cold)}`);
    }

    if (args.only.has('bulk')) {
      let bulkUser = 0;
      const bulk = await measure([{ label: 'bulk', child: api, port: apiPort, next: () => bulkOf(userId('b', bulkUser++ % BULK_USERS)) }], () => bulkOf(userId('c', 0)));
      if (bulkUser > BULK_USERS) log(`warning: ${bulkUser} bulk checks for ${BULK_USERS} users; later ones were served from the cache`);
      line.push(`bulk50_rps=${fmt(bulk.max.rps, 0)} bulk50_cpu_us=${fmt(bulk.max.cpuUs, 0)} ${latencyFields('bulk50', bulk)}`);
    }
    await baseline.stop(8000);
    log(`BENCH doors ${line.join(' ')}`);
    if (args.json) log(JSON.stringify(Object.fromEntries(line.join(' ').split(' ').filter(Boolean).map((kv) => kv.split('=', 2)))));
    if (args.cpuProf) log(`CPU profile of the API child: ${profDir}/`);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-doors failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
