/**
 * Every place where the spec says "not shown", with what this service decided (issue #7: "Every 'not
 * shown' decision of the spec appears in it"). The OpenAPI document carries the list as
 * `x-not-shown-decisions`, and docs/api.md says the same in prose (its last section). Numbers come
 * from the code and the configuration defaults, so the document cannot state a stale value.
 */
import type { Config } from '../../config.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../errors.js';
import { HEARTBEAT_CONFIG_FIELDS, MAX_ACKS, MAX_EVENTS, MAX_PAYLOAD_DEPTH, MAX_ROSTER } from '../../schemas/heartbeat.js';
import { MAX_BODY_DEPTH } from '../http/parse-json.js';
import { MAX_DATE_TIME_LENGTH } from '../../schemas/date-time.js';
import { DEAD_LETTER_MAXLEN } from '../../store/keys.js';
import { DEFAULT_EXPIRY_SECONDS, MAX_EXPIRY_SECONDS, MIN_EXPIRY_SECONDS } from '../../commands/command-service.js';
import { COMMAND_TYPES } from '../../schemas/commands.js';
import { BAN_CHECK_QUOTA, DOOR_BULK_QUOTA, DOOR_CHECK_QUOTA, heartbeatQuota, MANIFEST_PER_SERVER, NUDGE_ALLOWANCE, RETRY_ALLOWANCE } from '../../limits/quotas.js';

/** One "not shown" of the spec and the decision taken. */
export interface ApiDecision {
  /** Stable identifier. */
  topic: string;
  /** Where the spec leaves it open (section, and the words it uses). */
  spec: string;
  decision: string;
}

/** Error codes of the game surface by status (spec: Errors, "Complete list of code values: not shown"). */
export const ERROR_CODES: Readonly<Record<string, readonly string[]>> = {
  '400': ['invalid_json', 'invalid_request', 'unreadable_body'],
  '401': ['missing_key', 'malformed_key', 'unknown_key', 'revoked_key', 'bad_key', 'key_throttled', 'missing_timestamp', 'missing_signature', 'bad_signature'],
  '403': ['scope_missing'],
  '404': ['unknown_route', 'not_found', 'unknown_game', 'unknown_door'],
  '409': ['timestamp_out_of_window', 'replayed_signature'],
  '413': ['envelope_too_large'],
  '415': ['unsupported_media_type', 'unsupported_encoding'],
  '429': ['rate_limited'],
  '500': ['internal'],
  '503': ['unavailable', 'overloaded'],
};

