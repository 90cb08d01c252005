/**
 * What a heartbeat needs of its key and game, held in Redis beside Postgres so that an API process whose
 * memory is cold (restarted, scaled out) can still verify a known key while Postgres is down (issue #29).
 * Postgres stays the source of truth: the verifier reads these records only when Postgres cannot answer
 * (src/auth/key-verifier.ts); they are written through by every change (key create and revoke, game
 * interval and platform settings; a "rotation" is a create plus a revoke) and copied whole from Postgres by
 * {@link reconcileKeyRecords} at every API boot, which repairs what a write missed while Redis was down.
 *
 * Records (hashes, no TTL, `f` = {@link RECORD_FORMAT}: a reader ignores a record of another format):
 * - key `<prefix>:{k:<keyPrefix>}:record`: `id`, `game`, `hash` (the argon2id hash exactly as in
 *   Postgres: the secret itself is never stored), `scopes` (comma-separated), `revokedAt` (ms, only once
 *   revoked). Revocation is never undone, so writers only ever add `revokedAt`: a boot reconcile that read
 *   a row just before a revoke cannot bring the key back.
 * - game `<prefix>:{g:<gameId>}:game`: `ws`, `interval` (seconds), `platform`, `universe`, `nativeBans`
 *   (`1`/`0`); never the cloud API key. The doors version already has its own key, raised by the reconcile.
 *
 * Holding the argon2 hash in Redis means someone who reads Redis can test guesses against it offline, as
 * with a Postgres dump: argon2id and a 256-bit secret make that infeasible; Redis should still be private.
 */
import type { Redis } from 'ioredis';
import type { AppRedis } from '../store/redis.js';
import type { Db } from '../store/prisma.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { raiseDoorsVersion } from '../store/lua/raise-doors-version.js';
import { log } from '../log.js';

/** Format of the records this build writes and reads. */
export const RECORD_FORMAT = '1';
/** Keys read from Postgres per statement by {@link reconcileKeyRecords}. */
const RECONCILE_PAGE = 1000;

/** A key as the verifier needs it: the shape of its Postgres query (ApiKey with the game's workspace and interval). */
export interface KeyRow {
  id: string;
  gameId: string;
  secretHash: string;
  scopes: string[];
  revokedAt: Date | null;
  game: { workspaceId: string; heartbeatIntervalSeconds: number };
}

/** The game columns a game record holds. */
export interface GameColumns {
  id: string;
  workspaceId: string;
  heartbeatIntervalSeconds: number;
  platform: string | null;
  universeId: string | null;
  nativeBans: boolean;
}

/** Reads and writes the key and game records of one deployment's key space. */
export class KeyRecords {
  constructor(private readonly redis: Redis, private readonly keySpace: KeySpace) {}

  /**
   * The key with `keyPrefix` as its records describe it, or null when either record is missing, of
   * another format or incomplete (the caller then needs Postgres). Redis errors propagate.
   */
  async load(keyPrefix: string): Promise<KeyRow | null> {
    const key = await this.redis.hgetall(this.keySpace.global.serverKeyRecord(keyPrefix));
    if (key.f !== RECORD_FORMAT || !key.id || !key.game || !key.hash || key.scopes === undefined) return null;
    const game = await this.redis.hgetall(this.keySpace.game(key.game).gameRecord());
    const interval = Number(game.interval);
    if (game.f !== RECORD_FORMAT || !game.ws || !Number.isInteger(interval)) return null;
    return {
      id: key.id,
      gameId: key.game,
      secretHash: key.hash,
      scopes: key.scopes ? key.scopes.split(',') : [],
      revokedAt: key.revokedAt ? new Date(Number(key.revokedAt)) : null,
      game: { workspaceId: game.ws, heartbeatIntervalSeconds: interval },
    };
  }

  /** Writes the record of key `keyPrefix` (adds `revokedAt` when the row has one, never removes it). */
  async putKey(keyPrefix: string, row: Omit<KeyRow, 'game'>): Promise<void> {
    await this.redis.hset(this.keySpace.global.serverKeyRecord(keyPrefix), keyFields(row));
  }

  /** Writes the record of a game. */
  async putGame(game: GameColumns): Promise<void> {
    await this.redis.hset(this.keySpace.game(game.id).gameRecord(), gameFields(game));
  }

