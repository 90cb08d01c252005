/**
 * The OpenAPI 3.1 document of the five game endpoints (spec: Endpoints), generated from the JSON Schemas
 * ajv validates with (src/schemas/*.ts): one source of truth. `npm run openapi` writes it to
 * `openapi.json` at the repository root; the console serves it at `/openapi.json`; test/openapi/
 * fails when the committed file and this generator disagree.
 *
 * The schemas are copied as they are, minus `$id` (the component name replaces it): the ajv schemas are
 * draft-07 and use nothing OpenAPI 3.1 (JSON Schema 2020-12) reads differently. Numbers that depend on
 * configuration are stated with their defaults (`loadConfig({})`).
 */
import { loadConfig } from '../../config.js';
import { bansCheckRequestSchema, bansCheckResponseSchema } from '../../schemas/bans-check.js';
import { commandPayloadSchemas, COMMAND_TYPES, COMMAND_STATUSES } from '../../schemas/commands.js';
import { doorBulkRequestSchema, doorBulkResponseSchema, doorCheckRequestSchema, doorCheckResponseSchema, doorDecisionSchema, doorManifestResponseSchema, manifestDoorSchema } from '../../schemas/doors.js';
import {
  commandEntrySchema,
  errorEnvelopeSchema,
  eventEntrySchema,
  failureEntrySchema,
  heartbeatConfigSchema,
  heartbeatRequestSchema,
  heartbeatResponseSchema,
  playerEntrySchema,
} from '../../schemas/heartbeat.js';
import { apiDecisions, ERROR_CODES } from './api-decisions.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A deep copy of `schema` without `$id` at any depth. */
export function toOpenApiSchema(schema: unknown): Json {
  if (Array.isArray(schema)) return schema.map(toOpenApiSchema);
  if (schema === null || typeof schema !== 'object') return schema as Json;
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(schema)) if (k !== '$id') out[k] = toOpenApiSchema(v);
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schemaRef: object) => ({ 'application/json': { schema: schemaRef } });

/** Error responses by status, each the envelope with the codes it can carry. */
function errorResponses(): Record<string, object> {
  const describe: Record<string, string> = {
    '400': 'Malformed body, or a field failed validation. Fix the payload; do not retry unchanged.',
    '401': 'Missing, malformed, expired or revoked key, or bad signature. Do not retry; report a setup error.',
    '403': 'The key lacks the scope the request needs (scope_missing). Check scopes, then the platform HTTP setting.',
    '404': 'Unknown game, door key, server or route. Do not retry.',
    '409': 'Timestamp outside the 300-second window, or replayed signature. Re-sign with a fresh timestamp and retry once.',
    '413': 'Envelope too large (see x-not-shown-decisions max-envelope-size). Split events across two heartbeats.',
    '415': 'The body is not sent as application/json (UTF-8), or in a Content-Encoding other than identity, gzip or deflate (see x-not-shown-decisions body-encoding-and-signature). Fix the client; do not retry unchanged.',
    '429': 'Over a per-key quota (see x-not-shown-decisions rate-quotas). Honour Retry-After (seconds; always present).',
    '500': 'Service fault. Retry with exponential backoff and jitter; queue locally meanwhile.',
    '503': 'unavailable: a dependency is unreachable (see x-not-shown-decisions dependency-unavailable), Retry-After 1-5 s; overloaded: this API process is shedding load and did none of the request (see x-not-shown-decisions overload), Retry-After from the configured range. Honour Retry-After (always present, whole seconds) plus up to 1 s of jitter, then back off exponentially with jitter; for doors apply the door failMode meanwhile.',
  };
  const out: Record<string, object> = {};
  for (const [status, text] of Object.entries(describe)) {
    out[`Error${status}`] = {
      description: `${text} Codes: ${(ERROR_CODES[status] ?? []).join(', ')}.`,
      ...(status === '429' || status === '503' ? { headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } } : {}),
      content: json({ $ref: '#/components/schemas/ErrorEnvelope' }),
    };
  }
  return out;
}

