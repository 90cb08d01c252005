/**
 * scripts/bench/bans-check.ts — load benchmark of POST /api/v1/game/bans/check (not a test).
 *
 * Usage:  npm run bench:bans -- [--duration 10] [--connections 50] [--users 10000] [--banned 1000] [--prefix gisbench-bans]
 *                               [--ratio] [--ratio-rounds 2] [--json]
 *
 * Seeds a workspace with one game and key and `--banned` bans (a mix of workspace, game and server
 * scopes, some timed) among `--users` user ids, starts the API (src/server.ts, Node 24 of
 * node_modules/.bin, `--import tsx`) on a free port under a dedicated Redis prefix, then drives it with
 * autocannon in this process: every request freshly signed (the replay cache refuses a repeated
 * signature), a random user connecting to one of 10 servers. Prints req/s, latency p50/p99/max, the
 * status codes, and the Postgres queries the run cost (pg_stat_database xact_commit of the database: the
 * check path should cost none). Removes the workspace and the prefix's keys afterwards.
 *
 * `--ratio` (issue #20) also starts the ceiling (scripts/bench/baseline-server.ts) and prints the p99
 * ratio, check p99 / ceiling p99, at 50 % and 80 % of each one's maximum (scripts/bench/tail-ratio.ts).
 * `--json` prints the figures as one JSON document on the last line.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { createRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { createDb } from '../../src/store/prisma.js';
import { createGame, createWorkspace } from '../../src/games/game-service.js';
import { createKey } from '../../src/auth/key-service.js';
import { sign } from '../../src/auth/signature.js';
import { BanService } from '../../src/bans/ban-service.js';
import { Blocklist } from '../../src/bans/blocklist.js';
import { deleteByPattern } from '../fixtures.js';
import { freePort } from '../support/free-port.js';
import { startNodeScript, type ManagedChild } from '../support/child-process.js';
import { autocannon, type AcRequest } from '../support/autocannon.js';
import type { PacedRequest } from '../support/paced-load.js';
import { measureTailRatios } from './tail-ratio.js';

const PATH = '/api/v1/game/bans/check';


const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    users: { type: 'string', default: '10000' },
    banned: { type: 'string', default: '1000' },
    prefix: { type: 'string', default: 'gisbench-bans' },
    ratio: { type: 'boolean', default: false },
    'ratio-rounds': { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const users = Number(values.users);
const bannedCount = Math.min(users, Number(values.banned));
const prefix = values.prefix;
if (prefix === 'gis') throw new Error('use a dedicated --prefix: its keys are deleted afterwards');


const config = loadConfig({ ...process.env, REDIS_PREFIX: prefix });
const keySpace = new KeySpace(config.redisPrefix);
const redis = createRedis(config.redisUrl, { name: 'bench' });
const db = createDb(config.databaseUrl, 4);
const ws = await createWorkspace(db, `bench bans ${new Date().toISOString()}`);
const port = await freePort();
const api = startNodeScript('api', 'src/server.ts', { env: { REDIS_PREFIX: prefix, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', CONSOLE_PORT: '0' }, echo: 'all' });
let ceiling: ManagedChild | undefined;
try {
  const game = await createGame(db, { workspaceId: ws.id, name: 'bench game' });
  const key = await createKey(db, game.id, ['heartbeat']);
  const secret = key.key.split('.')[1]!;
  const bans = new BanService({ db, redis, keySpace, blocklist: new Blocklist(redis, db, keySpace) });
  const scopes = ['workspace', 'game', 'server'] as const;
  for (let i = 0; i < bannedCount; i++) {
    const scope = scopes[i % 3]!;
    await bans.create({
      workspaceId: ws.id,
      externalId: `u${Math.floor((i * users) / bannedCount)}`,
      scope,
      gameId: scope === 'workspace' ? null : game.id,
      externalServerId: scope === 'server' ? `s${i % 10}` : null,
      expiresInSeconds: i % 2 ? 3600 : null,
      reason: 'bench',
      issuedBy: 'bench',
    });
  }
  await api.waitForUrl(`http://127.0.0.1:${port}/healthz`);
  /** A freshly signed check of a random user on one of 10 servers. */
  const nextCheck = (): PacedRequest => {
    const body = JSON.stringify({ externalId: `u${Math.floor(Math.random() * users)}`, externalServerId: `s${Math.floor(Math.random() * 10)}`, nonce: randomUUID() });
    const ts = String(Math.floor(Date.now() / 1000));
    return { method: 'POST', path: PATH, body, headers: { authorization: `Bearer ${key.key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(secret, ts, body), 'content-type': 'application/json' } };
  };
  const request: AcRequest = {
    setupRequest: (req) => ({ ...req, ...nextCheck() }),
  };
  await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: 2, requests: [request] }); // warm-up: key verify, blocklist build
  const commits = async () => Number((await db.$queryRaw<{ n: bigint }[]>`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()`)[0]!.n);
  const before = await commits();
  const r = await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration, requests: [request] });
  const pgTransactions = (await commits()) - before;
  const statuses = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]));
  console.log(`bans/check: ${Math.round(r.requests.average)} req/s over ${r.duration} s, ${connections} connections; latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms; statuses ${JSON.stringify(statuses)}; errors ${r.errors}`);
  console.log(`Postgres transactions in the database during the run (all clients, incl. pg_stat reads): ${pgTransactions} for ${r.requests.total} checks`);
  const figures: Record<string, number | string> = { bans_check_rps: Math.round(r.requests.average), p50_ms: r.latency.p50, p99_ms: r.latency.p99, pg_tx: pgTransactions };
  if (values.ratio) {
    const ceilingPort = await freePort();
    ceiling = startNodeScript('ceiling', 'scripts/bench/baseline-server.ts', { env: { PORT: String(ceilingPort), BENCH_SECRET: secret }, echo: 'all' });
    await ceiling.waitForUrl(`http://127.0.0.1:${ceilingPort}/healthz`);
    const ratios = await measureTailRatios({
      service: { port, next: nextCheck },
      ceiling: { port: ceilingPort, next: nextCheck },
      fractions: [0.5, 0.8],
      rounds: Number(values['ratio-rounds']),
      duration,
      connections,
      log: (line) => console.log(`p99 ratio: ${line}`),
    });
    for (const a of ratios.at) {
      const pct = Math.round(a.fraction * 100);
      console.log(`bans/check p99 ratio at ${pct} % of max = ${a.p99Ratio.toFixed(2)} (check ${a.serviceP99Ms.toFixed(2)} ms / ceiling ${a.ceilingP99Ms.toFixed(2)} ms, median of ${a.rounds.length}; target ≤ 1.5; busy machine figures are not comparable)`);
      figures[`p99_ratio_${pct}`] = a.p99Ratio.toFixed(2);
    }
    figures.max_rps = Math.round(ratios.serviceMax);
    figures.ceiling_max_rps = Math.round(ratios.ceilingMax);
  }
  console.log(`BENCH ${Object.entries(figures).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (values.json) console.log(JSON.stringify(figures));
} finally {
  await Promise.all([api.stop(), ceiling?.stop()]);
  await db.workspace.delete({ where: { id: ws.id } }).catch(() => undefined);
  await deleteByPattern(redis, keySpace.scanPattern());
  await redis.quit();
  await db.$disconnect();
}
