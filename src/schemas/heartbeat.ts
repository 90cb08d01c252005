/**
 * JSON Schemas of the heartbeat (spec: Resources › Heartbeat request body / response body). The same
 * objects feed ajv (src/schemas/validator.ts) and the OpenAPI document, so the two cannot drift.
 *
 * Project decisions where the spec says "not shown": identifiers, usernames, teams and event types are
 * strings; timestamps are RFC 3339 strings; `payload` is any JSON value; array sizes are capped below.
 * Unknown fields are ignored (spec: Versioning, rule 2), so no schema sets additionalProperties: false.
 */

/** Most players one roster may list. */
export const MAX_ROSTER = 1000;
/** Most events one heartbeat may carry (the envelope size limit usually binds first). */
export const MAX_EVENTS = 2000;
/** Most ids in `acks` or `failures`. */
export const MAX_ACKS = 500;
/**
 * Deepest nesting of arrays and objects inside an event `payload` (`{"a":[1]}` is 2). Enforced before
 * anything recursive touches the body (src/adapters/http/parse-json.ts, as the body's depth limit).
 */
export const MAX_PAYLOAD_DEPTH = 32;

const id = (max = 128) => ({ type: 'string', minLength: 1, maxLength: max }) as const;

export const playerEntrySchema = {
  type: 'object',
  required: ['externalId', 'username'],
  properties: {
    externalId: id(),
    username: { type: 'string', maxLength: 128 },
    team: { type: ['string', 'null'], maxLength: 128 },
    joinedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const eventEntrySchema = {
  type: 'object',
  required: ['eventId', 'type', 'occurredAt'],
  properties: {
    eventId: id(),
    type: id(64),
    externalId: { type: ['string', 'null'], maxLength: 128 },
    occurredAt: { type: 'string', format: 'date-time' },
    payload: {},
  },
} as const;

/** Additive request field (spec: Versioning rule 2): commands the integration could not carry out. */
export const failureEntrySchema = {
  type: 'object',
  required: ['id', 'reason'],
  properties: { id: id(64), reason: { type: 'string', maxLength: 500 } },
} as const;

export const heartbeatRequestSchema = {
  $id: 'HeartbeatRequest',
  type: 'object',
  required: ['externalServerId', 'playerCount', 'maxPlayers', 'sdkVersion', 'uptimeSeconds', 'players', 'events', 'acks'],
  properties: {
    externalServerId: id(),
    externalScopeId: { type: ['string', 'null'], maxLength: 128 },
    playerCount: { type: 'integer', minimum: 0, maximum: 100000 },
    maxPlayers: { type: 'integer', minimum: 0, maximum: 100000 },
    sdkVersion: id(64),
    uptimeSeconds: { type: 'number', minimum: 0 },
    region: { type: ['string', 'null'], maxLength: 64 },
    players: { type: 'array', maxItems: MAX_ROSTER, items: playerEntrySchema },
    events: { type: 'array', maxItems: MAX_EVENTS, items: eventEntrySchema },
    acks: { type: 'array', maxItems: MAX_ACKS, items: id(64) },
    failures: { type: 'array', maxItems: MAX_ACKS, items: failureEntrySchema },
  },
} as const;

export interface PlayerEntry {
  externalId: string;
  username: string;
  team?: string | null;
  joinedAt?: string | null;
}

export interface EventEntry {
  eventId: string;
  type: string;
  externalId?: string | null;
  occurredAt: string;
  payload?: unknown;
}

export interface HeartbeatRequest {
  externalServerId: string;
  externalScopeId?: string | null;
  playerCount: number;
  maxPlayers: number;
  sdkVersion: string;
  uptimeSeconds: number;
  region?: string | null;
  players: PlayerEntry[];
  events: EventEntry[];
  acks: string[];
  failures?: { id: string; reason: string }[];
}

/**
 * A command entry in the heartbeat response (spec: "Shape of a command entry: not shown"; decided here).
 * `target` names the server and, for user commands, the user; times are RFC 3339 UTC.
 */
export const commandEntrySchema = {
  type: 'object',
  required: ['id', 'type', 'payload', 'target', 'issuedAt', 'expiresAt'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Dedupe key; what goes into acks or failures.' },
    type: {
      type: 'string',
      description: 'kick, mute, unmute, freeze, teleport, message, door_set_state, refresh_permissions, shutdown or custom; new types may appear.',
    },
    payload: { type: 'object', description: 'Per-type payload, schemas in src/schemas/commands.ts (e.g. kick: {reason}).' },
    target: {
      type: 'object',
      required: ['externalServerId'],
      description: 'The server that is to execute it and, for a user command, the user (absent for a server command).',
      properties: { externalServerId: { type: 'string' }, externalId: { type: ['string', 'null'] } },
    },
    issuedAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: 'string', format: 'date-time', description: 'After this the command is expired and must not be executed.' },
  },
} as const;

/** One field of the heartbeat response's `config`, as documented (docs/api.md "Heartbeat config" and OpenAPI). */
export interface HeartbeatConfigField {
  name: string;
  /** JSON type. */
  type: 'integer';
  /** Unit of the value (`seconds`, or `none` for a version counter). */
  unit: 'seconds' | 'none';
  /** Always in the response, or only when known. */
  presence: 'always' | 'when known';
  /** What the value is. */
  meaning: string;
  /** What a client does with it. */
  clientAction: string;
  /** JSON Schema bounds. */
  minimum: number;
  maximum?: number;
}

/**
 * Every field of the heartbeat response's `config` (spec: Resources › Heartbeat response body, "config …
 * Other contents: not shown"): the one list the schema below, the OpenAPI document, the README table
 * and test/openapi/heartbeat-config.test.ts are checked against. A field the heartbeat route sends
 * (src/adapters/http/routes/heartbeat.ts `baseConfig`) must be listed here.
 */
export const HEARTBEAT_CONFIG_FIELDS: readonly HeartbeatConfigField[] = [
  {
    name: 'heartbeatIntervalSeconds',
    type: 'integer',
    unit: 'seconds',
    presence: 'always',
    meaning: "the game's heartbeat interval, 15 to 60 (default 20)",
    clientAction: 'send the next heartbeat this many seconds after the previous one, whatever the local setting says (spec: the client follows the interval returned by the service)',
    minimum: 15,
    maximum: 60,
  },
  {
    name: 'doorCacheTtlSeconds',
    type: 'integer',
    unit: 'seconds',
    presence: 'always',
    meaning: 'the longest time a door decision may be cached (DOOR_CACHE_TTL_SECONDS, default 300); changes before then come as a new doorsVersion or a refresh_permissions command',
    clientAction: 'keep a decision for at most this long, and at most its own ttlSeconds; then check again',
    minimum: 1,
  },
  {
    name: 'doorsVersion',
    type: 'integer',
    unit: 'none',
    presence: 'when known',
    meaning: 'the version of the game\'s doors manifest, raised by every change of a door, a policy or a forced state (also by door_set_state)',
    clientAction: 'when it differs from the version of the manifest held, refetch GET doors/manifest and drop cached decisions; when absent, keep what you have',
    minimum: 1,
  },
];

/** `config` of the heartbeat response, built from {@link HEARTBEAT_CONFIG_FIELDS}; new fields are additive. */
export const heartbeatConfigSchema = {
  type: 'object',
  required: HEARTBEAT_CONFIG_FIELDS.filter((f) => f.presence === 'always').map((f) => f.name),
  properties: Object.fromEntries(
    HEARTBEAT_CONFIG_FIELDS.map((f) => [
      f.name,
      {
        type: f.type,
        minimum: f.minimum,
        ...(f.maximum !== undefined ? { maximum: f.maximum } : {}),
        description: `${f.meaning[0]!.toUpperCase()}${f.meaning.slice(1)}. Unit: ${f.unit}. ${f.presence === 'always' ? 'Always present.' : 'Present when known.'} Client: ${f.clientAction}.`,
        'x-unit': f.unit,
      },
    ]),
  ),
};

export const heartbeatResponseSchema = {
  $id: 'HeartbeatResponse',
  type: 'object',
  required: ['commands', 'config', 'serverTime'],
  additionalProperties: false,
  properties: {
    commands: { type: 'array', items: commandEntrySchema },
    config: heartbeatConfigSchema,
    serverTime: { type: 'string', format: 'date-time' },
  },
} as const;

export const errorEnvelopeSchema = {
  $id: 'ErrorEnvelope',
  type: 'object',
  required: ['error', 'serverTime'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'requestId'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        requestId: { type: 'string' },
        pointer: {
          type: 'string',
          description:
            'Additive, 400 only: the JSON Pointer (RFC 6901) of the first member that failed schema validation, e.g. /events/1/type ("" = the whole body). Absent when the 400 names no member (invalid_json, unreadable_body, JSON limits). A client drops the one event it names and sends the rest.',
        },
      },
    },
    serverTime: { type: 'string', format: 'date-time' },
  },
} as const;
