import { doorBulkResponseSchema } from './doors.js';

/**
 * JSON Schema of the POST /api/v1/game/bans/check request (spec: Endpoints › POST bans/check: "request
 * field names: not shown"; this project's choice). Unknown fields are ignored (spec: Versioning rule 2).
 *
 * Request: `{ externalId, externalServerId, includeDoors? }`: the user who is connecting and the server
 * (instance) it is connecting to, the same identifiers the heartbeat uses. The game is the requesting
 * key's game. `includeDoors: true` (the key needs scope `doors` too) asks for the user's bulk check in the
 * same request: the two calls the spec's client flow makes on connect, in one (docs/decisions.md "One
 * request per joining player").
 */
export const bansCheckRequestSchema = {
  $id: 'BansCheckRequest',
  type: 'object',
  required: ['externalId', 'externalServerId'],
  properties: {
    externalId: { type: 'string', minLength: 1, maxLength: 128 },
    externalServerId: { type: 'string', minLength: 1, maxLength: 128 },
    includeDoors: { type: 'boolean' },
  },
} as const;

export interface BansCheckRequest {
  /** The connecting user (opaque platform id). */
  externalId: string;
  /** The running instance the user connects to. */
  externalServerId: string;
  /** Answer the user's door decisions too, as doors/bulk does (`doors` of the response). Default false. */
  includeDoors?: boolean;
}

/**
 * Response 200 of POST /api/v1/game/bans/check (spec: Resources › Ban check result). `banned` is the only
 * field a client relies on; `scope`, `expiresAt` and `reason` are informational (null when not banned)
 * and not final (spec: Versioning rule 6). `doors` is present only when the request asked for it
 * (`includeDoors`): doors/bulk's answer without its serverTime, or null when the user is banned, over the
 * bulk quota, or the door data could not be read (then the client bulk-checks later, as after a refused
 * doors/bulk). Used by the OpenAPI document (src/adapters/openapi/).
 */
export const bansCheckResponseSchema = {
  $id: 'BansCheckResponse',
  type: 'object',
  required: ['banned', 'scope', 'expiresAt', 'reason', 'serverTime'],
  properties: {
    banned: { type: 'boolean' },
    scope: { enum: ['server', 'game', 'workspace', null] },
    /** RFC 3339; null = permanent (or not banned). */
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
    reason: { type: ['string', 'null'] },
    doors: {
      type: ['object', 'null'],
      required: doorBulkResponseSchema.required.filter((f) => f !== 'serverTime'),
      properties: { externalId: doorBulkResponseSchema.properties.externalId, doorsVersion: doorBulkResponseSchema.properties.doorsVersion, decisions: doorBulkResponseSchema.properties.decisions },
    },
    serverTime: { type: 'string', format: 'date-time' },
  },
} as const;
