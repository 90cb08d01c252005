/**
 * scripts/fixtures.ts — Redis-backed load fixtures for benchmarks (not used by the tests).
 *
 * Usage:  node_modules/.bin/tsx scripts/fixtures.ts seed  [--games 1] [--servers 2000] [--prefix gisbench]
 *         node_modules/.bin/tsx scripts/fixtures.ts clean [--prefix gisbench] [--workspace <id>]
 *
 * `seed` creates, in the database of DATABASE_URL (default: the dev database `gis`):
 *   - one workspace named {@link workspaceName}(prefix) — the marker `clean` finds it by;
 *   - G games, each with one key holding every scope (createWorkspace / createGame / createKey);
 * and, in Redis under the dedicated REDIS_PREFIX (default `gisbench`, never the app's `gis`), S live servers
 * per game with a 30-player roster each. The live state is written by the app's own HeartbeatService (one
 * heartbeat per server), never by hand, so it has exactly the shape the API writes. Prints the fixtures as
 * JSON on stdout (keys included: these are throw-away bench keys).
 *
 * `clean` removes everything a seed created: the game's Redis keys (SCAN `<prefix>:{g:<gameId>}*`, and
 * `*:{g:<gameId>}*` for the empty streams other deployments' workers create for every game they list), its
 * entry in the active-games set, the rows that are not tied to Game by a foreign key (PlayerEvent, Session,
 * Command, AuditLog), then the workspace (cascading to Game, ApiKey, GameServer). Without --workspace it
 * removes every workspace carrying the marker name, so a crashed run is cleaned up by the next one.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../src/config.js';
import { clusterMasters, createRedis, type AppRedis } from '../src/store/redis.js';
import { createDb, type Db } from '../src/store/prisma.js';
import { createWorkspace, createGame } from '../src/games/game-service.js';
import { createKey } from '../src/auth/key-service.js';
import { SCOPES, type Scope } from '../src/auth/scopes.js';
import { KeySpace } from '../src/store/keyspace/key-space.js';
import { HeartbeatService } from '../src/presence/heartbeat-service.js';
import type { HeartbeatRequest, PlayerEntry } from '../src/schemas/heartbeat.js';
import { parseCli } from './support/cli-args.js';

export const DEFAULT_BENCH_PREFIX = 'gisbench';
export const ROSTER_SIZE = 30;
export const MAX_PLAYERS = 50;
const TEAMS = ['red', 'blue', 'green'] as const;
/** Seed heartbeats in flight at once. */
const SEED_SLICE = 100;

export interface FixtureOptions {
  /** Games to create (default 1). */
  games?: number;
  /** Live servers per game (default 2000: see DEFAULT_SERVERS in scripts/bench/heartbeat.ts). */
  servers?: number;
  /** Redis key prefix (default `gisbench`); must not be the app's default `gis`. */
  prefix?: string;
  /** Environment to read DATABASE_URL / REDIS_URL from (default process.env). */
  env?: Record<string, string | undefined>;
}

export interface SeededGame {
  gameId: string;
  keyId: string;
  keyPrefix: string;
  /** Full key `svc_live_<prefix>.<secret>`. */
  key: string;
  /** The secret part of the key (HMAC key of the signature). */
  secret: string;
  heartbeatIntervalSeconds: number;
  /** externalServerIds seeded live, each with {@link initialRoster}. */
  servers: string[];
}

export interface Fixtures {
  workspaceId: string;
  redisPrefix: string;
  databaseUrl: string;
  games: SeededGame[];
}

/** The marker name of the fixture workspace for `prefix`. */
export function workspaceName(prefix: string): string {
  return `bench fixtures ${prefix}`;
}

/** externalServerId of the `i`-th server of the `g`-th game. */
export function serverIdOf(g: number, i: number): string {
  return `bench-g${g}-s${String(i).padStart(4, '0')}`;
}

/** Player `n` of a server: deterministic, so a bench can send exactly the roster the seed stored. */
export function playerOf(serverId: string, n: number): PlayerEntry {
  return { externalId: `${serverId}-p${n}`, username: `player_${serverId.slice(-5)}_${n}`, team: TEAMS[n % TEAMS.length]! };
}

