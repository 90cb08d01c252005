/**
 * JSON Schemas of the door endpoints (spec: Endpoints › doors/check, doors/bulk, doors/manifest; field
 * names are this project's decision, issue #5) and of policy conditions. The same objects feed ajv and
 * the OpenAPI document. Request schemas ignore unknown fields (spec: Versioning rule 2); the conditions
 * schema does not, because an operator's misspelt condition would otherwise silently widen a policy.
 */
/** What the integration does when the service is unreachable (spec: Door › failMode). */
export const FAIL_MODES = ['closed', 'open'] as const;
/** A door's forced state (spec: States › Door forced state). */
export const FORCED_STATES = ['auto', 'locked', 'unlocked'] as const;
/** ISO weekday names, Monday first (index + 1 = ISO weekday number). */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

const id = (max = 128) => ({ type: 'string', minLength: 1, maxLength: max }) as const;

/** POST /api/v1/game/doors/check request. */
export const doorCheckRequestSchema = {
  $id: 'DoorCheckRequest',
  type: 'object',
  required: ['doorKey', 'externalId'],
  properties: {
    /** The door key (unique per game). */
    doorKey: id(),
    /** The user asking to pass. */
    externalId: id(),
    /** The server asking; recorded in the access log. */
    externalServerId: { type: ['string', 'null'], maxLength: 128 },
  },
} as const;

export interface DoorCheckRequest {
  doorKey: string;
  externalId: string;
  externalServerId?: string | null;
}

/** POST /api/v1/game/doors/bulk request: every door of the game for one user (the join-time call). */
export const doorBulkRequestSchema = {
  $id: 'DoorBulkRequest',
  type: 'object',
  required: ['externalId'],
  properties: {
    externalId: id(),
    externalServerId: { type: ['string', 'null'], maxLength: 128 },
  },
} as const;

export interface DoorBulkRequest {
  externalId: string;
  externalServerId?: string | null;
}

/** One decision as the endpoints return it (check: the whole body besides externalId/serverTime). */
export const doorDecisionSchema = {
  type: 'object',
  required: ['doorKey', 'decision', 'reason', 'policyId', 'failMode', 'forcedState', 'ttlSeconds'],
  properties: {
    doorKey: { type: 'string' },
    decision: { enum: ['allow', 'deny'] },
    /** forced_locked | forced_unlocked | policy_deny:<id> | policy_allow:<id> | default_allow | default_deny */
    reason: { type: 'string' },
    policyId: { type: ['string', 'null'], format: 'uuid' },
    failMode: { enum: FAIL_MODES },
    forcedState: { enum: FORCED_STATES },
    /** Whole seconds the client may cache this decision; 0 = do not cache. */
    ttlSeconds: { type: 'integer', minimum: 0 },
  },
} as const;

export const doorCheckResponseSchema = {
  $id: 'DoorCheckResponse',
  type: 'object',
  required: [...doorDecisionSchema.required, 'externalId', 'doorsVersion', 'cached', 'serverTime'],
  properties: {
    ...doorDecisionSchema.properties,
    externalId: { type: 'string' },
    /** The manifest version the decision was made under. */
    doorsVersion: { type: 'integer', minimum: 1 },
    /** True when served from the decision cache (informational). */
    cached: { type: 'boolean' },
    serverTime: { type: 'string', format: 'date-time' },
  },
} as const;

export const doorBulkResponseSchema = {
  $id: 'DoorBulkResponse',
  type: 'object',
  required: ['externalId', 'doorsVersion', 'decisions', 'serverTime'],
  properties: {
    externalId: { type: 'string' },
    doorsVersion: { type: 'integer', minimum: 1 },
    /** Every door of the game, in door-key order. */
    decisions: { type: 'array', items: doorDecisionSchema },
    serverTime: { type: 'string', format: 'date-time' },
  },
} as const;

/** One door of the manifest. */
export const manifestDoorSchema = {
  type: 'object',
  required: ['key', 'name', 'kind', 'defaultEffect', 'failMode', 'forcedState'],
  properties: {
    key: { type: 'string' },
    name: { type: 'string' },
    /** door, locker, spawner, zone, or free text. */
    kind: { type: 'string' },
    defaultEffect: { enum: ['allow', 'deny'] },
    failMode: { enum: FAIL_MODES },
    forcedState: { enum: FORCED_STATES },
  },
} as const;

/** GET /api/v1/game/doors/manifest response; the `ETag` header is `"<version>"`. */
export const doorManifestResponseSchema = {
  $id: 'DoorManifestResponse',
  type: 'object',
  required: ['version', 'doorCacheTtlSeconds', 'doors', 'serverTime'],
  properties: {
    /** Changes whenever any door, policy or forced state of the game changes. */
    version: { type: 'integer', minimum: 1 },
    /** Upper bound of every decision's ttlSeconds. */
    doorCacheTtlSeconds: { type: 'integer', minimum: 1 },
    doors: { type: 'array', items: manifestDoorSchema },
    serverTime: { type: 'string', format: 'date-time' },
  },
} as const;

/** `DoorPolicy.conditions` (see PolicyConditions in src/doors/door-types.ts). */
export const policyConditionsSchema = {
  $id: 'DoorPolicyConditions',
  type: 'object',
  additionalProperties: false,
  properties: {
    clockedIn: { type: 'boolean' },
    operationType: id(64),
    noActiveRecordType: id(64),
    minTenureDays: { type: 'integer', minimum: 0, maximum: 36500 },
    timeWindow: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'timeZone'],
      properties: {
        days: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: WEEKDAYS } },
        from: { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' },
        to: { type: 'string', pattern: '^(([01]\\d|2[0-3]):[0-5]\\d|24:00)$' },
        timeZone: id(64),
      },
    },
  },
} as const;
