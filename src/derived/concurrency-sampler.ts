/**
 * Samples concurrent players per game once a minute from the live rosters in Redis into
 * ConcurrencySample (issue #4 analytics: "concurrent players over time per game (one-minute
 * resolution)"). A sample is keyed by the UTC minute it was taken in; players = the sum of the roster
 * sizes of the game's live servers (a server not yet declared gone by the liveness sweep still counts),
 * servers = how many of them there are. Taking a minute's sample again overwrites it with the newer view,
 * so two workers sampling the same minute leave one row. Games without live servers get no row (analytics
 * fills such minutes from the stored sessions).
 */
import type { Redis } from 'ioredis';
import type { Db } from '../store/prisma.js';
import { GameKeys } from '../store/keys.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** One sample per game per UTC minute, ms. */
export const MINUTE_MS = 60_000;

/** What one sampling pass stored. */
export interface SampleResult {
  /** The UTC minute the samples were stored under. */
  minute: Date;
  /** Games that got a sample. */
  games: number;
}

/** Roster sizes of the live servers of one game (one pipeline; every key is in the game's slot). */
async function liveCounts(redis: Redis, keys: GameKeys): Promise<{ players: number; servers: number }> {
  const sids = await redis.zrange(keys.servers(), '0', '-1');
  if (!sids.length) return { players: 0, servers: 0 };
  const pipe = redis.pipeline();
  for (const sid of sids) pipe.exists(keys.server(sid)).hlen(keys.roster(sid));
  const replies = (await pipe.exec()) ?? [];
  let players = 0;
  let servers = 0;
  for (let i = 0; i < sids.length; i++) {
    const [existsErr, exists] = replies[2 * i] ?? [null, 0];
    const [lenErr, len] = replies[2 * i + 1] ?? [null, 0];
    if (existsErr) throw existsErr;
    if (lenErr) throw lenErr;
    if (Number(exists)) {
      servers++;
      players += Number(len);
    }
  }
  return { players, servers };
}

/**
 * Samples `gameIds` at server time `nowMs` (ms) and upserts one row per game with live servers.
 * @throws on Redis or Postgres failure (the next run samples again).
 */
export async function sampleConcurrency(redis: Redis, db: Db, keySpace: KeySpace, gameIds: readonly string[], nowMs: number): Promise<SampleResult> {
  const minute = new Date(Math.floor(nowMs / MINUTE_MS) * MINUTE_MS);
  const ids: string[] = [];
  const players: number[] = [];
  const servers: number[] = [];
  for (const gameId of gameIds) {
    const c = await liveCounts(redis, keySpace.game(gameId));
    if (!c.servers) continue;
    ids.push(gameId);
    players.push(c.players);
    servers.push(c.servers);
  }
  if (ids.length) {
    await db.$executeRaw`
      INSERT INTO "ConcurrencySample" ("gameId", minute, players, servers)
      SELECT g, ${minute}::timestamptz, p, s FROM unnest(${ids}::uuid[], ${players}::int[], ${servers}::int[]) AS v(g, p, s)
      WHERE EXISTS (SELECT 1 FROM "Game" WHERE id = v.g) -- a game deleted while still live in Redis
      ON CONFLICT ("gameId", minute) DO UPDATE SET players = EXCLUDED.players, servers = EXCLUDED.servers`;
  }
  return { minute, games: ids.length };
}
