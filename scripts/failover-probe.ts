/**
 * scripts/failover-probe.ts — what a Redis Cluster master failure does to the heartbeat path (issue #17,
 * "Failover"; not a test).
 *
 * Usage:  npx tsx scripts/failover-probe.ts [--seconds 40] [--kill-at 10] [--rate 20] [--port 4310] [--kill game|flush]
 *
 * Starts a private 3-master + 3-replica cluster (scripts/services/cluster.ts) on 127.0.0.1:7004–7009 in
 * a temporary directory, an API process on --port and a worker process against it (DATABASE_URL, default
 * the dev database), creates a game and key, and sends signed heartbeats, each with one event, at --rate
 * per second for --seconds. At --kill-at seconds it SIGKILLs the master that owns the game's slot (or,
 * with `--kill flush`, the master of the `{flush-events}` queue: its scheduler's next iteration); the
 * replica takes over after the cluster's node timeout (5 s). Prints the statuses per second, the window
 * of non-200 answers, the Retry-After values given, the slowest answer, and — once the workers have
 * flushed — how many events answered 200 are missing from Postgres (the loss a failover costs) and how
 * many answered 503 were stored anyway. Removes the cluster, the game and its keys afterwards.
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
import { startNodeScript, waitUntil } from './support/child-process.js';
import { ensureCluster, stopCluster } from './services/cluster.js';

const cli = parseCli('usage: npx tsx scripts/failover-probe.ts [--seconds 40] [--kill-at 10] [--rate 20] [--port 4310] [--kill game|flush]', {
  options: { seconds: { type: 'string' }, 'kill-at': { type: 'string' }, rate: { type: 'string' }, port: { type: 'string' }, kill: { type: 'string' } },
});
const seconds = cli.number('seconds', 40, 5, 600);
const killAt = cli.number('kill-at', 10, 1, seconds - 1);
const rate = cli.number('rate', 20, 1, 500);
const port = cli.number('port', 4310, 1024, 65535, { integer: true });
const BASE_PORT = 7004;

interface Sample { i: number; t: number; status: string; ms: number; retryAfter: string | null }

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-failover-'));
const { url: redisUrl } = await ensureCluster({ replicas: 1, basePort: BASE_PORT, dir });
const prefix = `gisfailover${process.pid}`;
const config = loadConfig({ ...process.env, REDIS_URL: redisUrl, REDIS_PREFIX: prefix });
const db = createDb(config.databaseUrl, 2);
const env = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix, PORT: String(port), HOST: '127.0.0.1', CONSOLE_PORT: '0', LOG_LEVEL: 'error' };
const api = startNodeScript('api', 'src/server.ts', { env, echo: 'none' });
const workers = startNodeScript('workers', 'workers/index.ts', { env, echo: 'problems' });
const ws = await createWorkspace(db, `failover probe ${new Date().toISOString()}`);
let gameId: string | undefined;
try {
  await api.waitForUrl(`http://127.0.0.1:${port}/readyz`, 90_000);
  const game = await createGame(db, { workspaceId: ws.id, name: 'failover probe' });
  gameId = game.id;
  const key = await createKey(db, game.id, ['heartbeat', 'events']);
  const secret = key.key.split('.')[1]!;
  const samples: Sample[] = [];
  const send = async (i: number, t0: number): Promise<void> => {
    const raw = JSON.stringify({ externalServerId: `s${i % 50}`, playerCount: 0, maxPlayers: 10, sdkVersion: 'failover-probe', uptimeSeconds: i, players: [], events: [{ eventId: `e${i}`, type: 'probe', occurredAt: new Date().toISOString() }], acks: [] });
    const ts = String(Math.floor(Date.now() / 1000));
    const start = Date.now();
    let status: string;
    let retryAfter: string | null = null;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/game/heartbeat`, {
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
    samples.push({ i, t: start - t0, status, ms: Date.now() - start, retryAfter });
  };
  // The master owning the game's (or the flush queue's) slot, found before the load starts.
  const probe = new Redis({ host: '127.0.0.1', port: BASE_PORT });
  const victim = cli.values.kill === 'flush' ? '{flush-events}' : `{g:${game.id}}`;
  const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', victim));
  const shards = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
  await probe.quit();
  const masterPort = shards.find(([from, to]) => slot >= from && slot <= to)![2][1];
  const t0 = Date.now();
  const inFlight: Promise<void>[] = [];
  let killedAt = -1;
  for (let i = 0; Date.now() - t0 < seconds * 1000; i++) {
    if (killedAt < 0 && Date.now() - t0 >= killAt * 1000) {
      killedAt = Date.now() - t0;
      process.kill(Number(fs.readFileSync(path.join(dir, String(masterPort), 'redis.pid'), 'utf8').trim()), 'SIGKILL');
      console.log(`t=${(killedAt / 1000).toFixed(1)} s: killed master 127.0.0.1:${masterPort} (slot ${slot} of ${victim})`);
    }
    inFlight.push(send(i, t0));
    await new Promise((r) => setTimeout(r, 1000 / rate));
  }
  await Promise.all(inFlight);
  samples.sort((a, b) => a.i - b.i);
  const perSecond = new Map<number, Record<string, number>>();
  for (const s of samples) {
    const bin = perSecond.get(Math.floor(s.t / 1000)) ?? {};
    bin[s.status] = (bin[s.status] ?? 0) + 1;
    perSecond.set(Math.floor(s.t / 1000), bin);
  }
  for (const [sec, bin] of perSecond) if (Object.keys(bin).some((k) => k !== '200')) console.log(`  second ${sec}: ${JSON.stringify(bin)}`);
  const bad = samples.filter((s) => s.status !== '200');
  const count = (xs: (string | null)[]) => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [String(x)]: (m[String(x)] ?? 0) + 1 }), {});
  console.log(`statuses ${JSON.stringify(count(samples.map((s) => s.status)))}; non-200 from t=${((bad[0]?.t ?? 0) / 1000).toFixed(1)} s to t=${((bad.at(-1)?.t ?? 0) / 1000).toFixed(1)} s; Retry-After on them ${JSON.stringify(count(bad.map((s) => s.retryAfter)))}; slowest answer ${Math.max(...samples.map((s) => s.ms))} ms`);
  // Every accepted event must reach Postgres once the workers have flushed (or the wait gives up).
  const okIds = new Set(samples.filter((s) => s.status === '200').map((s) => `e${s.i}`));
  let stored = new Set<string>();
  await waitUntil(async () => {
    stored = new Set((await db.playerEvent.findMany({ where: { gameId: game.id }, select: { eventId: true } })).map((r) => r.eventId));
    return [...okIds].every((id) => stored.has(id));
  }, 60_000, 500);
  const lost = [...okIds].filter((id) => !stored.has(id)).length;
  const storedAnyway = bad.filter((s) => stored.has(`e${s.i}`)).length;
  console.log(`events: ${okIds.size} answered 200, ${lost} of them missing from Postgres; ${storedAnyway} answered non-200 stored anyway (the script ran, the answer was lost)`);
  console.log(`BENCH failover answered_200=${okIds.size} lost_200=${lost} non200=${bad.length} window_s=${(((bad.at(-1)?.t ?? 0) - (bad[0]?.t ?? 0)) / 1000).toFixed(1)} max_ms=${Math.max(...samples.map((s) => s.ms))}`);
} finally {
  await Promise.all([api.stop(), workers.stop(30_000)]);
  // Event and session rows are keyed by game without a foreign key: they do not cascade.
  if (gameId) await Promise.all([db.playerEvent.deleteMany({ where: { gameId } }), db.session.deleteMany({ where: { gameId } })]).catch(() => undefined);
  await db.workspace.delete({ where: { id: ws.id } }).catch(() => undefined);
  await db.$disconnect();
  await stopCluster(dir).catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
}