/** The seeded roster of `serverId`: players 0..size-1. */
export function initialRoster(serverId: string, size = ROSTER_SIZE): PlayerEntry[] {
  return Array.from({ length: size }, (_, n) => playerOf(serverId, n));
}

/** A heartbeat body of a seeded server with `players` and no events (what the seed sends). */
export function seedBody(serverId: string, players: PlayerEntry[]): HeartbeatRequest {
  return {
    externalServerId: serverId,
    externalScopeId: 'bench-place-1',
    playerCount: players.length,
    maxPlayers: MAX_PLAYERS,
    sdkVersion: '1.0.0-bench',
    uptimeSeconds: 1,
    region: 'bench-eu',
    players,
    events: [],
    acks: [],
  };
}

function benchConfig(opts: FixtureOptions): Readonly<Config> {
  const prefix = opts.prefix ?? DEFAULT_BENCH_PREFIX;
  const config = loadConfig({ ...(opts.env ?? process.env), REDIS_PREFIX: prefix });
  if (config.redisPrefix === 'gis') throw new Error('refusing to use the app prefix "gis" for fixtures; pick a dedicated one such as gisbench');
  return config;
}

/**
 * Seeds the fixtures described in the file header and returns them.
 * On failure everything created so far is removed before the error is rethrown.
 */
export async function seedFixtures(opts: FixtureOptions = {}): Promise<Fixtures> {
  const config = benchConfig(opts);
  const gameCount = opts.games ?? 1;
  const serverCount = opts.servers ?? 2000;
  const db = createDb(config.databaseUrl, 2);
  const redis = createRedis(config.redisUrl, { name: 'bench-fixtures' });
  const keySpace = new KeySpace(config.redisPrefix);
  let workspaceId: string | undefined;
  try {
    const ws = await createWorkspace(db, workspaceName(config.redisPrefix));
    workspaceId = ws.id;
    const heartbeats = new HeartbeatService(redis, keySpace);
    const games: SeededGame[] = [];
    for (let g = 0; g < gameCount; g++) {
      const game = await createGame(db, { workspaceId: ws.id, name: `bench game ${g}` });
      const key = await createKey(db, game.id, [...SCOPES] as Scope[], 'bench-fixtures');
      const servers = Array.from({ length: serverCount }, (_, i) => serverIdOf(g, i));
      const nowMs = Date.now();
      // In slices: thousands of scripts queued at once outlast the client's command timeout on a busy Redis.
      for (let i = 0; i < servers.length; i += SEED_SLICE) {
        await Promise.all(
          servers.slice(i, i + SEED_SLICE).map((sid) =>
            heartbeats.record({
              gameId: game.id,
              keyId: key.id,
              signature: randomBytes(32).toString('hex'),
              heartbeatIntervalSeconds: game.heartbeatIntervalSeconds,
              deliverCommands: true,
              body: seedBody(sid, initialRoster(sid)),
              nowMs,
            }),
          ),
        );
      }
      games.push({
        gameId: game.id,
        keyId: key.id,
        keyPrefix: key.prefix,
        key: key.key,
        secret: key.key.split('.')[1]!,
        heartbeatIntervalSeconds: game.heartbeatIntervalSeconds,
        servers,
      });
    }
    return { workspaceId: ws.id, redisPrefix: config.redisPrefix, databaseUrl: config.databaseUrl, games };
  } catch (err) {
    if (workspaceId) await cleanWith(db, redis, keySpace, [workspaceId]).catch(() => undefined);
    throw err;
  } finally {
    // HeartbeatService marks the game active fire-and-forget; a PING answered means that ZADD was too.
    await redis.ping().catch(() => undefined);
    await Promise.allSettled([redis.quit(), db.$disconnect()]);
  }
}

export interface CleanResult {
  workspaces: number;
  games: number;
  redisKeys: number;
}

/**
 * Removes fixtures: the workspace `workspaceId`, or every workspace named {@link workspaceName}(prefix).
 * Idempotent.
 */
