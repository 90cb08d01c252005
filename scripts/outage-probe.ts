/**
 * Measures README "Dependency outages" figures: time to the 503 while Redis or Postgres is unreachable
 * (p50/max over sequential heartbeats, ms) and recovery time (dependency back → first 200, ms). The
 * outage is a TCP proxy (scripts/support/tcp-proxy.ts) in front of the configured Redis and Postgres,
 * cut and restored, so the real services keep running. Uses DATABASE_URL/REDIS_URL (migrated database),
 * a random Redis prefix, and deletes what it created. Usage: `npx tsx scripts/outage-probe.ts [samples, default 30]`.
 */
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { setLogLevel } from '../src/log.js';
import { createRedis } from '../src/store/redis.js';
import { KeySpace } from '../src/store/keyspace/key-space.js';
import { createDb } from '../src/store/prisma.js';
import { VerifiedDigests } from '../src/auth/verified-digests.js';
import { KeyVerifier } from '../src/auth/key-verifier.js';
import { createApp } from '../src/app.js';
import { createGame, createWorkspace } from '../src/games/game-service.js';
import { createKey } from '../src/auth/key-service.js';
import { sign } from '../src/auth/signature.js';
import { percentile } from '@gis/client';
import { TcpProxy } from './support/tcp-proxy.js';
import { parseCli } from './support/cli-args.js';
import { deleteByPattern } from './fixtures.js';

const cli = parseCli('usage: tsx scripts/outage-probe.ts [samples, default 30]', { allowPositionals: true, options: {} });
const SAMPLES = Number(cli.positionals[0] ?? 30);
if (cli.positionals.length > 1 || !(Number.isInteger(SAMPLES) && SAMPLES >= 1 && SAMPLES <= 10_000)) cli.fail('samples must be one integer from 1 to 10000');
const base = loadConfig({ ...process.env, LOG_LEVEL: 'error', REDIS_PREFIX: `outage-probe-${randomBytes(4).toString('hex')}` });
setLogLevel('error');
const redisProxy = new TcpProxy(new URL(base.redisUrl).hostname, Number(new URL(base.redisUrl).port || 6379));
const pgProxy = new TcpProxy(new URL(base.databaseUrl).hostname, Number(new URL(base.databaseUrl).port || 5432));
await Promise.all([redisProxy.up(), pgProxy.up()]);
const config = { ...base, redisUrl: redisProxy.url(base.redisUrl), databaseUrl: pgProxy.url(base.databaseUrl) };
const keySpace = new KeySpace(config.redisPrefix);
const redis = createRedis(config.redisUrl, { name: 'probe', autoPipelining: true });
const db = createDb(config.databaseUrl, 4);
const admin = createDb(base.databaseUrl, 2);
const app = createApp({ config, keySpace, redis, db, verifier: new KeyVerifier(db, new VerifiedDigests(redis, keySpace)) });
const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const ws = await createWorkspace(admin, 'outage-probe');
const game = await createGame(admin, { workspaceId: ws.id, name: 'outage probe', heartbeatIntervalSeconds: 20 });
const warm = await createKey(admin, game.id, ['heartbeat', 'events']);
const cold = await createKey(admin, game.id, ['heartbeat', 'events']);
let uptime = 0;

/** One signed heartbeat; returns its status and wall time in ms. */
async function heartbeat(key: string): Promise<{ status: number; ms: number; retryAfter: string | null }> {
  const raw = JSON.stringify({ externalServerId: 's1', externalScopeId: 'p1', playerCount: 0, maxPlayers: 10, sdkVersion: '1.0.0', uptimeSeconds: ++uptime, region: 'eu', players: [], events: [], acks: [] });
  const ts = String(Math.floor(Date.now() / 1000));
  const t0 = performance.now();
  const res = await fetch(`${origin}/api/v1/game/heartbeat`, { method: 'POST', body: raw, headers: { Authorization: `Bearer ${key}`, 'X-Service-Timestamp': ts, 'X-Service-Signature': sign(key.split('.')[1]!, ts, raw), 'Content-Type': 'application/json' } });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0, retryAfter: res.headers.get('retry-after') };
}

async function outage(label: string, proxy: TcpProxy, key: string): Promise<void> {
  await proxy.down();
  const runs = [];
  for (let i = 0; i < SAMPLES; i++) runs.push(await heartbeat(key));
  const times = runs.map((r) => r.ms);
  const statuses = [...new Set(runs.map((r) => r.status))].join(',');
  const retryAfter = [...new Set(runs.map((r) => r.retryAfter))].sort().join(',');
  const t0 = performance.now();
  await proxy.up();
  let back = await heartbeat(key);
  while (back.status !== 200) back = await heartbeat(key);
  console.log(`${label}: statuses ${statuses}, Retry-After seen {${retryAfter}}, time to answer p50 ${percentile(times, 50).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms (${SAMPLES} sequential); recovery (up → first 200) ${(performance.now() - t0).toFixed(0)} ms`);
}

if ((await heartbeat(warm.key)).status !== 200) throw new Error('warm-up heartbeat failed');
await outage('redis down, heartbeat', redisProxy, warm.key);
await outage('postgres down, cold key', pgProxy, cold.key);
await pgProxy.down();
const warmDuring = [];
for (let i = 0; i < SAMPLES; i++) warmDuring.push((await heartbeat(warm.key)).status);
await pgProxy.up();
console.log(`postgres down, verified key: statuses ${[...new Set(warmDuring)].join(',')} (${SAMPLES} sequential)`);

await admin.workspace.delete({ where: { id: ws.id } });
await deleteByPattern(redis, keySpace.scanPattern());
server.close();
await Promise.allSettled([redis.quit(), db.$disconnect(), admin.$disconnect(), redisProxy.down(), pgProxy.down()]);
process.exit(0);
