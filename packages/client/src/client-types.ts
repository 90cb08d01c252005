/**
 * Wire shapes the reference client reads and writes (spec: Resources › Heartbeat request/response body,
 * Command types), the client's own declarations: the package imports nothing of the service, whose JSON
 * Schemas (its src/schemas/heartbeat.ts) are the authority these follow. Request shapes are what the client
 * sends; response shapes are read leniently because "clients ignore unknown fields" (spec: Versioning,
 * rule 2).
 */

/** Most events one heartbeat may carry (the service's limit; the envelope size limit usually binds first). */
export const MAX_EVENTS = 2000;
/** Most ids one heartbeat may carry in `acks`, and in `failures` (the service's limit). */
export const MAX_ACKS = 500;

/**
 * One player of the roster (spec: Heartbeat request body, `players[]`). Ids are 1–128 characters;
 * `joinedAt` is RFC 3339.
 */
export interface PlayerEntry {
  /** The player's platform user id. */
  externalId: string;
  /** Display name, at most 128 characters. */
  username: string;
  team?: string | null;
  joinedAt?: string | null;
}

/**
 * One player event (spec: Heartbeat request body, `events[]`; Events rules 1–3). `eventId` (1–128
 * characters) is fixed when the event happens and is the service's dedupe key; `type` is 1–64 characters;
 * `occurredAt` is RFC 3339; `payload` any JSON value.
 */
export interface EventEntry {
  eventId: string;
  type: string;
  /** The user the event is about, if any. */
  externalId?: string | null;
  occurredAt: string;
  payload?: unknown;
}

/** One entry of the heartbeat's `failures` (additive request field of the service): a command not carried out. */
export interface FailureReport {
  /** Command id. */
  id: string;
  /** Short reason, at most 500 characters. */
  reason: string;
}

/**
 * A heartbeat request body (spec: Heartbeat request body), fields in the spec's order. `players` is the
 * full roster (at most 1,000), `events` at most {@link MAX_EVENTS}, `acks` and `failures` at most
 * {@link MAX_ACKS} each; `uptimeSeconds` is whole seconds since the instance booted.
 */
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
  failures?: FailureReport[];
}

/** Paths of the five game endpoints, relative to the service origin (spec: Endpoints). */
export const GAME_PATHS = Object.freeze({
  heartbeat: '/api/v1/game/heartbeat',
  doorsCheck: '/api/v1/game/doors/check',
  doorsBulk: '/api/v1/game/doors/bulk',
  /** GET with an empty body: the signature covers the timestamp (and the nonce query). */
  doorsManifest: '/api/v1/game/doors/manifest',
  bansCheck: '/api/v1/game/bans/check',
});

/**
 * One command of a heartbeat response (shape decided by the service, its README "API decisions", since
 * the spec does not show it). Times are RFC 3339 UTC strings.
 */
export interface CommandEntry {
  /** Command id (UUID): the dedupe key and what goes into `acks` / `failures`. */
  id: string;
  /** A type of the spec's Command types table (kick … custom) or a newer one: new types are additive. */
  type: string;
  /** Per-type payload, e.g. `{ reason }` for kick; opaque to the client. */
  payload: Record<string, unknown>;
  /** The server the command is for and, for user commands, the user. */
  target: { externalServerId: string; externalId?: string | null };
  issuedAt: string;
  /** After this instant the service marks the command expired; the client does not execute it. */
  expiresAt: string;
}

/** `config` of a heartbeat response; only the interval is known today, other fields are kept as given. */
export interface HeartbeatConfig {
  /** The interval the client must follow, in seconds (spec: 15–60, default 20). */
  heartbeatIntervalSeconds: number;
  [field: string]: unknown;
}

/** A 200 heartbeat response (spec: exactly commands, config, serverTime). */
export interface HeartbeatResponse {
  commands: CommandEntry[];
  config: HeartbeatConfig;
  serverTime: string;
}

/**
 * What a command handler reports: `ok: true` once the effect has happened in the game (the client then
 * acks it), or `ok: false` with a short reason (reported in `failures`; spec: Command lifecycle, failed).
 */
export type CommandOutcome = { ok: true } | { ok: false; reason: string };

/**
 * Executes one command in the game. Called at most once per command id while the id is remembered.
 * Resolve only after the effect happened; resolving with nothing counts as `{ ok: true }`; a rejection
 * counts as a failure whose reason is the error message.
 */
export type CommandHandler = (command: CommandEntry) => Promise<CommandOutcome | void>;

/**
 * A configuration problem the client will not retry on its own (spec: Errors, 400/401/403/404): the
 * heartbeat loop stops until `start()` is called again.
 */
export interface SetupErrorInfo {
  /** HTTP status: 400, 401, 403 or 404 (or 0 for a malformed key detected locally). */
  status: number;
  /** `error.code` of the response, for logs only (clients branch on the status). */
  code: string;
  message: string;
  requestId?: string;
  /** Endpoint path that failed. */
  path: string;
  /** What to check, from the spec's "Client action" column. */
  hint: string;
}

/**
 * A transient problem the client is already handling (retrying, backing off, splitting); reported so the
 * game can log it. `delayMs` is the wait before the next attempt when one is scheduled.
 */
export interface ProblemInfo {
  kind:
    | 'network'
    | 'server_error'
    | 'rate_limited'
    | 'replay_rejected'
    | 'envelope_too_large'
    | 'event_rejected'
    | 'bad_request'
    | 'event_queue_overflow'
    | 'bad_response'
    | 'clock_skew'
    | 'handler_error';
  message: string;
  status?: number;
  delayMs?: number;
  /** `event_rejected`: the id of the event dropped (never sent again). */
  eventId?: string;
  /** A 400's `error.pointer` (JSON Pointer of the first member that failed validation), when it named one. */
  pointer?: string;
}

/** Passed to `onHeartbeat` after every 200: the exact request that was accepted and its response. */
export interface HeartbeatSuccess {
  request: HeartbeatRequest;
  response: HeartbeatResponse;
  /** Latency of the accepted HTTP attempt, ms. */
  latencyMs: number;
}
