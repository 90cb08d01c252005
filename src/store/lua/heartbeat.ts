/**
 * The typed builder of a `heartbeat.lua` call (one heartbeat in one round trip; the script's header lists
 * what it reads): the caller names what the heartbeat carries, this puts the game's keys in the order the
 * script reads them by index (server hash .. doors version, the old user locations, then the quota
 * count's two keys, then the replay buckets) and adds the replay claim, quota count and user locations of lib/.
 */
import { hash } from 'node:crypto';
import { SERVER_TTL_SECONDS, type GameKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';
import { quotaScriptArgs, type QuotaCount } from './lib/quota-count.js';
import { replayClaim } from './lib/replay-claim.js';
import { userLocationArgs } from './lib/user-location.js';

/** What one heartbeat call needs, by name. */
export interface HeartbeatCall {
  /** The server's externalServerId. */
  sid: string;
  /** Server time, ms. */
  nowMs: number;
  /** The signing key's id and the request's signature (hex, as sent): the replay claim. */
  keyId: string;
  signature: string;
  /**
   * The request's signed timestamp, s: how long its replay claim is kept (lib/replay-claim.ts; absent: as
   * long as any), and, with the uptime, whether it waited past a later heartbeat of its server (then its
   * roster is not applied: heartbeat.lua, `stale`; absent: always applied).
   */
  signedAtSeconds?: number;
  /** The server's meta, as the heartbeat states it ('' for no scope or region) and the game's interval (s). */
  meta: { scopeId: string; playerCount: number; maxPlayers: number; sdkVersion: string; uptimeSeconds: number; region: string; intervalSeconds: number };
  /** The roster as JSON `[[externalId, username, team], ...]`. */
  rosterJson: string;
  /** The roster's distinct externalIds, in roster order. */
  userIds: string[];
  /** The events as a JSON array, or '' for none. */
  eventsJson: string;
  acks: string[];
  failures: { id: string; reason: string }[];
  /** Whether commands are delivered (the key has the `commands` scope). */
  deliverCommands: boolean;
  /** The (key, server) heartbeat quota. */
  quota: QuotaCount;
}

/** KEYS and named arguments of `heartbeat.lua` for `call` in `keys`' game. */
export function heartbeatCall(keys: GameKeys, call: HeartbeatCall): ScriptCall {
  const { sid, meta } = call;
  const replay = replayClaim(keys, call.keyId, call.signature, call.nowMs, call.signedAtSeconds);
  const quota = quotaScriptArgs(keys, call.keyId, call.quota, call.nowMs);
  const locations = userLocationArgs(keys);
  return {
    keys: [
      keys.server(sid),
      keys.servers(),
      keys.roster(sid),
      locations.keys[0],
      keys.sessionStream(),
      keys.keysUsed(),
      keys.eventStream(),
      keys.commandLog(),
      keys.pendingCommands(sid),
      keys.dispatchedCommands(sid),
      keys.doorsVersion(),
      locations.keys[1],
      ...quota.keys,
      ...replay.keys,
    ],
    args: {
      sid,
      t: String(call.nowMs),
      m: { sc: meta.scopeId, pc: meta.playerCount, mp: meta.maxPlayers, sdk: meta.sdkVersion, up: meta.uptimeSeconds, rg: meta.region, iv: meta.intervalSeconds },
      rj: call.rosterJson,
      // the server hash keeps this digest, not the roster bytes, to recognise an unchanged roster
      rd: hash('sha1', call.rosterJson, 'base64'),
      u: call.userIds,
      ev: call.eventsJson,
      ak: call.acks,
      fl: call.failures,
      st: SERVER_TTL_SECONDS,
      dc: call.deliverCommands,
      // with the uptime, what tells a heartbeat that waited past a later one (heartbeat.lua, `stale`)
      sa: call.signedAtSeconds ?? -1,
      keyId: call.keyId,
      ...replay.args,
      ...quota.args,
      ...locations.args,
    },
  };
}
