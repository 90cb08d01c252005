/**
 * The typed builder of a `locate-user.lua` call (where one user is in one game): KEYS = user locations,
 * the same of the layout before 2026-11-29 (lib/user-location.ts).
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';
import { userLocationArgs } from './lib/user-location.js';

/** KEYS and named arguments of `locate-user.lua` for user `externalId` in `keys`' game; it returns the externalServerId or ''. */
export function locateUserCall(keys: GameKeys, call: { externalId: string }): ScriptCall {
  const locations = userLocationArgs(keys);
  return { keys: locations.keys, args: { u: call.externalId, ...locations.args } };
}
