/**
 * POST /api/v1/game/bans/check (spec: Endpoints › POST bans/check; Resources › Ban check result). Scope
 * `heartbeat`. A connect-time blocklist lookup, answered from the workspace's Redis blocklist (no
 * Postgres query per call) with expiry checked against server time.
 *
 * Request `{ externalId, externalServerId }` (src/schemas/bans-check.ts). Response 200:
 * `{ banned, scope, expiresAt, reason, serverTime }`: `banned` is the only field a client relies on;
 * `scope` (`server` | `game` | `workspace`), `expiresAt` (RFC 3339, null = permanent) and `reason` are
 * informational and null when not banned. A ban applies when it is not lifted, not expired, and its
 * scope covers the key's game and the named server; only bans of the key's workspace are ever looked at.
 *
 * Errors: 400 malformed body or field; 401/409 authentication and replay (src/adapters/http/authenticate.ts);
 * 403 `scope_missing` without `heartbeat`; 429 `rate_limited` with Retry-After over the per-(key, user)
 * quota (src/limits/quotas.ts).
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

const validateBansCheck = compileValidator<BansCheckRequest>(bansCheckRequestSchema);

export interface BansCheckDeps {
  verifier: KeyVerifier;
  /** For the replay cache (spec: Authentication rule 3) and the quota. */
  redis: AppRedis;
  keySpace: KeySpace;
  blocklist: Blocklist;
}

export function bansCheckRoute(deps: BansCheckDeps): RequestHandler {
  const claims = new BanCheckClaim(deps.redis, deps.keySpace);
  return async (req, res) => {
    const nowMs = Date.now();
    const signed = await authenticateRequest(req, deps.verifier, nowMs);
    requireScope(signed.key, 'heartbeat');
    const body = validateBansCheck(parseJson(signed.body));
    // Different hash slots ({g:} for the replay key, {w:} for the blocklist): two scripts, sent in the same
    // turn, so they leave in one write (src/store/redis.ts `holdWritesForThisTurn`).
    const [, entries] = await Promise.all([claims.claim(signed, body.externalId, nowMs), deps.blocklist.lookup(signed.key.workspaceId, body.externalId)]);
    const decision = decideBan(entries, { gameId: signed.key.gameId, externalServerId: body.externalServerId }, nowMs);
    sendJson(
      res,
      JSON.stringify({
        banned: decision.banned,
        scope: decision.scope,
        expiresAt: decision.expiresAt === null ? null : new Date(decision.expiresAt).toISOString(),
        reason: decision.reason,
        serverTime: new Date(nowMs).toISOString(),
      }),
    );
  };
}
