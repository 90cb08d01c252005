/**
 * The typed builder of a `sweep-server.lua` call (a server that missed its heartbeats is gone: its
 * sessions closed, its queues released): KEYS = server hash, live servers, roster, where, sessions
 * stream, pending list, dispatched zset.
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';

/** KEYS and named arguments of `sweep-server.lua`: server `sid` is stale when its last heartbeat (ms) is at or before `cutoffMs`. */
export function sweepServerCall(keys: GameKeys, call: { sid: string; cutoffMs: number }): ScriptCall {
  const { sid } = call;
  return {
    keys: [keys.server(sid), keys.servers(), keys.roster(sid), keys.where(), keys.sessionStream(), keys.pendingCommands(sid), keys.dispatchedCommands(sid)],
    args: { b: keys.base, sid, cutoff: call.cutoffMs },
  };
}
