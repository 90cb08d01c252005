/**
 * scripts/bench/commands.ts — issue→ack latency of moderation commands, with and without urgent nudges
 * (issue #3; not a test).
 *
 * Usage:  npm run bench:commands -- [--servers 50] [--players 10] [--duration 90] [--rate 1]
 *                                   [--gap-ms 250] [--prefix gisbench-cmd] [--json]
 *
 * One run (about 2 × (--duration + 30) s):
 *   1. Creates, in the database of DATABASE_URL (default: the dev database `gis`), a workspace, a game with
 *      the shortest heartbeat interval (15 s) and an all-scope key; its platform settings point at a local
 *      imitation of the cloud messaging API (packages/simulator/src/cloud-messaging-imitation.ts).
 *   2. Starts the API (src/server.ts) and the workers (workers/index.ts, roles publish-nudges and
 *      expire-commands) as children under the dedicated Redis prefix.
 *   3. Starts a fleet of --servers reference clients (@gis/client), each with --players players, booting
 *      spread over one interval, each subscribed to the game's nudge topic on the imitation (a received
 *      nudge calls `client.nudge()`). The game handler executes every command at once and asks for an
 *      early heartbeat so the ack goes out promptly. `--gap-ms` is the clients' minimum gap between a
 *      heartbeat and an early one (`minNudgeGapMs`; the reference client's default is 1000 ms): an ack
 *      waits up to that long, and so does a nudged heartbeat right after another one.
 *   4. For nudges off, then on: issues commands for --duration s at --rate per second (Poisson), each to a
 *      random player of a random server (mute, freeze, message) or, one in ten, a message to a server,
 *      through the real service (src/commands/command-service.ts). Waits until every command is acked,
 *      failed or expired, then reads issuedAt and the ack time (server clock, both in the command's Redis
 *      hash) and prints issue→ack p50/p99/max, the heartbeats the fleet sent per second and the nudges
 *      published.
 *   5. Prints one greppable line per mode: `BENCH commands nudges=on n=... p50_ms=... p99_ms=... target...`.
 * Targets (issue #3): with nudges p99 < 2 s; without, p99 ≤ interval + 1 s = 16 s.
 * Everything is removed afterwards, also on failure or Ctrl-C: children stopped, the workspace, its
 * commands and every key under `<prefix>:*` deleted — which is why the prefix must be a dedicated one.
 */
import { loadConfig } from '../../src/config.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { createDb, type Db } from '../../src/store/prisma.js';
import { createGame, createWorkspace } from '../../src/games/game-service.js';
import { createKey } from '../../src/auth/key-service.js';
import { SCOPES } from '../../src/auth/scopes.js';
import { GameClient } from '@gis/client';
import { NudgeQueue } from '../../src/commands/nudge-queue.js';
import { CloudMessagingImitation, attachNudgeImitation, CommandLoad, type CommandLoadSummary } from '@gis/simulator';
import { deleteByPattern } from '../fixtures.js';
import { freePort } from '../support/free-port.js';
import { startNodeScript, type ManagedChild } from '../support/child-process.js';
import { parseCli } from '../support/cli-args.js';

const INTERVAL_SECONDS = 15;

interface Args {
  servers: number;
  players: number;
  durationSeconds: number;
  rate: number;
  gapMs: number;
  prefix: string;
  json: boolean;
}

const USAGE = 'usage: npm run bench:commands -- [--servers 50] [--players 10] [--duration 90] [--rate 1] [--gap-ms 250] [--prefix gisbench-cmd] [--json]';

function readArgs(argv: string[]): Args {
  const cli = parseCli(USAGE, {
    options: {
      servers: { type: 'string' },
      players: { type: 'string' },
      duration: { type: 'string' },
      rate: { type: 'string' },
      'gap-ms': { type: 'string' },
      prefix: { type: 'string', default: 'gisbench-cmd' },
      json: { type: 'boolean', default: false },
    },
  }, argv);
  return {
    servers: Math.floor(cli.number('servers', 50, 1, 2000)),
    players: Math.floor(cli.number('players', 10, 1, 200)),
    durationSeconds: cli.number('duration', 90, 5, 3600),
    rate: cli.number('rate', 1, 0.01, 100),
    gapMs: Math.floor(cli.number('gap-ms', 250, 0, 60_000)),
    prefix: cli.values.prefix,
    json: cli.values.json,
  };
}

