/**
 * POST /api/v1/game/bans/check (spec: Endpoints › POST bans/check; Resources › Ban check result). Scope
 * `heartbeat`. A connect-time blocklist lookup, answered from the workspace's Redis blocklist (no
 * Postgres query per call) with expiry checked against server time.
 *
 * Request `{ externalId, externalServerId, includeDoors? }` (src/schemas/bans-check.ts). Response 200:
 * `{ banned, scope, expiresAt, reason, serverTime }`: `banned` is the only field a client relies on;
 * `scope` (`server` | `game` | `workspace`), `expiresAt` (RFC 3339, null = permanent) and `reason` are
 * informational and null when not banned. A ban applies when it is not lifted, not expired, and its
 * scope covers the key's game and the named server; only bans of the key's workspace are ever looked at.
 *
 * With `includeDoors: true` the response also carries `doors`: the user's bulk check (doors/bulk's 200
 * body without serverTime, counted against the bulk quota too and access-logged like it), or null when
 * the user is banned, over the bulk quota, or the door data cannot be read (a Postgres outage on a cache
 * miss does not fail the ban check). One joining player then costs one request, not two
 * (docs/decisions.md "One request per joining player").
 *
 * Errors: 400 malformed body or field; 401/409 authentication and replay (src/adapters/http/authenticate.ts);
 * 403 `scope_missing` without `heartbeat`, or without `doors` when `includeDoors` is true; 429
 * `rate_limited` with Retry-After over the per-(key, user) quota (src/limits/quotas.ts).
 */
import type { RequestHandler } from 'express';
import type { KeyVerifier } from '../../../auth/key-verifier.js';
import type { Blocklist } from '../../../bans/blocklist.js';
import { decideBan } from '../../../bans/ban-decision.js';
import { compileValidator } from '../../../schemas/validator.js';
import { bansCheckRequestSchema, type BansCheckRequest } from '../../../schemas/bans-check.js';
import { authenticateRequest, requireScope } from '../authenticate.js';
import { BanCheckClaim } from '../../../limits/ban-check-claim.js';
import type { AppRedis } from '../../../store/redis.js';
import { parseJson } from '../parse-json.js';
import { sendJson } from '../send-json.js';
import type { KeySpace } from '../../../store/keyspace/key-space.js';
import type { DoorAccessService, DoorCaller } from '../../../doors/door-access-service.js';
import type { Lookup } from '../../../doors/decision-cache.js';
import { banCheckQuota } from '../../../limits/quotas.js';
import { NotFoundError, UnavailableError } from '../../../errors.js';
import { doorBulkJson } from '../door-responses.js';

const validateBansCheck = compileValidator<BansCheckRequest>(bansCheckRequestSchema);

export interface BansCheckDeps {
  verifier: KeyVerifier;
  /** For the replay cache (spec: Authentication rule 3) and the quota. */
  redis: AppRedis;
  keySpace: KeySpace;
  blocklist: Blocklist;
  /** For `includeDoors`: the user's bulk decisions. */
  doors: DoorAccessService;
}

export function bansCheckRoute(deps: BansCheckDeps): RequestHandler {
  const claims = new BanCheckClaim(deps.redis, deps.keySpace);
  return async (req, res) => {
    const nowMs = Date.now();
    const signed = await authenticateRequest(req, deps.verifier, nowMs);
    requireScope(signed.key, 'heartbeat');
    const body = validateBansCheck(parseJson(signed.body));
    if (body.includeDoors) requireScope(signed.key, 'doors');
    const caller = { gameId: signed.key.gameId, keyId: signed.key.keyId, signature: signed.signature, signedAtSeconds: signed.timestampSeconds };
    // Different hash slots ({g:} for the replay key, {w:} for the blocklist): two scripts, sent in the same
    // turn, so they leave in one write (src/store/redis.ts `holdWritesForThisTurn`). With includeDoors the
    // door lookup makes the replay claim and counts the ban-check quota in place of the claim script.
    const joinLookup = body.includeDoors ? deps.doors.lookupForJoin(caller, body, banCheckQuota(body.externalId), nowMs) : null;
    const [, entries] = await Promise.all([joinLookup ?? claims.claim(signed, body.externalId, nowMs), deps.blocklist.lookup(signed.key.workspaceId, body.externalId)]);
    const decision = decideBan(entries, { gameId: signed.key.gameId, externalServerId: body.externalServerId }, nowMs);
    const answer = JSON.stringify({
      banned: decision.banned,
      scope: decision.scope,
      expiresAt: decision.expiresAt === null ? null : new Date(decision.expiresAt).toISOString(),
      reason: decision.reason,
    });
    const doors = joinLookup ? `,"doors":${decision.banned ? 'null' : await joinDoors(deps.doors, caller, await joinLookup, body, nowMs)}` : '';
    sendJson(res, `${answer.slice(0, -1)}${doors},"serverTime":"${new Date(nowMs).toISOString()}"}`);
  };
}

/**
 * The joining user's bulk decisions as JSON (`doorBulkJson`), or `null` when the user is over the bulk
 * quota or the door data cannot be read (Postgres away on a cache miss, or the game deleted while its key
 * is still cached): the ban answer stands either way.
 */
async function joinDoors(doors: DoorAccessService, caller: DoorCaller, found: Lookup, body: BansCheckRequest, nowMs: number): Promise<string> {
  if (found.doorsLimited) return 'null';
  try {
    return doorBulkJson(await doors.bulkFrom(caller, found, body, nowMs));
  } catch (err) {
    if (!(err instanceof UnavailableError) && !(err instanceof NotFoundError)) throw err;
    return 'null';
  }
}
