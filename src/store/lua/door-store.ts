/**
 * The typed builder of a `door-store.lua` call (the write side of a door request: fresh decisions cached,
 * the access-log entry appended): KEYS = the decision hash heads of the current and previous window under
 * the doors version the decisions were made under, the access stream and that doors version's context
 * ordinals.
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';

/**
 * Most subject contexts given an ordinal per doors version (door-store.lua names the rest in full, ~24 B
 * more per pointer): bounds `{g}:doors:ctx:<v>` to ~50 KB while the doors stay unchanged.
 */
export const DOOR_CONTEXT_ORDINALS_MAX = 1000;

/** What one door store needs, by name (the script's header says what each holds). */
export interface DoorStoreCall {
  doorsVersion: string;
  /** The door-cache window, floor(now / TTL ms). */
  window: number;
  externalId: string;
  subjectVersion: string;
  /** The subject context's name, `<workspace version>:<context key>` (the script interns it as an ordinal). */
  contextName: string;
  /** Server time, ms. */
  nowMs: number;
  /** Flat: doorKey, expiresAtMs (string), packed decision, ... */
  entries: string[];
  /** Ms until the current window's hash may expire. */
  expireInMs: number;
  /** The asking server ('' when none). */
  externalServerId: string;
  /** The access-log entry's JSON array, '' for none. */
  logJson: string;
}

/** KEYS and named arguments of `door-store.lua` for `call` in `keys`' game. */
export function doorStoreCall(keys: GameKeys, call: DoorStoreCall): ScriptCall {
  return {
    keys: [keys.doorDecisions(call.doorsVersion, call.window), keys.doorDecisions(call.doorsVersion, call.window - 1), keys.accessStream(), keys.doorContexts(call.doorsVersion)],
    args: { u: call.externalId, sv: call.subjectVersion, c: call.contextName, t: String(call.nowMs), e: call.entries, x: call.expireInMs, s: call.externalServerId, l: call.logJson, oc: DOOR_CONTEXT_ORDINALS_MAX },
  };
}
