/**
 * scripts/bench-auth-flood.ts — the right key's latency while wrong secrets flood its public prefix (issue
 * #16; not a test).
 *
 * Usage:  npm run bench:auth-flood -- [--duration 15] [--rate 20] [--flood 200] [--prefix gisbench-auth]
 *
 * Creates a workspace, game and key, starts the API (src/server.ts, Node 24 of node_modules/.bin) on a free
 * port under a dedicated Redis prefix, and runs three phases, each on a freshly started API process (so
 * the key is never in the process cache at the start: the cold case the issue measured):
 *   1. baseline: heartbeats with the right key at `--rate`/s;
 *   2. flood: the same, while wrong secrets on the same prefix arrive at `--flood`/s (sent by
 *      scripts/bench/auth-flood-sender.ts, a process of its own);
 *   3. flood again right after a restart of the API.
 * Prints, per phase, the right key's statuses and p50/p99/max, and the ratio of each flooded p99 to the
 * baseline p99 measured in the same run (the issue's target: ≤ 2). Removes what it created afterwards.
 */
import { loadConfig } from '../src/config.js';
import { createRedis } from '../src/store/redis.js';
import { createDb } from '../src/store/prisma.js';
import { createGame, createWorkspace } from '../src/games/game-service.js';
import { createKey } from '../src/auth/key-service.js';
import { VerifiedDigests } from '../src/auth/verified-digests.js';
import { sign } from '../src/auth/signature.js';
import { percentile } from '@gis/client';
import { deleteByPattern } from './fixtures.js';
import { freePort } from './support/free-port.js';
import { nodeBinary, startChild, startNodeScript, type ManagedChild } from './support/child-process.js';
import { parseCli } from './support/cli-args.js';
import { pacedLoad, type PacedRequest, type PacedResult } from './support/paced-load.js';

const HB = '/api/v1/game/heartbeat';

const cli = parseCli('usage: npm run bench:auth-flood -- [--duration 15] [--rate 20] [--flood 200] [--prefix gisbench-auth]', {
  options: {
    duration: { type: 'string' },
    rate: { type: 'string' },
    flood: { type: 'string' },
    prefix: { type: 'string', default: 'gisbench-auth' },
  },
});
const duration = cli.number('duration', 15, 1, 3600);
const rate = cli.number('rate', 20, 0.1, 100_000);
const floodRate = cli.number('flood', 200, 0.1, 100_000);
const prefix = cli.values.prefix;
if (prefix === 'gis') cli.fail('use a dedicated --prefix: its keys are deleted afterwards');

const config = loadConfig({ ...process.env, REDIS_PREFIX: prefix });
const redis = createRedis(config.redisUrl, { name: 'bench' });
const db = createDb(config.databaseUrl, 2);
const ws = await createWorkspace(db, `bench auth flood ${new Date().toISOString()}`);
const port = await freePort();
let api: ManagedChild | null = null;

async function startApi(): Promise<void> {
  api = startNodeScript('api', 'src/server.ts', {
    env: { REDIS_PREFIX: prefix, PORT: String(port), HOST: '127.0.0.1', CONSOLE_PORT: String(await freePort()), LOG_LEVEL: 'warn' },
    echo: 'all',
  });
  await api.waitForUrl(`http://127.0.0.1:${port}/healthz`);
}

async function stopApi(): Promise<void> {
  await api?.stop();
}

/** A signed heartbeat with `key`/`secret`; `n` keeps every body distinct (no replay collisions). */
function heartbeat(key: string, secret: string, n: number): PacedRequest {
  const body = JSON.stringify({ externalServerId: `bench-${n}`, playerCount: 0, maxPlayers: 30, sdkVersion: 'bench', uptimeSeconds: n, players: [], events: [], acks: [] });
  const ts = String(Math.floor(Date.now() / 1000));
  return { method: 'POST', path: HB, body, headers: { authorization: `Bearer ${key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(secret, ts, body), 'content-type': 'application/json' } };
}

function summary(r: PacedResult): { statuses: Record<string, number>; p50: number; p99: number; max: number } {
  const l = r.latenciesMs;
  return { statuses: r.statuses, p50: percentile(l, 50), p99: percentile(l, 99), max: l[l.length - 1] ?? 0 };
}

try {
  const game = await createGame(db, { workspaceId: ws.id, name: 'bench game' });
  const key = await createKey(db, game.id, ['heartbeat'], 'bench-auth-flood', new VerifiedDigests(redis, prefix));
  const secret = key.key.split('.')[1]!;
  let n = 0;
  const good = () => pacedLoad({ port, rate, duration, connections: 4, next: () => heartbeat(key.key, secret, ++n) });
  // The flood comes from a process of its own: signing and sending 200 requests a second in this one
  // would delay the right key's requests here and be charged to the service. Its start-up (compiling
  // the script) is over before the right key's load begins.
  const flooded = async (): Promise<{ good: PacedResult; statuses: Record<string, number> }> => {
    const args = ['--import', 'tsx', 'scripts/bench/auth-flood-sender.ts', '--port', String(port), '--key-prefix', key.prefix, '--rate', String(floodRate), '--duration', String(duration)];
    const sender = startChild({ name: 'flood', command: nodeBinary(), args, echo: 'none' });
    await sender.waitForLine(/^FLOOD START$/);
    const g = await good();
    await sender.exited;
    const line = /^FLOOD (\{.*\})$/m.exec(sender.output());
    if (!line) throw new Error(`flood sender failed: ${sender.output().slice(-500)}`);
    return { good: g, statuses: JSON.parse(line[1]!) as Record<string, number> };
  };

  const results: Record<string, ReturnType<typeof summary>> = {};
  let floodStatuses: Record<string, Record<string, number>> = {};
  for (const phase of ['baseline', 'flood', 'flood-after-restart'] as const) {
    await stopApi();
    await startApi();
    if (phase === 'baseline') {
      results[phase] = summary(await good());
    } else {
      const f = await flooded();
      results[phase] = summary(f.good);
      floodStatuses = { ...floodStatuses, [phase]: f.statuses };
    }
    console.log(`${phase}: right key ${JSON.stringify(results[phase])}${floodStatuses[phase] ? `; wrong secrets ${JSON.stringify(floodStatuses[phase])}` : ''}`);
  }
  const base = results.baseline!.p99 || 1;
  const ratio = (p: string) => (results[p]!.p99 / base).toFixed(2);
  console.log(`p99 ratio flooded/baseline: flood ${ratio('flood')}, after restart ${ratio('flood-after-restart')} (target ≤ 2)`);
  console.log(`BENCH auth_flood base_p99_ms=${results.baseline!.p99.toFixed(1)} flood_p99_ratio=${ratio('flood')} restart_p99_ratio=${ratio('flood-after-restart')}`);
} finally {
  await stopApi();
  await db.workspace.delete({ where: { id: ws.id } }).catch(() => undefined);
  await deleteByPattern(redis, `${prefix}:*`);
  await redis.quit();
  await db.$disconnect();
}
