/**
 * scripts/failover-probe.ts — what a Redis Cluster master failure does to the heartbeat path and to the
 * flush (issue #17, "Failover"; not a test).
 *
 * Usage:  npx tsx scripts/failover-probe.ts [--seconds 40] [--kill-at 10] [--rate 20] [--port 4310]
 *           [--kill game|flush] [--replicas 1|2] [--wait-replicas N] [--compare-wait] [--lag-replica S]
 *           [--hold-flush] [--restart-killed S] [--drain-seconds 60]
 *
 * Starts a private Redis Cluster of 3 masters with --replicas replicas each (scripts/services/cluster.ts;
 * 1: 127.0.0.1:7004–7009, 2: 7001–7009) in a temporary directory (every replica in sync before anything
 * else starts), a worker process and an API process on --port (DATABASE_URL, default the dev database),
 * creates a game and key, and sends signed heartbeats, each with one event of its own, at --rate per
 * second for --seconds. At --kill-at seconds it SIGKILLs the master that owns the game's slot (or, with
 * `--kill flush`, the master of the `{flush-events}` queue); a replica takes over after the cluster's
 * node timeout (5 s).
 *
 *   --wait-replicas N   the API runs with REDIS_WAIT_REPLICAS=N (a heartbeat's 200 waits for N replicas).
 *   --compare-wait      two APIs in the same run: REDIS_WAIT_REPLICAS=0 on --port and =1 on --port+1,
 *                       heartbeats alternating between them; each one's latency and losses are reported
 *                       apart (the latency cost of the setting, measured under the same conditions).
 *   --lag-replica S     S seconds before the kill, SIGSTOP the killed master's replica and close its
 *                       replication link on the master (CLIENT KILL TYPE replica), SIGCONT it right after the
 *                       kill: for S seconds the master acknowledges writes no replica receives (a partition
 *                       or a stalled replica), which asynchronous replication loses when the master dies.
 *   --hold-flush        the flush-events role starts only once the load has ended (events wait in Redis, as
 *                       during a Postgres outage or a flush backlog), so every accepted event that the failover
 *                       loses shows as missing; without it the flusher has moved most of them already.
 *   --restart-killed S  restart the killed node S seconds after the kill, once another node serves its slots
 *                       (it rejoins as a replica of the new master), as an orchestrator would; with one replica
 *                       per master and REDIS_WAIT_REPLICAS=1 that shard has no replica until then.
 *   --drain-seconds D   how long to wait for the workers to store every event answered 200 (default 60).
 *
 * Prints, per API: the statuses per second around the failover, the window of non-200 answers, the
 * Retry-After values, the latency p50/p99 of the undisturbed heartbeats (after a 3 s warm-up, answered
 * before the lag or the kill) and the slowest answer, and — once the workers have flushed or D seconds passed — how many
 * events answered 200 are missing from Postgres (the loss) and how many answered non-200 were stored
 * anyway; one `BENCH failover …` line each. The load average (os.loadavg) at start and end says how busy
 * the machine was. Removes the cluster, the game and its rows afterwards.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config.js';
import { createDb } from '../src/store/prisma.js';
import { createGame, createWorkspace } from '../src/games/game-service.js';
import { createKey } from '../src/auth/key-service.js';
import { sign } from '../src/auth/signature.js';
import { parseCli } from './support/cli-args.js';
import { startNodeScript, waitUntil, type ManagedChild } from './support/child-process.js';
import { clusterPorts, ensureCluster, stopCluster } from './services/cluster.js';
import { ROLES } from '../src/queues/worker-roles.js';

const USAGE =
  'usage: npx tsx scripts/failover-probe.ts [--seconds 40] [--kill-at 10] [--rate 20] [--port 4310] [--kill game|flush] [--replicas 1|2] [--wait-replicas N] [--compare-wait] [--lag-replica S] [--hold-flush] [--restart-killed S] [--drain-seconds 60]';
const cli = parseCli(USAGE, {
  options: {
    seconds: { type: 'string' },
    'kill-at': { type: 'string' },
    rate: { type: 'string' },
    port: { type: 'string' },
    kill: { type: 'string' },
    'wait-replicas': { type: 'string' },
    'compare-wait': { type: 'boolean' },
    'lag-replica': { type: 'string' },
    'hold-flush': { type: 'boolean' },
    'restart-killed': { type: 'string' },
    replicas: { type: 'string' },
    'drain-seconds': { type: 'string' },
  },
});
const seconds = cli.number('seconds', 40, 5, 600);
const killAt = cli.number('kill-at', 10, 1, seconds - 1);
const rate = cli.number('rate', 20, 1, 500);
const port = cli.number('port', 4310, 1024, 65534, { integer: true });
const waitReplicas = cli.number('wait-replicas', 0, 0, 1, { integer: true });
const lagSeconds = cli.number('lag-replica', 0, 0, killAt);
const drainSeconds = cli.number('drain-seconds', 60, 1, 600);
const replicas = cli.number('replicas', 1, 1, 2, { integer: true });
const restartAfter = cli.values['restart-killed'] === undefined ? undefined : cli.number('restart-killed', 0, 0, 600);
const holdFlush = cli.values['hold-flush'] ?? false;
const kill = cli.values.kill ?? 'game';
if (kill !== 'game' && kill !== 'flush') cli.fail(`--kill takes game or flush (got ${kill})`);
if (cli.values['compare-wait'] && cli.values['wait-replicas'] !== undefined) cli.fail('--compare-wait runs both settings; drop --wait-replicas');
// 3 + 3 nodes on 7004–7009 (the test cluster's 7001–7003 stay free); 3 + 6 need all of 7001–7009.
const BASE_PORT = replicas === 2 ? 7001 : 7004;
/** Answers of the first seconds are left out of the latency figures. */
const WARM_UP_MS = 3000;

