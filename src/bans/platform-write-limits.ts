/**
 * The platform's user-restriction write limits (spec: Limits: "10 per second overall; 2 per minute per
 * user"), enforced before every HTTP attempt by one Lua script (src/store/lua/ban-write-slot.lua).
 *
 * Why sliding windows in Redis rather than BullMQ's rate limiter: BullMQ's limiter is one budget per
 * queue, while these limits are per universe and per user, dimensions that appear at run time; a queue
 * (and worker) per universe would not scale with the number of games. Why windows rather than token
 * buckets: a bucket of 2 refilled at 2/min lets 3–4 writes into some 60 s span; a window log never
 * exceeds the stated count in any window. Both windows are taken atomically (no slot is used unless both
 * have room) on Redis's clock, so worker processes on several hosts share one budget. A 429's
 * Retry-After pauses the whole universe, not only the write that got it.
 *
 * The windows are a little longer than the platform's (margins below): a write is counted here when it
 * leaves, by the platform when it arrives, and the time between the two varies (event loop, connection
 * set-up, network). 200 ms on the universe's 1 s costs a sixth of the throughput (8.3 writes/s) and keeps
 * 429s away; 1 s on the user's minute costs nothing noticeable.
 */
import type { AppRedis } from '../store/redis.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { banWriteSlotCall } from '../store/lua/ban-write-slot.js';

export interface PlatformWriteLimits {
  /** Writes per universe (= per game here: each game has its own universe) per window. */
  universeMax: number;
  /** Universe window, ms (the platform's 1 s plus a 200 ms margin). */
  universeWindowMs: number;
  /** Writes per user per window. */
  userMax: number;
  /** User window, ms (the platform's 60 s plus a 1 s margin). */
  userWindowMs: number;
}

export const DEFAULT_WRITE_LIMITS: Readonly<PlatformWriteLimits> = Object.freeze({
  universeMax: 10,
  universeWindowMs: 1_200,
  userMax: 2,
  userWindowMs: 61_000,
});

/**
 * Takes one write slot for `externalId` in `gameId`'s universe. `member` must be unique per HTTP attempt.
 * @returns 0 when the write may be sent now, else the ms to wait before asking again.
 */
export async function reserveWriteSlot(redis: AppRedis, keySpace: KeySpace, gameId: string, externalId: string, member: string, limits: PlatformWriteLimits): Promise<number> {
  const keys = keySpace.game(gameId);
  const call = banWriteSlotCall(keys, {
    externalId,
    member,
    universeWindowMs: limits.universeWindowMs,
    universeMax: limits.universeMax,
    userWindowMs: limits.userWindowMs,
    userMax: limits.userMax,
  });
  const wait = await redis.runScript('banWriteSlot', call.keys, call.args);
  return Number(wait);
}

/** Pauses every write of `gameId`'s universe for `ms` (a 429's Retry-After). */
export async function pauseWrites(redis: AppRedis, keySpace: KeySpace, gameId: string, ms: number): Promise<void> {
  if (ms > 0) await redis.set(keySpace.game(gameId).banWritePause(), '1', 'PX', Math.ceil(ms));
}