/** The responses of one operation: 200 with `ok`, then the listed error statuses. */
function responses(ok: object, okDescription: string, errors: string[], headers?: object): Record<string, object> {
  const out: Record<string, object> = { '200': { description: okDescription, ...(headers ? { headers } : {}), content: json(ok) } };
  for (const status of errors) out[status] = { $ref: `#/components/responses/Error${status}` };
  return out;
}

const COMMON_ERRORS = ['400', '401', '403', '409', '413', '415', '429', '500', '503'];

/** The optional request nonce (docs/api.md "Replays on a shared key"; x-not-shown-decisions request-nonce). */
const NONCE = {
  name: 'nonce',
  in: 'query',
  required: false,
  description: 'Optional: a fresh random value per request (the reference clients send 128 bits as 22 base64url characters). When the URL has a query string, the signature may cover timestamp + raw body + "?" + raw query, so two servers of a game sending the same bytes in the same second sign different values; a byte-identical resend is still a replay (409).',
  schema: { type: 'string', maxLength: 128 },
};

/** doors/manifest's optional server name (docs/api.md "Limits"): its fetches then count against a quota of its own. */
const MANIFEST_SERVER = {
  name: 'externalServerId',
  in: 'query',
  required: false,
  description: 'Optional: the server asking (as externalServerId in the other requests). Given, its fetches count against a manifest quota of its own (10 a minute) instead of the key\'s (2 per live server + 10), which lags a fleet whose servers fetch the manifest before their first heartbeat. Given twice or outside 1-128 characters: 400 invalid_request.',
  schema: { type: 'string', minLength: 1, maxLength: 128 },
};

