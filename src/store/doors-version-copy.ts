/**
 * The Redis copy of a game's doors version (`GameKeys.doorsVersion`; what it means and when it is
 * raised: src/doors/doors-version.ts). A store operation of its own so that the key-record reconcile
 * (src/auth/key-records.ts) can raise it without importing the doors domain.
 */
import type { AppRedis } from './redis.js';
import type { KeySpace } from './keyspace/key-space.js';

/** Raises the Redis copy to `version` (no-op when it is already there or above); returns the stored version. */
export async function raiseDoorsVersion(redis: AppRedis, keySpace: KeySpace, gameId: string, version: number): Promise<number> {
  const key = keySpace.game(gameId).doorsVersion();
  return Number(await redis.runScript('raiseDoorsVersion', [key], { v: version }));
}