const log = (msg: string): void => void process.stderr.write(`[bench-commands] ${msg}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));


/** The bench's fleet member: a reference client whose game executes commands at once and acks promptly. */
function startServer(i: number, args: Args, apiUrl: string, apiKey: string, subscribe: (onNudge: () => void) => unknown): GameClient {
  const { players } = args;
  const id = `bench-s${String(i).padStart(4, '0')}`;
  const client: GameClient = new GameClient({
    baseUrl: apiUrl,
    apiKey,
    externalServerId: id,
    maxPlayers: players * 2,
    sdkVersion: 'bench-commands/1',
    minNudgeGapMs: args.gapMs,
    // The effect is instant here; the client's ackEarly sends the ack with an early heartbeat.
    onCommand: () => Promise.resolve({ ok: true }),
  });
  client.setRoster(Array.from({ length: players }, (_, n) => ({ externalId: `${id}-p${n}`, username: `p${n}` })));
  subscribe(() => client.nudge());
  return client;
}

interface ModeResult extends CommandLoadSummary {
  nudges: 'off' | 'on';
  heartbeatsPerSecond: number;
  nudgesPublished: number;
  nudges429: number;
  targetP99Ms: number;
  met: boolean;
}

/** Issues commands for `durationSeconds`, waits until all are settled, returns the latency figures. */
async function runMode(
  mode: 'off' | 'on',
  deps: { args: Args; keySpace: KeySpace; db: Db; redis: AppRedis; gameId: string; fleet: GameClient[]; platform: CloudMessagingImitation; nudges: NudgeQueue },
): Promise<ModeResult> {
  const { args, db, fleet, platform } = deps;
  await db.game.update({ where: { id: deps.gameId }, data: { nudgesEnabled: mode === 'on' } });
  const load = new CommandLoad({ db, redis: deps.redis, keySpace: deps.keySpace, gameId: deps.gameId, nudges: deps.nudges, issuedBy: 'bench' });
  const servers = fleet.map((c) => ({ id: c.externalServerId, players: () => c.roster.list().map((p) => p.externalId) }));
  const heartbeatsBefore = fleet.reduce((n, c) => n + c.stats().heartbeatsSent, 0);
  const publishesBefore = platform.publishes.length;
  const started = Date.now();
  log(`nudges ${mode}: issuing about ${Math.round(args.rate * args.durationSeconds)} commands over ${args.durationSeconds} s`);
  while (Date.now() - started < args.durationSeconds * 1000) {
    await sleep(-Math.log(1 - Math.random()) * (1000 / args.rate));
    await load.issueRandom(servers, ['mute', 'freeze', 'message']);
  }
  const summary = await load.settle((2 * INTERVAL_SECONDS + 10) * 1000);
  const elapsed = (Date.now() - started) / 1000;
  const target = mode === 'on' ? 2000 : (INTERVAL_SECONDS + 1) * 1000;
  const publishes = platform.publishes.slice(publishesBefore);
  const heartbeats = fleet.reduce((n, c) => n + c.stats().heartbeatsSent, 0) - heartbeatsBefore;
  log(`nudges ${mode}: ${summary.issued} issued, settled after ${elapsed.toFixed(0)} s`);
  return {
    nudges: mode,
    ...summary,
    heartbeatsPerSecond: Math.round((heartbeats / elapsed) * 10) / 10,
    nudgesPublished: publishes.filter((p) => p.status === 200).length,
    nudges429: publishes.filter((p) => p.status === 429).length,
    targetP99Ms: target,
    met: summary.acked === summary.issued && summary.issueToAckMs.p99 !== null && summary.issueToAckMs.p99 < target,
  };
}

async function main(): Promise<number> {
  const args = readArgs(process.argv.slice(2));
  const config = loadConfig({ ...process.env, REDIS_PREFIX: args.prefix, LOG_LEVEL: 'warn' });
  if (config.redisPrefix === 'gis') throw new Error('refusing to use the app prefix "gis"; pick a dedicated one');
  const keySpace = new KeySpace(config.redisPrefix);
  const db = createDb(config.databaseUrl, 4);
  const redis = createRedis(config.redisUrl, { name: 'bench-commands' });
  let platform: CloudMessagingImitation | undefined;
  const children: ManagedChild[] = [];
  const fleet: GameClient[] = [];
  let workspaceId: string | undefined;
  let gameId: string | undefined;
  const nudges = new NudgeQueue(redis, keySpace);
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    log('interrupted; cleaning up');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const ws = await createWorkspace(db, `bench commands ${config.redisPrefix}`);
    workspaceId = ws.id;
    const game = await createGame(db, { workspaceId: ws.id, name: 'bench commands', heartbeatIntervalSeconds: INTERVAL_SECONDS });
    gameId = game.id;
    const push = await attachNudgeImitation(db, game.id);
    platform = push.platform;
    const key = await createKey(db, game.id, [...SCOPES], 'bench-commands');

    const port = await freePort();
    const env = { DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix, LOG_LEVEL: 'warn' };
    const api = startNodeScript('api', 'src/server.ts', { env: { ...env, PORT: String(port), HOST: '127.0.0.1' } });
    children.push(api, startNodeScript('workers', 'workers/index.ts', { env: { ...env, WORKER_ROLES: 'publish-nudges,expire-commands' } }));
    const apiUrl = `http://127.0.0.1:${port}`;
    await api.waitForUrl(`${apiUrl}/healthz`);

    log(`fleet of ${args.servers} servers × ${args.players} players, heartbeat interval ${INTERVAL_SECONDS} s, early-heartbeat gap ${args.gapMs} ms, booting over one interval`);
    for (let i = 0; i < args.servers; i++) fleet.push(startServer(i, args, apiUrl, key.key, push.subscribe));
    const boots = fleet.map((c) => setTimeout(() => c.start(), Math.random() * INTERVAL_SECONDS * 1000));
    while (!interrupted && fleet.some((c) => c.stats().heartbeatsOk === 0)) await sleep(500);
    if (interrupted) return 1;
    boots.forEach(clearTimeout);

    const results: ModeResult[] = [];
    for (const mode of ['off', 'on'] as const) {
      if (interrupted) break;
      results.push(await runMode(mode, { args, keySpace, db, redis, gameId: game.id, fleet, platform: push.platform, nudges }));
    }
    for (const r of results) {
      const { p50, p99, max } = r.issueToAckMs;
      const line = `BENCH commands nudges=${r.nudges} n=${r.issued} acked=${r.acked} failed=${r.failed} expired=${r.expired} refused=${r.refused} p50_ms=${p50} p99_ms=${p99} max_ms=${max} target_p99_ms=${r.targetP99Ms} ${r.met ? 'MET' : 'MISSED'} heartbeats_per_s=${r.heartbeatsPerSecond} nudges=${r.nudgesPublished} nudge_429=${r.nudges429} gap_ms=${args.gapMs}`;
      process.stdout.write(`${line}\n`);
    }
    if (args.json) process.stdout.write(`${JSON.stringify({ servers: args.servers, players: args.players, intervalSeconds: INTERVAL_SECONDS, rate: args.rate, gapMs: args.gapMs, results })}\n`);
    return results.length === 2 && results.every((r) => r.met) ? 0 : 1;
  } finally {
    await Promise.allSettled(fleet.map((c) => c.stop({ flush: false })));
    await Promise.allSettled(children.map((c) => c.stop()));
    await nudges.close().catch(() => undefined);
    await platform?.stop().catch(() => undefined);
    if (gameId) await db.command.deleteMany({ where: { gameId } }).catch(() => undefined);
    if (workspaceId) await db.workspace.delete({ where: { id: workspaceId } }).catch(() => undefined);
    await deleteByPattern(redis, keySpace.scanPattern()).catch(() => undefined);
    await Promise.allSettled([redis.quit(), db.$disconnect()]);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(2);
  },
);
