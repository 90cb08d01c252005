/**
 * Remembers which games were throttled recently, for the ingest health check (src/limits/ingest-health.ts):
 * `GlobalKeys.throttledGames()` zset gameId → last 429 ms. The per-minute counts live under the game's
 * hash tag and are written by the Lua script that refused the request; this global index cannot be (a
 * script may only touch one Cluster slot), so it is written here, off the response path, at most once a
 * second per game per process. A lost mark only delays a warning: the check also revisits games with an
 * open warning, and the next 429 marks again.
 */
import type { Redis } from 'ioredis';
import { log } from '../log.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Per-process writer of the throttled-games index (see the module comment). */
export class ThrottleMarks {
  private readonly last = new Map<string, number>();
  private readonly key: string;

  constructor(private readonly redis: Redis, keySpace: KeySpace) {
    this.key = keySpace.global.throttledGames();
  }

  /** Records that `gameId` answered a 429 at `nowMs` (ms); never throws, never waits. */
  mark(gameId: string, nowMs: number): void {
    if (nowMs - (this.last.get(gameId) ?? 0) < 1000) return;
    this.last.set(gameId, nowMs);
    this.redis.zadd(this.key, nowMs, gameId).catch((err: unknown) => log.warn('could not mark game throttled', { gameId, err: String(err) }));
  }
}