/** The port of the master serving `slot`, as the node on `port` sees it (undefined when none or unreachable). */
async function slotMaster(port: number, slot: number): Promise<number | undefined> {
  const node = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  node.on('error', () => undefined);
  try {
    await node.connect();
    const rows = (await node.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    return rows.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
  } catch {
    return undefined;
  } finally {
    node.disconnect();
  }
}

interface Api {
  label: string;
  port: number;
  child: ManagedChild;
}
interface Sample {
  i: number;
  api: string;
  t: number;
  status: string;
  ms: number;
  retryAfter: string | null;
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`load average at start: ${load()} (${os.cpus().length} cores)`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-failover-'));
const clusterSpec = { replicas, basePort: BASE_PORT, dir };
const { url: redisUrl } = await ensureCluster(clusterSpec);
const prefix = `gisfailover${process.pid}`;
const config = loadConfig({ ...process.env, REDIS_URL: redisUrl, REDIS_PREFIX: prefix });
const db = createDb(config.databaseUrl, 2);
const env = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix, HOST: '127.0.0.1', CONSOLE_PORT: '0', LOG_LEVEL: 'error' };
const settings = cli.values['compare-wait'] ? [0, 1] : [waitReplicas];
const apis: Api[] = settings.map((n, k) => ({
  label: `wait-replicas=${n}`,
  port: port + k,
  child: startNodeScript(`api-wait${n}`, 'src/server.ts', { env: { ...env, PORT: String(port + k), REDIS_WAIT_REPLICAS: String(n) }, echo: 'none' }),
}));
// info level so that the probe sees "workers up" (only warnings and errors are echoed)
const workerEnv = { ...env, LOG_LEVEL: 'info' };
const otherRoles = Object.keys(ROLES).filter((r) => r !== 'flush-events').join(',');
const workers = startNodeScript('workers', 'workers/index.ts', { env: holdFlush ? { ...workerEnv, WORKER_ROLES: otherRoles } : workerEnv, echo: 'problems' });
let flusher: ManagedChild | undefined;
const ws = await createWorkspace(db, `failover probe ${new Date().toISOString()}`);
let gameId: string | undefined;
const pidOf = (p: number) => Number(fs.readFileSync(path.join(dir, String(p), 'redis.pid'), 'utf8').trim());
let stoppedReplica: number | undefined;
try {
  for (const api of apis) await api.child.waitForUrl(`http://127.0.0.1:${api.port}/readyz`, 90_000);
  await workers.waitForLine(/"message":"workers up"/, 90_000);
  const game = await createGame(db, { workspaceId: ws.id, name: 'failover probe' });
  gameId = game.id;
  const key = await createKey(db, game.id, ['heartbeat', 'events']);
  const secret = key.key.split('.')[1]!;
  const samples: Sample[] = [];
  const send = async (i: number, api: Api, t0: number): Promise<void> => {
    const raw = JSON.stringify({ externalServerId: `s${i % 50}`, playerCount: 0, maxPlayers: 10, sdkVersion: 'failover-probe', uptimeSeconds: i, players: [], events: [{ eventId: `e${i}`, type: 'probe', occurredAt: new Date().toISOString() }], acks: [] });
    const ts = String(Math.floor(Date.now() / 1000));
    const start = Date.now();
    let status: string;
    let retryAfter: string | null = null;
    try {
      const res = await fetch(`http://127.0.0.1:${api.port}/api/v1/game/heartbeat`, {
        method: 'POST',
        signal: AbortSignal.timeout(10_000),
        headers: { Authorization: `Bearer ${key.key}`, 'X-Service-Timestamp': ts, 'X-Service-Signature': sign(secret, ts, raw), 'Content-Type': 'application/json' },
        body: raw,
      });
      await res.arrayBuffer();
      status = String(res.status);
      retryAfter = res.headers.get('retry-after');
    } catch (err) {
      status = err instanceof Error ? err.name : 'error'; // TimeoutError: no answer within 10 s (a hang)
    }
    samples.push({ i, api: api.label, t: start - t0, status, ms: Date.now() - start, retryAfter });
  };
  // The master owning the game's (or the flush queue's) slot and its replica, found before the load starts.
  const probe = new Redis({ host: '127.0.0.1', port: BASE_PORT });
  const victim = kill === 'flush' ? '{flush-events}' : `{g:${game.id}}`;
  const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', victim));
  const shards = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, ...[string, number][]][];
  await probe.quit();
  const shard = shards.find(([from, to]) => slot >= from && slot <= to)!;
  const masterPort = shard[2]![1];
  const replicaPort = shard[3]?.[1];
  const survivorPort = clusterPorts(clusterSpec).find((p) => p !== masterPort && p !== replicaPort)!;
  if (lagSeconds > 0 && replicaPort === undefined) throw new Error(`--lag-replica: CLUSTER SLOTS lists no replica for slot ${slot}`);
  let restarted: Promise<void> | undefined;
  const t0 = Date.now();
  const inFlight: Promise<void>[] = [];
  let killedAt = -1;
  let lagFrom = -1;
  for (let i = 0; Date.now() - t0 < seconds * 1000; i++) {
    const now = Date.now() - t0;
    if (lagSeconds > 0 && lagFrom < 0 && replicaPort && now >= (killAt - lagSeconds) * 1000) {
      lagFrom = now;
      stoppedReplica = pidOf(replicaPort);
      process.kill(stoppedReplica, 'SIGSTOP');
      // The master drops its link to the stopped replica (which cannot reconnect while stopped): from
      // here on the master acknowledges writes that no replica receives, as in a partition between them.
      const master = new Redis({ host: '127.0.0.1', port: masterPort });
      const cut = await master.call('CLIENT', 'KILL', 'TYPE', 'replica');
      master.disconnect();
      console.log(`t=${(now / 1000).toFixed(1)} s: stopped replica 127.0.0.1:${replicaPort} (SIGSTOP) and cut its replication link (${String(cut)} closed)`);
    }
    if (killedAt < 0 && now >= killAt * 1000) {
      killedAt = now;
      process.kill(pidOf(masterPort), 'SIGKILL');
      console.log(`t=${(killedAt / 1000).toFixed(1)} s: killed master 127.0.0.1:${masterPort} (slot ${slot} of ${victim})`);
      if (stoppedReplica) {
        process.kill(stoppedReplica, 'SIGCONT');
        stoppedReplica = undefined;
        console.log(`t=${((Date.now() - t0) / 1000).toFixed(1)} s: resumed replica 127.0.0.1:${replicaPort} (SIGCONT)`);
      }
    }
    if (restartAfter !== undefined && killedAt >= 0 && !restarted && now >= killedAt + restartAfter * 1000) {
      // Not awaited: the load goes on. Only once another node serves the slot (a node restarted before the
      // failover would simply take its slots back), then ensureCluster returns when it has rejoined, synced.
      restarted = waitUntil(async () => (await slotMaster(survivorPort, slot)) !== masterPort, 60_000, 250)
        .then(() => {
          console.log(`t=${((Date.now() - t0) / 1000).toFixed(1)} s: the slot has a new master; restarting the killed node 127.0.0.1:${masterPort}`);
          return ensureCluster(clusterSpec);
        })
        .then(() => console.log(`t=${((Date.now() - t0) / 1000).toFixed(1)} s: the killed node is back as a replica, in sync`));
    }
    inFlight.push(send(i, apis[i % apis.length]!, t0));
    await new Promise((r) => setTimeout(r, 1000 / rate));
  }
  await Promise.all(inFlight);
  await restarted;
  samples.sort((a, b) => a.i - b.i);
  if (holdFlush) {
    flusher = startNodeScript('flusher', 'workers/index.ts', { env: { ...workerEnv, WORKER_ROLES: 'flush-events' }, echo: 'problems' });
    console.log('the load has ended: flush-events starts now (--hold-flush)');
  }
  const disruptedAt = lagFrom >= 0 ? lagFrom : killedAt;

  // Every event answered 200 must reach Postgres once the workers have flushed (or the wait gives up).
  const okIds = new Set(samples.filter((s) => s.status === '200').map((s) => `e${s.i}`));
  let stored = new Set<string>();
  const drainStart = Date.now();
  await waitUntil(async () => {
    stored = new Set((await db.playerEvent.findMany({ where: { gameId: game.id }, select: { eventId: true } })).map((r) => r.eventId));
    return [...okIds].every((id) => stored.has(id));
  }, drainSeconds * 1000, 500);
  console.log(`drain: ${((Date.now() - drainStart) / 1000).toFixed(1)} s after the load ended`);

  const count = (xs: (string | null)[]) => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [String(x)]: (m[String(x)] ?? 0) + 1 }), {});
  const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : NaN);
  for (const api of apis) {
    const mine = samples.filter((s) => s.api === api.label);
    console.log(`— API ${api.label} (port ${api.port}): ${mine.length} heartbeats`);
    const perSecond = new Map<number, Record<string, number>>();
    for (const s of mine) {
      const bin = perSecond.get(Math.floor(s.t / 1000)) ?? {};
      bin[s.status] = (bin[s.status] ?? 0) + 1;
      perSecond.set(Math.floor(s.t / 1000), bin);
    }
    for (const [sec, bin] of perSecond) if (Object.keys(bin).some((k) => k !== '200')) console.log(`  second ${sec}: ${JSON.stringify(bin)}`);
    const bad = mine.filter((s) => s.status !== '200');
    // Latency of the undisturbed load: answered before the lag or the kill, after a warm-up (the first
    // request of a key pays its argon2 verification; JIT).
    const steady = mine.filter((s) => s.t >= WARM_UP_MS && s.t + s.ms < disruptedAt && s.status === '200').map((s) => s.ms);
    const p50 = pct(steady, 50);
    const p99 = pct(steady, 99);
    const maxMs = Math.max(...mine.map((s) => s.ms));
    console.log(
      `  statuses ${JSON.stringify(count(mine.map((s) => s.status)))}; non-200 from t=${((bad[0]?.t ?? 0) / 1000).toFixed(1)} s to t=${((bad.at(-1)?.t ?? 0) / 1000).toFixed(1)} s; ` +
        `Retry-After on them ${JSON.stringify(count(bad.map((s) => s.retryAfter)))}; undisturbed (from ${WARM_UP_MS / 1000} s to the disruption) p50 ${p50} ms, p99 ${p99} ms (${steady.length} answers); slowest answer ${maxMs} ms`,
    );
    const ok = mine.filter((s) => s.status === '200').map((s) => `e${s.i}`);
    const lost = ok.filter((id) => !stored.has(id)).length;
    const storedAnyway = bad.filter((s) => stored.has(`e${s.i}`)).length;
    console.log(`  events: ${ok.length} answered 200, ${lost} of them missing from Postgres; ${storedAnyway} answered non-200 stored anyway (the script ran, the answer was lost or unconfirmed)`);
    console.log(
      `BENCH failover api=${api.label} kill=${kill} replicas=${replicas} lag_s=${lagSeconds} hold_flush=${holdFlush} answered_200=${ok.length} lost_200=${lost} non200=${bad.length} window_s=${(((bad.at(-1)?.t ?? 0) - (bad[0]?.t ?? 0)) / 1000).toFixed(1)} p50_ms=${p50} p99_ms=${p99} max_ms=${maxMs}`,
    );
  }
  console.log(`load average at end: ${load()}`);
} finally {
  if (stoppedReplica) process.kill(stoppedReplica, 'SIGCONT');
  await Promise.all([...apis.map((a) => a.child.stop()), workers.stop(30_000), flusher?.stop(30_000)]);
  // Event and session rows are keyed by game without a foreign key: they do not cascade.
  if (gameId) await Promise.all([db.playerEvent.deleteMany({ where: { gameId } }), db.session.deleteMany({ where: { gameId } })]).catch(() => undefined);
  await db.workspace.delete({ where: { id: ws.id } }).catch(() => undefined);
  await db.$disconnect();
  await stopCluster(dir).catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
}