/** The decisions, given the configuration defaults (`loadConfig({})`). */
export function apiDecisions(defaults: Readonly<Config>): ApiDecision[] {
  const kib = defaults.maxEnvelopeBytes / 1024;
  const ttl = defaults.doorCacheTtlSeconds;
  const doorWindow = defaults.doorDecisionWindowSeconds;
  return [
    {
      topic: 'entry-field-types',
      spec: 'Resources › Heartbeat request body: "Types of the fields inside player and event entries: not shown"',
      decision: `externalId, username, team, eventId and type are strings (ids 1-128 characters, event types 1-64); joinedAt and occurredAt are RFC 3339 date-times (see timestamps); payload is any JSON value nested at most ${MAX_PAYLOAD_DEPTH} levels deep (see json-limits). At most ${MAX_ROSTER} players, ${MAX_EVENTS} events and ${MAX_ACKS} acks per heartbeat. Unknown fields are ignored everywhere (Versioning rule 2).`,
    },
    {
      topic: 'command-entry',
      spec: 'Resources › Heartbeat response body: "Shape of a command entry (field names, id, per-type payload): not shown"',
      decision: `{ id (UUID), type, payload, target: { externalServerId, externalId? }, issuedAt, expiresAt } with RFC 3339 UTC times. Types: ${COMMAND_TYPES.join(', ')}; per-type payloads are the CommandPayload_* schemas. A command is re-sent on every heartbeat until acked, failed or expired; clients dedupe by id.`,
    },
    {
      topic: 'config-contents',
      spec: 'Resources › Heartbeat response body: config "Other contents: not shown"',
      decision: `config = { ${HEARTBEAT_CONFIG_FIELDS.map((f) => `${f.name} (${f.type}, unit ${f.unit}, ${f.presence}: ${f.meaning}; client: ${f.clientAction})`).join('; ')} }. New fields may be added (additive); clients ignore fields they do not know.`,
    },
    {
      topic: 'door-fields',
      spec: 'Resources › Door: "Complete field list of a door definition and of a decision response: not shown"',
      decision: 'Manifest door: { key, name, kind, defaultEffect (allow|deny), failMode (closed|open), forcedState (auto|locked|unlocked) }. Decision: { doorKey, decision (allow|deny), reason, policyId, failMode, forcedState, ttlSeconds }. reason is forced_locked, forced_unlocked, policy_deny:<id>, policy_allow:<id>, default_allow or default_deny.',
    },
    {
      topic: 'dispatch-trigger',
      spec: 'States › Command lifecycle: pending → dispatched "Trigger: not shown"',
      decision: 'A pending command becomes dispatched when it is returned in the response to a heartbeat of the server it is routed to (a user command: the server whose roster holds the user).',
    },
    {
      topic: 'failure-report-and-expiry',
      spec: 'States › Command lifecycle: "the reporting mechanism and the expiry duration are not shown"',
      decision: `Failures are reported on the heartbeat as the additive request field failures: [{ id, reason }] (needs the commands scope). Expiry is set per command when it is issued: default ${DEFAULT_EXPIRY_SECONDS} s, ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS} s; expiresAt is in the command entry.`,
    },
    {
      topic: 'doors-check-fields',
      spec: 'POST /api/v1/game/doors/check: "Request fields and response fields: not shown beyond a door key, a user identifier, and a decision with a reason"',
      decision: 'Request { doorKey, externalId, externalServerId? }. Response: the decision fields plus { externalId, doorsVersion, cached, serverTime }. Unknown door key: 404 unknown_door.',
    },
    {
      topic: 'doors-bulk-fields',
      spec: 'POST /api/v1/game/doors/bulk: "Request and response field names: not shown"',
      decision: 'Request { externalId, externalServerId? }. Response { externalId, doorsVersion, decisions: [decision, ...] (every door, key order), serverTime }.',
    },
    {
      topic: 'doors-manifest-fields',
      spec: 'GET /api/v1/game/doors/manifest: "field names: not shown"',
      decision: 'Response { version, doorCacheTtlSeconds, doors: [manifest door, ...], serverTime } with ETag "<version>"; always 200 (a bodiless 304 could not carry serverTime). The signed body is empty.',
    },
    {
      topic: 'bans-check-fields',
      spec: 'POST /api/v1/game/bans/check: "Request field names and response fields other than those in the Ban check result: not shown"',
      decision: 'Request { externalId, externalServerId, includeDoors? }. Response { banned, scope, expiresAt, reason, serverTime }; scope, expiresAt and reason are null when not banned and are informational (not final). With includeDoors: true (the key needs scope doors too, else 403) the response also carries doors: the user\'s bulk door check as doors/bulk answers it without serverTime, or null when the user is banned, over the doors/bulk quota, or the door data cannot be read; one request per joining player instead of two.',
    },
    {
      topic: 'records-read-and-chat-endpoints',
      spec: 'Authentication: "Endpoints that need records:read or chat: not shown"',
      decision: 'None exist in v1. Keys may carry the records:read and chat scopes; they grant nothing yet.',
    },
    {
      topic: 'key-management',
      spec: 'Authentication: "The interface through which keys are created and revoked (shown once at creation): not shown"',
      decision: 'The operator CLI: admin keys create --game G --scopes LIST (prints the key once), admin keys list, admin keys revoke --prefix P (effective on every API process within milliseconds). No HTTP interface.',
    },
    {
      topic: 'signature-encoding',
      spec: 'Authentication: "Encoding of the signature value (for example hexadecimal or base64): not shown"',
      decision: 'Lowercase hexadecimal (64 characters) of HMAC-SHA256(secret, timestamp string + raw body bytes); uppercase hex is accepted.',
    },
    {
      topic: 'request-nonce',
      spec: 'Authentication rule 3: "A replay cache keyed on (key id, signature) rejects a repeated signature inside the window (409)", with one key per game shared by all its servers; GET doors/manifest has "No request body", and request fields are partly "not shown" (doors/check: "not shown beyond a door key, a user identifier"; bans/check: "Request field names ... not shown")',
      decision: `For a request whose URL has a query string the signature may instead cover timestamp + raw body + "?" + raw query (the query exactly as in the request target); the spec form (timestamp + body) stays valid with or without a query. The reference clients send every attempt to <path>?nonce=<random> (128 bits, 22 base64url characters; Luau: 32 hex digits of a GUID) and sign that form, so two servers of a game never sign the same bytes, two bodiless GET doors/manifest in one second included; a byte-identical resend still gets 409, a changed nonce 401. Why not jitter: N servers over D distinct seconds repeat N - D(1 - (1 - 1/D)^N) signatures (980 for 1,000 servers over 20 s; 513 even over the whole 601-second window), and zero collisions at even odds needs D ≈ N^2 / (2 ln 2) (721,000 s for 1,000 servers).`,
    },
    {
      topic: 'overload',
      spec: 'Errors: 5xx "Service fault. Retry with exponential backoff and jitter"; 429 "includes Retry-After in seconds" (what the service does when it cannot keep up: not shown)',
      decision: `Each API process bounds its work in flight (requests in flight ${defaults.admission.maxInFlight}, Redis commands awaiting replies ${defaults.admission.maxRedisQueue}, smoothed event-loop lag ${defaults.admission.maxLoopLagMs} ms: the heartbeat ceilings; door manifest/bulk requests are refused at half, door and ban checks at a quarter of each). A refused request is answered at once, before its body is read, with 503 overloaded and Retry-After drawn uniformly from ${defaults.admission.retryAfterMinSeconds}-${defaults.admission.retryAfterMaxSeconds} s, a range that, for door and ban requests, doubles every 10 s while the overload lasts (up to ${defaults.admission.retryAfterCapSeconds} s) so a refused herd does not come back as the same herd; nothing of it is processed (its signature is not recorded), so the client sends it again after Retry-After (the reference clients add up to 1 s of jitter).`,
    },
    {
      topic: 'outbound-notifications',
      spec: 'Events › Other notifications: "Outbound webhooks or other event feeds to integrators: not shown"',
      decision: 'None. Operators see ingest health warnings (persistent throttling) in the moderator console and with admin health --game G.',
    },
    {
      topic: 'error-codes',
      spec: 'Errors: "Complete list of code values: not shown"',
      decision: `Current codes by status: ${Object.entries(ERROR_CODES).map(([s, c]) => `${s} ${c.join(', ')}`).join('; ')}. The list grows; clients branch on the status and only log the code.`,
    },
    {
      topic: 'max-envelope-size',
      spec: 'Limits: "Maximum envelope size: not shown"',
      decision: `${kib} KiB (${defaults.maxEnvelopeBytes} bytes, configurable with MAX_ENVELOPE_BYTES) of request body, both as sent and, with a Content-Encoding, once inflated; a larger body is answered 413 envelope_too_large before it is parsed, and the client splits its events across heartbeats.`,
    },
    {
      topic: 'rate-quotas',
      spec: 'Limits: "Numeric per-key rate quotas: not shown"',
      decision: `Counted per subject in fixed windows (all servers share a key): heartbeat per key and externalServerId, 2 x ceil(60 / interval) + ${NUDGE_ALLOWANCE} (nudges) + ${RETRY_ALLOWANCE} a minute (${heartbeatQuota(20)} at the default 20 s); doors/check per key, user and door, ${DOOR_CHECK_QUOTA} per ${doorWindow} s door decision window; doors/bulk per key and user, ${DOOR_BULK_QUOTA} per window; doors/manifest per key, ${MANIFEST_PER_SERVER} x live servers + ${RETRY_ALLOWANCE} a minute; bans/check per key and user, ${BAN_CHECK_QUOTA} a minute. Over a quota: 429 rate_limited with Retry-After (whole seconds to the end of the window), nothing stored. A client following the returned interval and the door TTL is never throttled.`,
    },
    {
      topic: 'door-cache-ttl',
      spec: 'Limits: "Door cache TTL value: not shown"',
      decision: `${ttl} s by default (DOOR_CACHE_TTL_SECONDS, 5-3600), sent as config.doorCacheTtlSeconds, in the manifest and per decision as ttlSeconds (which may be shorter, never longer). A change that could alter a decision does not wait for it: door, policy, forced-state, schedule and org-tree changes raise config.doorsVersion (refetch the manifest, forget every decision), and a member's change (positions, records, clock-in) sends refresh_permissions aimed at that user to the server they are on (forget that user's decisions). The service shares a decision between users for one ${doorWindow} s window (DOOR_DECISION_WINDOW_SECONDS) only.`,
    },
    {
      topic: 'body-encoding-and-signature',
      spec: 'Authentication: rule 1 "Sign the raw body bytes exactly as sent" and the Content-Type header; which media types and content codings are accepted, and whether the signature covers encoded or decoded bytes: not shown',
      decision: 'A POST must carry Content-Type: application/json (a charset parameter, when present, must be utf-8); otherwise 415 unsupported_media_type. The GET manifest has no body and its Content-Type is not checked. Content-Encoding may be absent, identity, gzip (x-gzip) or deflate (zlib); br, compress, stacked codings and anything else get 415 unsupported_encoding. Both are checked before authentication. The signature covers the body bytes exactly as sent: with a Content-Encoding, the compressed bytes (compress first, then sign what you send). The service verifies the signature before it inflates anything; bytes that do not inflate get 400 unreadable_body. (A platform that compresses after the script signed, such as HttpService\'s Compress flag, must send uncompressed.)',
    },
    {
      topic: 'timestamps',
      spec: 'Transport rules: "all timestamps RFC 3339 in UTC"; the accepted range, offsets, leap seconds and precision: not shown',
      decision: `joinedAt and occurredAt are strict RFC 3339 date-times: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), T and Z also lower case, a real calendar date, hours 00-23, minutes and seconds 00-59, an offset of at most 23:59, at most ${MAX_DATE_TIME_LENGTH} characters, and once the offset is applied an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. Refused with 400 invalid_request and a message naming the rule: hour-only offsets (+01), a space instead of T, year 0000, 24:00, second 60 other than a leap second, instants outside the range after the offset (9999-12-31T23:59:59-23:59). Normalised, not refused: a leap second (23:59:60 UTC on the last day of a month) is stored as 00:00:00 of the next day, as PostgreSQL does; fraction digits past milliseconds are dropped. Stored in UTC with millisecond precision.`,
    },
    {
      topic: 'json-limits',
      spec: 'Errors, 400 "Malformed body, or a field failed validation": which JSON the service refuses (nesting, numbers, strings, duplicate names): not shown',
      decision: `Refused with 400 before any recursive processing: arrays and objects nested more than ${MAX_BODY_DEPTH} levels (an event payload ${MAX_PAYLOAD_DEPTH}) and numbers outside the IEEE-754 double range such as 1e400 (invalid_request); strings or member names with U+0000 or a lone surrogate, which PostgreSQL cannot store (invalid_request); an object with the same member name twice, and anything that is not JSON, a byte-order mark included (invalid_json). Size is bounded by the envelope (max-envelope-size). Whatever is answered 200 is storable; a row the database still refuses is set aside with its reason in a per-game dead-letter stream (at most about ${DEAD_LETTER_MAXLEN} kept), shown to operators, and never blocks other rows.`,
    },
    {
      topic: 'dependency-unavailable',
      spec: 'Errors: 5xx "Service fault" (which 5xx, and whether a retry delay is given: not shown)',
      decision: `A request that cannot complete because Redis or Postgres is unreachable is answered 503 unavailable (never 500) within about 1 s, with Retry-After: a whole number of seconds drawn uniformly from ${UNAVAILABLE_RETRY_AFTER_SECONDS.min}-${UNAVAILABLE_RETRY_AFTER_SECONDS.max} so clients that failed together do not return together. Nothing of a 503-answered request is stored; clients retry it (events dedupe by eventId). While Postgres alone is down, heartbeats of an already verified key still get 200. GET /readyz answers 503 with dependencies: { redis, postgres } each "up" or "down".`,
    },
  ];
}
