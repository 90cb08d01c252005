/**
 * POST /api/v1/game/heartbeat (spec: Endpoints › POST heartbeat). Scopes: `heartbeat`; non-empty
 * `events` also needs `events`; non-empty `acks` or `failures` also needs `commands` (403
 * `scope_missing`, nothing stored). Response 200 is exactly `{commands, config, serverTime}`.
 */
import type { RequestHandler } from 'express';
import type { KeyVerifier, VerifiedKey } from '../../../auth/key-verifier.js';
import type { HeartbeatService } from '../../../presence/heartbeat-service.js';
import type { DoorsVersionReader } from '../../../doors/doors-version.js';
import { compileValidator } from '../../../schemas/validator.js';
import { heartbeatRequestSchema, type HeartbeatRequest } from '../../../schemas/heartbeat.js';
import { authenticateRequest, requireScope } from '../authenticate.js';
import { parseJson } from '../parse-json.js';
import { sendJson } from '../send-json.js';

const validateHeartbeat = compileValidator<HeartbeatRequest>(heartbeatRequestSchema);

/** Values of `config` read per request from Redis by the heartbeat script. */
export interface LiveConfig {
  /** Door cache TTL in seconds (config `DOOR_CACHE_TTL_SECONDS`); absent when doors are not wired. */
  doorCacheTtlSeconds?: number;
  /** The game's doors (manifest) version; absent while unknown. A change means: refetch the manifest. */
  doorsVersion?: number | null;
}

/**
 * The `config` object of a heartbeat response for `key`'s game, as JSON. Fields: `heartbeatIntervalSeconds` (seconds, the interval the client must follow),
 * `doorCacheTtlSeconds` (seconds, longest a door decision may be cached) and `doorsVersion` (the manifest
 * version; refetch the manifest when it changes). Every field is documented in `HEARTBEAT_CONFIG_FIELDS`
 * (src/schemas/heartbeat.ts), the docs/api.md table "Heartbeat config" and the OpenAPI `HeartbeatConfig`;
 * test/openapi/heartbeat-config.test.ts fails when a field sent here is missing there.
 */
export const baseConfig = (key: VerifiedKey, live: LiveConfig): string =>
  JSON.stringify({
    heartbeatIntervalSeconds: key.heartbeatIntervalSeconds,
    ...(live.doorCacheTtlSeconds !== undefined ? { doorCacheTtlSeconds: live.doorCacheTtlSeconds } : {}),
    ...(typeof live.doorsVersion === 'number' ? { doorsVersion: live.doorsVersion } : {}),
  });

/** Door values of `config`: the TTL, and where a doors version Redis lacks comes from (src/doors/doors-version.ts). */
export interface HeartbeatDoorConfig {
  doorCacheTtlSeconds: number;
  versions: DoorsVersionReader;
}

export function heartbeatRoute(deps: { verifier: KeyVerifier; heartbeats: HeartbeatService; doors?: HeartbeatDoorConfig }): RequestHandler {
  return async (req, res) => {
    const nowMs = Date.now();
    const signed = await authenticateRequest(req, deps.verifier, nowMs);
    requireScope(signed.key, 'heartbeat');
    const body = validateHeartbeat(parseJson(signed.body));
    if (body.events.length) requireScope(signed.key, 'events');
    if (body.acks.length || body.failures?.length) requireScope(signed.key, 'commands');
    const recorded = await deps.heartbeats.record({
      gameId: signed.key.gameId,
      keyId: signed.key.keyId,
      signature: signed.signature,
      signedAtSeconds: signed.timestampSeconds,
      heartbeatIntervalSeconds: signed.key.heartbeatIntervalSeconds,
      deliverCommands: signed.key.scopes.has('commands'),
      body,
      nowMs,
    });
    const live: LiveConfig = deps.doors
      ? { doorCacheTtlSeconds: deps.doors.doorCacheTtlSeconds, doorsVersion: await deps.doors.versions.resolve(signed.key.gameId, recorded.doorsVersion) }
      : {};
    sendJson(res, `{"commands":[${recorded.commands.join(',')}],"config":${baseConfig(signed.key, live)},"serverTime":"${new Date(nowMs).toISOString()}"}`);
  };
}
