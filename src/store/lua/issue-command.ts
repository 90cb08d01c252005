/**
 * The typed builder of an `issue-command.lua` call (a command queued for its server or waiting user):
 * KEYS = the command hash, live servers, user locations, the game's expiry zset, the `cmdlog` stream, old
 * user locations (lib/user-location.ts).
 */
import type { GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';
import { userLocationArgs } from './lib/user-location.js';

/** What one command issue needs, by name (the script's header says what each holds). */
export interface IssueCommandCall {
  id: string;
  /** The command entry's JSON, `{"id","type","payload","issuedAt","expiresAt"}` in that order. */
  entryJson: string;
  issuedAtMs: number;
  expiresAtMs: number;
  /** The target server, or '' for a user's queue; the target user, or ''. */
  server: string;
  user: string;
  /** Most open commands a server, and a waiting user, may hold. */
  serverCap: number;
  userCap: number;
  /** The command hash's TTL, s. */
  ttlSeconds: number;
}

/** KEYS and named arguments of `issue-command.lua` for `call` in `keys`' game. */
export function issueCommandCall(keys: GameKeys, call: IssueCommandCall): ScriptCall {
  const locations = userLocationArgs(keys);
  return {
    keys: [keys.command(call.id), keys.servers(), locations.keys[0], keys.commandExpiry(), keys.commandLog(), locations.keys[1]],
    args: {
      id: call.id,
      json: call.entryJson,
      iat: String(call.issuedAtMs),
      exp: String(call.expiresAtMs),
      ts: call.server,
      u: call.user,
      sc: call.serverCap,
      uc: call.userCap,
      ttl: call.ttlSeconds,
      ...locations.args,
    },
  };
}
