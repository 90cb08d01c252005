/**
 * The door endpoints (spec: Endpoints › POST doors/check, POST doors/bulk, GET doors/manifest; scope
 * `doors`). Field names are this project's (src/schemas/doors.ts, README "Doors"):
 *
 * - POST /api/v1/game/doors/check `{doorKey, externalId, externalServerId?}` → 200
 *   `{doorKey, decision, reason, policyId, failMode, forcedState, ttlSeconds, externalId, doorsVersion,
 *   cached, serverTime}`; 404 `unknown_door` for a door key the game does not have.
 * - POST /api/v1/game/doors/bulk `{externalId, externalServerId?}` → 200
 *   `{externalId, doorsVersion, decisions: [decision...], serverTime}`.
 * - GET /api/v1/game/doors/manifest[?externalServerId=<id>] (empty body, signed) → 200
 *   `{version, doorCacheTtlSeconds, doors: [{key, name, kind, defaultEffect, failMode, forcedState}],
 *   serverTime}` with `ETag: "<version>"`. Always 200, even when `If-None-Match` matches: every response
 *   carries serverTime (spec: Endpoints), which a bodiless 304 could not.
 *
 * Errors (envelope via the error handler): 400 bad JSON/fields, 401, 403 `scope_missing`, 404, 409,
 * 413, 429 over a quota (src/limits/quotas.ts), 503 when Postgres is unreachable on a cache miss (the
 * client applies the door's failMode).
 */
import type { RequestHandler } from 'express';
import type { KeyVerifier } from '../../../auth/key-verifier.js';
import type { DoorAccessService } from '../../../doors/door-access-service.js';
import { compileValidator } from '../../../schemas/validator.js';
import { doorBulkRequestSchema, doorCheckRequestSchema, type DoorBulkRequest, type DoorCheckRequest } from '../../../schemas/doors.js';
import { authenticateRequest, requireScope } from '../authenticate.js';
import { parseJson } from '../parse-json.js';
import { sendJson } from '../send-json.js';
import { ValidationError } from '../../../errors.js';
import { doorBulkBody, doorCheckBody, doorManifestBody } from '../door-responses.js';

const validateCheck = compileValidator<DoorCheckRequest>(doorCheckRequestSchema);
const validateBulk = compileValidator<DoorBulkRequest>(doorBulkRequestSchema);

export interface DoorRouteDeps {
  verifier: KeyVerifier;
  doors: DoorAccessService;
}

/** POST doors/check. */
export function doorCheckRoute(deps: DoorRouteDeps): RequestHandler {
  return async (req, res) => {
    const nowMs = Date.now();
    const signed = await authenticateRequest(req, deps.verifier, nowMs);
    requireScope(signed.key, 'doors');
    const body = validateCheck(parseJson(signed.body));
    const caller = { gameId: signed.key.gameId, keyId: signed.key.keyId, signature: signed.signature, signedAtSeconds: signed.timestampSeconds };
    sendJson(res, doorCheckBody(await deps.doors.check(caller, body, nowMs), nowMs));
  };
}

/** POST doors/bulk. */
export function doorBulkRoute(deps: DoorRouteDeps): RequestHandler {
  return async (req, res) => {
    const nowMs = Date.now();
    const signed = await authenticateRequest(req, deps.verifier, nowMs);
    requireScope(signed.key, 'doors');
    const body = validateBulk(parseJson(signed.body));
    const caller = { gameId: signed.key.gameId, keyId: signed.key.keyId, signature: signed.signature, signedAtSeconds: signed.timestampSeconds };
    sendJson(res, doorBulkBody(await deps.doors.bulk(caller, body, nowMs), nowMs));
  };
}

/**
 * The optional `externalServerId` query parameter of doors/manifest (1–128 characters, as in the door
 * request bodies): the server asking, so its fetches count against a quota of its own instead of the
 * key's (src/limits/quotas.ts, `manifest`). @throws {ValidationError} 400 when given more than once or
 * outside 1–128 characters.
 */
function manifestServerId(query: Record<string, unknown>): string | null {
  const id = query.externalServerId;
  if (id === undefined) return null;
  if (typeof id !== 'string' || id.length < 1 || id.length > 128) {
    throw new ValidationError('externalServerId must be given once, 1-128 characters', 'invalid_request');
  }
  return id;
}

/** GET doors/manifest: the body must be empty (the signature covers the timestamp alone). */
export function doorManifestRoute(deps: DoorRouteDeps): RequestHandler {
  return async (req, res) => {
    const nowMs = Date.now();
    const signed = await authenticateRequest(req, deps.verifier, nowMs);
    requireScope(signed.key, 'doors');
    const caller = { gameId: signed.key.gameId, keyId: signed.key.keyId, signature: signed.signature, signedAtSeconds: signed.timestampSeconds };
    const manifest = await deps.doors.manifest(caller, nowMs, manifestServerId(req.query));
    sendJson(res, doorManifestBody(manifest, nowMs), { ETag: `"${manifest.version}"` });
  };
}
