/**
 * The typed builder of an `expire-commands.lua` call (the game's due commands expired, a batch at a
 * time): KEYS = the game's expiry zset, its `cmdlog` stream.
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';

/** KEYS and named arguments of `expire-commands.lua`: commands due at `nowMs` (ms), at most `batch` looked at. */
export function expireCommandsCall(keys: GameKeys, call: { nowMs: number; batch: number }): ScriptCall {
  return { keys: [keys.commandExpiry(), keys.commandLog()], args: { b: keys.base, now: call.nowMs, n: call.batch } };
}