export async function cleanFixtures(opts: FixtureOptions & { workspaceId?: string } = {}): Promise<CleanResult> {
  const config = benchConfig(opts);
  const db = createDb(config.databaseUrl, 2);
  const redis = createRedis(config.redisUrl, { name: 'bench-fixtures' });
  try {
    const ids = opts.workspaceId
      ? [opts.workspaceId]
      : (await db.workspace.findMany({ where: { name: workspaceName(config.redisPrefix) }, select: { id: true } })).map((w) => w.id);
    return await cleanWith(db, redis, new KeySpace(config.redisPrefix), ids);
  } finally {
    await Promise.allSettled([redis.quit(), db.$disconnect()]);
  }
}

/** Deletes every key matching `pattern` (SCAN + UNLINK); returns how many. */
export async function deleteByPattern(redis: AppRedis, pattern: string): Promise<number> {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  let n = 0;
  // SCAN runs on one node: on a Redis Cluster every master is scanned, and keys are unlinked one by one
  // (a multi-key UNLINK would cross slots).
  const nodes = clusterMasters(redis);
  const cluster = nodes[0] !== redis;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length) n += cluster ? (await Promise.all(keys.map((k) => redis.unlink(k)))).reduce((a, b) => a + b, 0) : await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  return n;
}

/** Any deployment's key space, as SCAN patterns: its prefix is the glob `*`. */
const EVERY_PREFIX = new KeySpace('*');

async function cleanWith(db: Db, redis: AppRedis, keySpace: KeySpace, workspaceIds: string[]): Promise<CleanResult> {
  if (!workspaceIds.length) return { workspaces: 0, games: 0, redisKeys: 0 };
  const gameIds = (await db.game.findMany({ where: { workspaceId: { in: workspaceIds } }, select: { id: true } })).map((g) => g.id);
  let redisKeys = 0;
  for (const gameId of gameIds) {
    // The hash tag's braces are plain characters in a SCAN pattern.
    redisKeys += await deleteByPattern(redis, `${keySpace.game(gameId).base}*`);
    // Workers of other deployments on the same Redis list every game in Postgres and create empty
    // streams for it under their own prefix (MKSTREAM): those are ours too, the game id is ours.
    redisKeys += await deleteByPattern(redis, `${EVERY_PREFIX.game(gameId).base}*`);
  }
  if (gameIds.length) await redis.zrem(keySpace.global.activeGames(), ...gameIds);
  // Tables keyed by gameId without a foreign key to Game do not cascade: delete them explicitly.
  await db.playerEvent.deleteMany({ where: { gameId: { in: gameIds } } });
  await db.session.deleteMany({ where: { gameId: { in: gameIds } } });
  await db.command.deleteMany({ where: { gameId: { in: gameIds } } });
  await db.auditLog.deleteMany({ where: { OR: [{ workspaceId: { in: workspaceIds } }, { gameId: { in: gameIds } }] } });
  await db.auditChainHead.deleteMany({ where: { workspaceId: { in: workspaceIds } } });
  const { count } = await db.workspace.deleteMany({ where: { id: { in: workspaceIds } } });
  return { workspaces: count, games: gameIds.length, redisKeys };
}

const USAGE = 'usage: tsx scripts/fixtures.ts seed [--games N] [--servers N] [--prefix P] | clean [--prefix P] [--workspace ID]';

async function cli(): Promise<void> {
  const args = parseCli(USAGE, {
    allowPositionals: true,
    options: { games: { type: 'string' }, servers: { type: 'string' }, prefix: { type: 'string', default: DEFAULT_BENCH_PREFIX }, workspace: { type: 'string' } },
  });
  const [cmd, ...rest] = args.positionals;
  if (rest.length) args.fail(`unexpected argument ${rest[0]}`);
  const prefix = args.values.prefix;
  if (cmd === 'seed') {
    const fx = await seedFixtures({ prefix, games: args.number('games', 1, 1, 100, { integer: true }), servers: args.number('servers', 2000, 1, 100_000, { integer: true }) });
    console.log(JSON.stringify(fx, null, 2));
  } else if (cmd === 'clean') {
    const r = await cleanFixtures({ prefix, workspaceId: args.values.workspace });
    console.log(JSON.stringify(r));
  } else {
    args.fail(cmd ? `unknown command ${cmd}` : 'expected a command');
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  cli().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );
}
