/**
 * Which games the workers should look at. The API marks a game active (at most once a second per
 * process); because that mark is a separate command from the heartbeat script, the directory also
 * lists every game in Postgres every {@link FULL_SCAN_MS}, so a lost mark delays a flush but never
 * loses one.
 */
import type { Redis } from 'ioredis';
import type { Db } from './prisma.js';
import { GlobalKeys } from './keys.js';
import type { KeySpace } from './keyspace/key-space.js';

export const FULL_SCAN_MS = 30_000;
/** Active marks older than this are pruned (the full scan still covers those games). */
const ACTIVE_WINDOW_MS = 10 * 60_000;

export class GameDirectory {
  private allGames: string[] = [];
  private loadedAt = 0;
  /** When each caller last received the full list: one directory serves every role of a process. */
  private readonly lastFullFor = new Map<string, number>();
  private readonly keys: GlobalKeys;

  constructor(private readonly redis: Redis, private readonly db: Db, keySpace: KeySpace) {
    this.keys = keySpace.global;
  }

  /**
   * Game ids `caller` (a role name) should visit now: recently active ones, plus every game when that
   * caller's full scan is due (every {@link FULL_SCAN_MS}; the Postgres list is loaded at most that often).
   */
  async gamesToVisit(caller: string, nowMs = Date.now()): Promise<string[]> {
    await this.redis.zremrangebyscore(this.keys.activeGames(), '-inf', String(nowMs - ACTIVE_WINDOW_MS));
    const active = await this.redis.zrange(this.keys.activeGames(), '0', '-1');
    if (nowMs - (this.lastFullFor.get(caller) ?? 0) < FULL_SCAN_MS) return active;
    if (nowMs - this.loadedAt >= FULL_SCAN_MS) {
      this.allGames = (await this.db.game.findMany({ select: { id: true } })).map((g) => g.id);
      this.loadedAt = nowMs;
    }
    this.lastFullFor.set(caller, nowMs);
    return [...new Set([...active, ...this.allGames])];
  }
}
