/**
 * POST /api/v1/game/heartbeat (spec: Endpoints › POST heartbeat). Scopes: `heartbeat`; non-empty
 * `events` also needs `events`; non-empty `acks` or `failures` also needs `commands` (403
 * `scope_missing`, nothing stored). Response 200 is exactly `{commands, config, serverTime}`.
 */
import type { RequestHandler } from 'express';
import type { KeyVerifier, VerifiedKey } from '../../auth/key-verifier';
import type { HeartbeatService } from '../../presence/heartbeat-service';
import { compileValidator } from '../../schemas/validator';
import { heartbeatRequestSchema, type HeartbeatRequest } from '../../schemas/heartbeat';
import { authenticateRequest, requireScope } from '../authenticate';
import { parseJson } from '../parse-json';

const validateHeartbeat = compileValidator<HeartbeatRequest>(heartbeatRequestSchema);

/** The `config` object of a heartbeat response for `key`'s game, as JSON. */
export type ConfigBuilder = (key: VerifiedKey) => string;

/** Default config: the interval the client must follow (seconds). */
export const baseConfig: ConfigBuilder = (key) => JSON.stringify({ heartbeatIntervalSeconds: key.heartbeatIntervalSeconds });

export function heartbeatRoute(deps: { verifier: KeyVerifier; heartbeats: HeartbeatService; config?: ConfigBuilder }): RequestHandler {
  const buildConfig = deps.config ?? baseConfig;
  return async (req, res) => {
    const nowMs = Date.now();
    const signed = await authenticateRequest(req, deps.verifier, nowMs);
    requireScope(signed.key, 'heartbeat');
    const body = validateHeartbeat(parseJson(signed.raw));
    if (body.events.length) requireScope(signed.key, 'events');
    if (body.acks.length || body.failures?.length) requireScope(signed.key, 'commands');
    const commands = await deps.heartbeats.record({
      gameId: signed.key.gameId,
      keyId: signed.key.keyId,
      signature: signed.signature,
      heartbeatIntervalSeconds: signed.key.heartbeatIntervalSeconds,
      deliverCommands: signed.key.scopes.has('commands'),
      body,
      nowMs,
    });
    res
      .status(200)
      .type('application/json')
      .send(`{"commands":[${commands.join(',')}],"config":${buildConfig(signed.key)},"serverTime":"${new Date(nowMs).toISOString()}"}`);
  };
}
