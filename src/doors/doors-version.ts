/**
 * The doors version of a game: `Game.doorsVersion` in Postgres (durable) mirrored in Redis
 * (`GameKeys.doorsVersion`, read by every door request and heartbeat in the same round trip as their
 * other work). It is the manifest's ETag and part of every decision-cache key, so raising it retires
 * every cached decision and every process's cached door definitions of the game at once.
 *
 * Order of a change: Postgres transaction (the change + the increment) commits first, then Redis is
 * raised. A reader that sees the new Redis version therefore loads definitions that include the change.
 * Redis is only ever raised (Lua compare-and-set: src/store/lua/raise-doors-version.ts), so concurrent changes finishing out of order cannot
 * bring an older version back.
 */
import type { Prisma } from '@prisma/client';
import type { AppRedis } from '../store/redis.js';
import type { Db } from '../store/prisma.js';
import { log } from '../log.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { raiseDoorsVersion } from '../store/lua/raise-doors-version.js';

/** Increments `Game.doorsVersion` inside the caller's transaction; returns the new version. */
export async function incrementDoorsVersion(tx: Prisma.TransactionClient, gameId: string): Promise<number> {
  const game = await tx.game.update({ where: { id: gameId }, data: { doorsVersion: { increment: 1 } }, select: { doorsVersion: true } });
  return game.doorsVersion;
}

/**
 * The doors version for the heartbeat `config` (issue #5: "config carries the current manifest version").
 * The heartbeat script reads the Redis copy in its own round trip; only when Redis does not hold it (a
 * game whose doors never changed since Redis was last empty) is it initialised from Postgres here, once
 * per game at a time (single-flight); if that fails the version is reported as unknown (null).
 */
export class DoorsVersionReader {
  private readonly inflight = new Map<string, Promise<number | null>>();

  constructor(private readonly redis: AppRedis, private readonly db: Db, private readonly keySpace: KeySpace) {}

  /**
   * `fromRedis` when Redis held a version, else the version initialised from Postgres, or null when it
   * cannot be determined right now. Never rejects on Postgres failure.
   */
  resolve(gameId: string, fromRedis: number | null): Promise<number | null> | number {
    if (fromRedis !== null) return fromRedis;
    let pending = this.inflight.get(gameId);
    if (!pending) {
      pending = this.initialise(gameId).finally(() => this.inflight.delete(gameId));
      this.inflight.set(gameId, pending);
    }
    return pending;
  }

  private async initialise(gameId: string): Promise<number | null> {
    try {
      const game = await this.db.game.findUnique({ where: { id: gameId }, select: { doorsVersion: true } });
      return game ? await raiseDoorsVersion(this.redis, this.keySpace, gameId, game.doorsVersion) : null;
    } catch (err) {
      log.warn('could not initialise the doors version', { gameId, err: String(err) });
      return null;
    }
  }
}
