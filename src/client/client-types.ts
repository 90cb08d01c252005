/**
 * Wire shapes the reference client reads and writes (spec: Resources › Heartbeat request/response body,
 * Command types). Request shapes are the service's own (src/schemas/heartbeat.ts); response shapes are
 * parsed leniently here because "clients ignore unknown fields" (spec: Versioning, rule 2).
 */
import type { EventEntry, HeartbeatRequest, PlayerEntry } from '../schemas/heartbeat.js';

export type { EventEntry, HeartbeatRequest, PlayerEntry };

/** Paths of the five game endpoints, relative to the service origin (spec: Endpoints). */
export const GAME_PATHS = Object.freeze({
  heartbeat: '/api/v1/game/heartbeat',
  doorsCheck: '/api/v1/game/doors/check',
  doorsBulk: '/api/v1/game/doors/bulk',
  /** GET with an empty body; the signature covers the timestamp alone. */
  doorsManifest: '/api/v1/game/doors/manifest',
  bansCheck: '/api/v1/game/bans/check',
});

/**
 * One command of a heartbeat response (shape decided by this project: `commandEntrySchema` in
 * src/schemas/heartbeat.ts). Times are RFC 3339 UTC strings.
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
    | 'event_queue_overflow'
    | 'bad_response'
    | 'clock_skew'
    | 'handler_error';
  message: string;
  status?: number;
  delayMs?: number;
}

/** Passed to `onHeartbeat` after every 200: the exact request that was accepted and its response. */
export interface HeartbeatSuccess {
  request: HeartbeatRequest;
  response: HeartbeatResponse;
  /** Latency of the accepted HTTP attempt, ms. */
  latencyMs: number;
}