/** Builds the document. Pure: the same code and defaults give the same document. */
export function buildOpenApiDocument(): Record<string, unknown> {
  const defaults = loadConfig({});
  const decisions = apiDecisions(defaults);
  const schemas: Record<string, Json> = {
    HeartbeatRequest: toOpenApiSchema(heartbeatRequestSchema),
    HeartbeatResponse: toOpenApiSchema(heartbeatResponseSchema),
    HeartbeatConfig: toOpenApiSchema(heartbeatConfigSchema),
    PlayerEntry: toOpenApiSchema(playerEntrySchema),
    EventEntry: toOpenApiSchema(eventEntrySchema),
    FailureEntry: toOpenApiSchema(failureEntrySchema),
    CommandEntry: toOpenApiSchema(commandEntrySchema),
    DoorCheckRequest: toOpenApiSchema(doorCheckRequestSchema),
    DoorCheckResponse: toOpenApiSchema(doorCheckResponseSchema),
    DoorBulkRequest: toOpenApiSchema(doorBulkRequestSchema),
    DoorBulkResponse: toOpenApiSchema(doorBulkResponseSchema),
    DoorDecision: toOpenApiSchema(doorDecisionSchema),
    DoorManifestResponse: toOpenApiSchema(doorManifestResponseSchema),
    ManifestDoor: toOpenApiSchema(manifestDoorSchema),
    BansCheckRequest: toOpenApiSchema(bansCheckRequestSchema),
    BansCheckResponse: toOpenApiSchema(bansCheckResponseSchema),
    ErrorEnvelope: toOpenApiSchema(errorEnvelopeSchema),
  };
  for (const type of COMMAND_TYPES) schemas[`CommandPayload_${type}`] = toOpenApiSchema(commandPayloadSchemas[type]);

  const signed = 'Signed like every request (see the security schemes).';
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Game integration API',
      version: '1.0.0',
      description: [
        'The game integration surface: exactly five endpoints under {base_url}/game/. Every response carries serverTime.',
        'Versioning: the version is the path segment (/api/v1/ is the only major version). Additive changes (new optional request field, new response field, new event type, new command type) happen inside v1; parsers ignore unrecognised fields, and the service ignores unknown request fields. The heartbeat response is exactly { commands, config, serverTime }; no compatibility-warning field exists. Error codes grow; clients branch on the status. The ban check response fields other than banned are not final.',
        'Decisions where the spec says "not shown" are listed in x-not-shown-decisions.',
      ].join('\n\n'),
    },
    servers: [{ url: 'https://{host}/api/v1', description: '{base_url}; HTTPS only', variables: { host: { default: 'api.example.com' } } }],
    security: [{ serverKey: [], serviceTimestamp: [], serviceSignature: [] }],
    paths: {
      '/game/heartbeat': {
        post: {
          operationId: 'heartbeat',
          summary: 'Register or refresh a live server; post presence, events, acks; receive commands and config',
          description: `Scopes: heartbeat; a non-empty events also needs events; non-empty acks or failures need commands (403 scope_missing, nothing stored). A key without commands receives commands: []. Interval: the client follows config.heartbeatIntervalSeconds. Events stay in the client queue until a 200. ${signed}`,
          requestBody: { required: true, content: json(ref('HeartbeatRequest')) },
          parameters: [NONCE],
          responses: responses(ref('HeartbeatResponse'), 'Accepted: exactly { commands, config, serverTime }.', COMMON_ERRORS),
        },
      },
      '/game/doors/check': {
        post: {
          operationId: 'doorsCheck',
          parameters: [NONCE],
          summary: 'One synchronous decision for one door and one user',
          description: `Scope doors. Cache the decision for ttlSeconds. ${signed}`,
          requestBody: { required: true, content: json(ref('DoorCheckRequest')) },
          responses: responses(ref('DoorCheckResponse'), 'The decision.', [...COMMON_ERRORS, '404']),
        },
      },
      '/game/doors/bulk': {
        post: {
          operationId: 'doorsBulk',
          parameters: [NONCE],
          summary: 'Every door decision for one user; called once on join',
          description: `Scope doors. ${signed}`,
          requestBody: { required: true, content: json(ref('DoorBulkRequest')) },
          responses: responses(ref('DoorBulkResponse'), 'Every door of the game, in key order.', COMMON_ERRORS),
        },
      },
      '/game/doors/manifest': {
        get: {
          operationId: 'doorsManifest',
          summary: 'Door definitions and current forced states; on server start and after refresh_permissions',
          description: `Scope doors. No request body: the signature covers the timestamp, the empty body and, with the nonce, the query. ${signed}`,
          parameters: [MANIFEST_SERVER, NONCE],
          responses: responses(ref('DoorManifestResponse'), 'The manifest.', COMMON_ERRORS, { ETag: { description: '"<version>"', schema: { type: 'string' } } }),
        },
      },
      '/game/bans/check': {
        post: {
          operationId: 'bansCheck',
          parameters: [NONCE],
          summary: 'Blocklist lookup on connect, for platforms with no ban API',
          description: `Scope heartbeat. A connect-time call, not polled; on a network error the client decides whether to fail open (recommended). With includeDoors: true (the key needs scope doors too, else 403) the answer also carries doors: the user's bulk door check as doors/bulk answers it without serverTime, or null when the user is banned, over the doors/bulk quota, or the door data cannot be read; one replay claim, counted against both quotas (only the bans/check quota refuses the request). ${signed}`,
          requestBody: { required: true, content: json(ref('BansCheckRequest')) },
          responses: responses(ref('BansCheckResponse'), 'The lookup; only banned is relied on.', COMMON_ERRORS),
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        serverKey: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_live_<prefix>.<secret>', description: 'Authorization: Bearer svc_live_<prefix>.<secret>. The key belongs to a game and carries scopes: heartbeat, events, doors, commands, records:read, chat.' },
        serviceTimestamp: { type: 'apiKey', in: 'header', name: 'X-Service-Timestamp', description: 'Request time as integer seconds since the Unix epoch; accepted within 300 s of server time (else 409).' },
        serviceSignature: { type: 'apiKey', in: 'header', name: 'X-Service-Signature', description: 'Lowercase hex HMAC-SHA256, keyed with the key secret, over the timestamp string followed by the raw body bytes exactly as sent; for a request with a query string (the nonce), alternatively over timestamp + raw body + "?" + the raw query. A repeated signature inside the window is 409.' },
      },
      headers: {
        RetryAfter: { description: 'Whole seconds to wait before retrying (always present on 429 and 503).', required: true, schema: { type: 'integer', minimum: 1 } },
      },
      responses: errorResponses(),
    },
    'x-command-statuses': [...COMMAND_STATUSES],
    'x-not-shown-decisions': decisions.map((d) => ({ topic: d.topic, spec: d.spec, decision: d.decision })),
  };
}
