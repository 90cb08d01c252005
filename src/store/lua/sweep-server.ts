/**
 * The typed builder of a `sweep-server.lua` call (a server that missed its heartbeats is gone: its
 * sessions closed, its queues released): KEYS = server hash, live servers, roster, user locations,
 * sessions stream, pending list, dispatched zset, old user locations (lib/user-location.ts).
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';
import { userLocationArgs } from './lib/user-location.js';

/** KEYS and named arguments of `sweep-server.lua`: server `sid` is stale when its last heartbeat (ms) is at or before `cutoffMs`. */
export function sweepServerCall(keys: GameKeys, call: { sid: string; cutoffMs: number }): ScriptCall {
  const { sid } = call;
  const locations = userLocationArgs(keys);
  return {
    keys: [keys.server(sid), keys.servers(), keys.roster(sid), locations.keys[0], keys.sessionStream(), keys.pendingCommands(sid), keys.dispatchedCommands(sid), locations.keys[1]],
    args: { sid, cutoff: call.cutoffMs, ...locations.args },
  };
}
