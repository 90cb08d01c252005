/**
 * The typed builder of a `ban-write-slot.lua` call (one platform write slot of a game's universe and
 * user): KEYS = universe window zset, user window zset, pause key.
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';

/** What one slot request needs, by name: the attempt's unique member and the two sliding windows (ms, most writes). */
export interface BanWriteSlotCall {
  externalId: string;
  member: string;
  universeWindowMs: number;
  universeMax: number;
  userWindowMs: number;
  userMax: number;
}

/** KEYS and named arguments of `ban-write-slot.lua` for `call` in `keys`' game. */
export function banWriteSlotCall(keys: GameKeys, call: BanWriteSlotCall): ScriptCall {
  return {
    keys: [keys.banWriteSlots(), keys.banWriteUserSlots(call.externalId), keys.banWritePause()],
    args: { id: call.member, uw: call.universeWindowMs, um: call.universeMax, sw: call.userWindowMs, sm: call.userMax },
  };
}
