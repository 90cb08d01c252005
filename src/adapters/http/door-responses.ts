/**
 * The wire JSON of the door endpoints (spec: Endpoints › doors/check, doors/bulk, doors/manifest), built
 * from the door service's answers (src/doors/door-access-service.ts) by splicing their ready-made decision
 * and manifest JSON, with `serverTime` added here as on every response. Shapes: `doorCheckResponseSchema`,
 * `doorBulkResponseSchema`, `doorManifestResponseSchema` (src/schemas/doors.ts).
 */
import type { AnsweredDecision, DoorBulkAnswer, DoorCheckAnswer, DoorManifestAnswer } from '../../doors/door-access-service.js';

/** A decision object with `ttlSeconds` (seconds) spliced in before its closing brace. */
function decisionWithTtl(d: AnsweredDecision): string {
  return `${d.json.slice(0, -1)},"ttlSeconds":${d.ttlSeconds}`;
}

/** doors/check 200 body: the decision's members plus externalId, doorsVersion, cached and serverTime. */
export function doorCheckBody(a: DoorCheckAnswer, nowMs: number): string {
  return `${decisionWithTtl(a.answered)},"externalId":${JSON.stringify(a.externalId)},"doorsVersion":${a.doorsVersion},"cached":${a.cached},"serverTime":"${new Date(nowMs).toISOString()}"}`;
}

/** doors/bulk 200 body: `{externalId, doorsVersion, decisions: [...], serverTime}`. */
export function doorBulkBody(a: DoorBulkAnswer, nowMs: number): string {
  return `${doorBulkJson(a).slice(0, -1)},"serverTime":"${new Date(nowMs).toISOString()}"}`;
}

/** A bulk answer as JSON without serverTime, `{externalId, doorsVersion, decisions: [...]}`: also bans/check's `doors`. */
export function doorBulkJson(a: DoorBulkAnswer): string {
  const decisions = a.decisions.map((d) => `${decisionWithTtl(d)}}`).join(',');
  return `{"externalId":${JSON.stringify(a.externalId)},"doorsVersion":${a.doorsVersion},"decisions":[${decisions}]}`;
}

/** doors/manifest 200 body: `{version, doorCacheTtlSeconds, doors, serverTime}`. */
export function doorManifestBody(a: DoorManifestAnswer, nowMs: number): string {
  return `{"version":${a.version},"doorCacheTtlSeconds":${a.doorCacheTtlSeconds},"doors":${a.doorsJson},"serverTime":"${new Date(nowMs).toISOString()}"}`;
}
