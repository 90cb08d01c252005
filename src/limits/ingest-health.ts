/**
 * Ingest health warnings (spec: Events, "Persistent throttling of one game appears in the workspace as an
 * ingest health warning visible to the operator"; issue #7 Limits).
 *
 * Every 429 a quota answers is counted in the game's per-minute throttle hash
 * ({@link GameKeys.throttledInMinute}, by `<kind>:<server or user>`), inside the same Lua script that
 * refused the request. The `ingest-health` worker role runs {@link checkIngestHealth} every minute:
 *
 * - **Raise**: a game with 429s in at least {@link PERSISTENT_MINUTES} of the last
 *   {@link THROTTLE_HISTORY_MINUTES} minutes is persistently throttled. Its open warning of kind
 *   {@link THROTTLING_WARNING} is refreshed (`lastAt`, `count` + 1, message with the figures) or created.
 *   A client that follows the returned interval and the door TTL is never throttled (src/limits/quotas.ts),
 *   so this means a misbehaving integration (a heartbeat loop, door checks that ignore the cache).
 * - **Resolve**: an open warning whose game had no 429 at all in the last {@link THROTTLE_HISTORY_MINUTES}
 *   minutes gets `resolvedAt`. The gap between the two thresholds keeps a borderline game from flapping.
 *
 * `count` is the number of checks (about one a minute) that found the game persistently throttled.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../store/prisma.js';
import { THROTTLE_COUNT_TTL_SECONDS, THROTTLE_HISTORY_MINUTES } from '../store/keys.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Throttled minutes (out of the last {@link THROTTLE_HISTORY_MINUTES}) that make throttling persistent. */
export const PERSISTENT_MINUTES = 5;
/** `IngestHealthWarning.kind` of persistent throttling. */
export const THROTTLING_WARNING = 'persistent_throttling';

const MINUTE_MS = 60_000;

/** 429s of one game in one minute. */
export interface ThrottledMinute {
  /** Start of the minute. */
  minute: Date;
  /** Requests answered 429 in it. */
  throttled: number;
  /** The same by `<kind>:<server or user>`, e.g. `hb:server-7`. */
  by: Record<string, number>;
}

/** The last {@link THROTTLE_HISTORY_MINUTES} minutes up to and including the one of `nowMs`, oldest first. */
export async function throttleHistory(redis: Redis, keySpace: KeySpace, gameId: string, nowMs: number): Promise<ThrottledMinute[]> {
  const keys = keySpace.game(gameId);
  const last = Math.floor(nowMs / MINUTE_MS);
  const minutes = Array.from({ length: THROTTLE_HISTORY_MINUTES }, (_, i) => last - THROTTLE_HISTORY_MINUTES + 1 + i);
  const pipe = redis.pipeline();
  for (const m of minutes) pipe.hgetall(keys.throttledInMinute(m));
  const replies = (await pipe.exec()) ?? [];
  return minutes.map((m, i) => {
    const [err, value] = replies[i] ?? [null, {}];
    if (err) throw err;
    const by: Record<string, number> = {};
    let throttled = 0;
    for (const [who, n] of Object.entries((value ?? {}) as Record<string, string>)) {
      by[who] = Number(n);
      throttled += Number(n);
    }
    return { minute: new Date(m * MINUTE_MS), throttled, by };
  });
}

/** Whether `history` is persistent throttling ({@link PERSISTENT_MINUTES} or more throttled minutes). */
export function isPersistent(history: ThrottledMinute[]): boolean {
  return history.filter((m) => m.throttled > 0).length >= PERSISTENT_MINUTES;
}

/** One sentence with the figures, e.g. `412 requests answered 429 in 7 of the last 10 minutes; most: hb:server-7 (400)`. */
export function describeThrottling(history: ThrottledMinute[]): string {
  const total = history.reduce((n, m) => n + m.throttled, 0);
  const minutes = history.filter((m) => m.throttled > 0).length;
  const byWho = new Map<string, number>();
  for (const m of history) for (const [who, n] of Object.entries(m.by)) byWho.set(who, (byWho.get(who) ?? 0) + n);
  const top = [...byWho].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([who, n]) => `${who} (${n})`);
  return `${total} requests answered 429 in ${minutes} of the last ${history.length} minutes; most: ${top.join(', ') || '-'}`;
}

/** An ingest health warning as the console and `admin health` show it. */
export interface HealthWarningView {
  id: string;
  gameId: string;
  kind: string;
  message: string;
  firstAt: Date;
  lastAt: Date;
  count: number;
  resolvedAt: Date | null;
}

/** The game's open warnings and those resolved in the last day, newest first. */
export async function listHealthWarnings(db: Db, gameId: string, nowMs: number): Promise<HealthWarningView[]> {
  return db.ingestHealthWarning.findMany({
    where: { gameId, OR: [{ resolvedAt: null }, { resolvedAt: { gte: new Date(nowMs - 24 * 3600_000) } }] },
    orderBy: [{ lastAt: 'desc' }, { id: 'asc' }],
    take: 100,
  });
}

/** What one {@link checkIngestHealth} run did. */
export interface HealthCheckResult {
  checked: number;
  raised: string[];
  refreshed: string[];
  resolved: string[];
}

/**
 * Raises, refreshes and resolves throttling warnings (see the module comment) for the games throttled
 * recently and the games with an open throttling warning, at server time `nowMs`.
 * @throws on Redis or Postgres failure (the next run checks again).
 */
export async function checkIngestHealth(redis: Redis, db: Db, keySpace: KeySpace, nowMs: number): Promise<HealthCheckResult> {
  const recent = keySpace.global.throttledGames();
  await redis.zremrangebyscore(recent, '-inf', String(nowMs - THROTTLE_COUNT_TTL_SECONDS * 1000));
  const throttled = await redis.zrange(recent, '0', '-1');
  const open = await db.ingestHealthWarning.findMany({ where: { kind: THROTTLING_WARNING, resolvedAt: null }, select: { id: true, gameId: true } });
  const openByGame = new Map(open.map((w) => [w.gameId, w.id]));
  const result: HealthCheckResult = { checked: 0, raised: [], refreshed: [], resolved: [] };
  for (const gameId of new Set([...throttled, ...openByGame.keys()])) {
    result.checked++;
    const history = await throttleHistory(redis, keySpace, gameId, nowMs);
    const openId = openByGame.get(gameId);
    const at = new Date(nowMs);
    if (isPersistent(history)) {
      const message = describeThrottling(history);
      if (openId) {
        await db.ingestHealthWarning.update({ where: { id: openId }, data: { lastAt: at, message, count: { increment: 1 } } });
        result.refreshed.push(gameId);
      } else if (await db.game.findUnique({ where: { id: gameId }, select: { id: true } })) {
        await db.ingestHealthWarning.create({ data: { gameId, kind: THROTTLING_WARNING, message, firstAt: at, lastAt: at } });
        result.raised.push(gameId);
      }
    } else if (openId && history.every((m) => m.throttled === 0)) {
      await db.ingestHealthWarning.update({ where: { id: openId }, data: { resolvedAt: at } });
      result.resolved.push(gameId);
    }
  }
  return result;
}