  /** Writes key and game records in one pipeline (one round trip per Cluster node). */
  async putMany(keys: { prefix: string; row: Omit<KeyRow, 'game'> }[], games: GameColumns[]): Promise<void> {
    if (!keys.length && !games.length) return;
    const pipe = this.redis.pipeline();
    for (const k of keys) pipe.hset(this.keySpace.global.serverKeyRecord(k.prefix), keyFields(k.row));
    for (const g of games) pipe.hset(this.keySpace.game(g.id).gameRecord(), gameFields(g));
    for (const [err] of (await pipe.exec()) ?? []) if (err) throw err;
  }

  /** When the records were last copied whole from Postgres (ISO 8601), or null if never. Redis errors propagate. */
  async syncedAt(): Promise<string | null> {
    return this.redis.get(this.keySpace.global.keyRecordsSynced());
  }
}

function keyFields(row: Omit<KeyRow, 'game'>): Record<string, string> {
  return {
    f: RECORD_FORMAT,
    id: row.id,
    game: row.gameId,
    hash: row.secretHash,
    scopes: row.scopes.join(','),
    ...(row.revokedAt ? { revokedAt: String(row.revokedAt.getTime()) } : {}),
  };
}

function gameFields(game: GameColumns): Record<string, string> {
  return {
    f: RECORD_FORMAT,
    ws: game.workspaceId,
    interval: String(game.heartbeatIntervalSeconds),
    platform: game.platform ?? '',
    universe: game.universeId ?? '',
    nativeBans: game.nativeBans ? '1' : '0',
  };
}

const GAME_SELECT = { id: true, workspaceId: true, heartbeatIntervalSeconds: true, platform: true, universeId: true, nativeBans: true, doorsVersion: true } as const;

/**
 * Copies every key and game from Postgres into their records, raises each game's Redis doors version to
 * Postgres's, then stamps the sync time that /readyz looks for. Pages through the keys by id, so memory
 * stays bounded; idempotent, so every API process runs it at boot. Returns how many of each it wrote.
 * @throws Postgres or Redis errors (the caller retries later; the records written so far stay).
 */
export async function reconcileKeyRecords(db: Db, redis: AppRedis, keySpace: KeySpace): Promise<{ keys: number; games: number }> {
  const records = new KeyRecords(redis, keySpace);
  let keys = 0;
  let games = 0;
  let after: string | undefined;
  for (;;) {
    const page = await db.apiKey.findMany({
      ...(after ? { where: { id: { gt: after } } } : {}),
      orderBy: { id: 'asc' },
      take: RECONCILE_PAGE,
      select: { id: true, prefix: true, gameId: true, secretHash: true, scopes: true, revokedAt: true },
    });
    if (!page.length) break;
    await records.putMany(page.map((k) => ({ prefix: k.prefix, row: k })), []);
    keys += page.length;
    after = page[page.length - 1]!.id;
  }
  let gameAfter: string | undefined;
  for (;;) {
    const page = await db.game.findMany({
      ...(gameAfter ? { where: { id: { gt: gameAfter } } } : {}),
      orderBy: { id: 'asc' },
      take: RECONCILE_PAGE,
      select: GAME_SELECT,
    });
    if (!page.length) break;
    await records.putMany([], page);
    await Promise.all(page.map((g) => raiseDoorsVersion(redis, keySpace, g.id, g.doorsVersion)));
    games += page.length;
    gameAfter = page[page.length - 1]!.id;
  }
  await redis.set(keySpace.global.keyRecordsSynced(), new Date().toISOString());
  return { keys, games };
}

/** Seconds between attempts of {@link startKeyRecordReconcile} while Postgres or Redis fails it. */
export const RECONCILE_RETRY_SECONDS = 5;

/**
 * Runs {@link reconcileKeyRecords} in the background until it succeeds once (an API that boots during a
 * Postgres outage serves from the records an earlier boot wrote and reconciles when Postgres returns).
 * Logs one line per outcome (no secret: counts only). Returns a stop function for shutdown.
 */
export function startKeyRecordReconcile(db: Db, redis: AppRedis, keySpace: KeySpace): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;
  const attempt = () => {
    const started = Date.now();
    reconcileKeyRecords(db, redis, keySpace).then(
      (n) => log.info('key records reconciled from postgres', { ...n, ms: Date.now() - started }),
      (err: unknown) => {
        if (failures++ === 0) log.warn('key records not reconciled; retrying until postgres and redis answer', { err: String(err).split('\n')[0], retrySeconds: RECONCILE_RETRY_SECONDS });
        if (!stopped) timer = setTimeout(attempt, RECONCILE_RETRY_SECONDS * 1000);
      },
    );
  };
  attempt();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
