/**
 * The typed builder of a `raise-doors-version.lua` call (a game's doors version in Redis raised, never
 * lowered), and the call itself: the doors service (src/doors/doors-version.ts) and the key records'
 * rebuild (src/auth/key-records.ts) both raise it.
 */
import type { GameKeys } from '../keys.js';
import type { KeySpace } from '../keyspace/key-space.js';
import type { AppRedis, ScriptCall } from '../redis.js';

/** KEYS and named arguments of `raise-doors-version.lua`: raise `keys`' game to `version`. */
export function raiseDoorsVersionCall(keys: GameKeys, call: { version: number }): ScriptCall {
  return { keys: [keys.doorsVersion()], args: { v: call.version } };
}

/** Raises the Redis copy of `gameId`'s doors version to `version` (no-op when it is already there or above); returns the stored version. */
export async function raiseDoorsVersion(redis: AppRedis, keySpace: KeySpace, gameId: string, version: number): Promise<number> {
  const call = raiseDoorsVersionCall(keySpace.game(gameId), { version });
  return Number(await redis.runScript('raiseDoorsVersion', call.keys, call.args));
}
