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

/** The user a user command is about, on the server that hosts them (`target` of kick, mute, ...). */
export interface UserTarget {
  /** The server that is to execute the command. */
  externalServerId: string;
  /** The user the command is about. */
  externalId: string;
}

/** A command for the whole server (`target` of door_set_state, shutdown, and of message, refresh_permissions and custom when not aimed at a user). */
export interface ServerTarget {
  /** The server that is to execute the command. */
  externalServerId: string;
  /** Absent on the wire; the client sets `null`. */
  externalId?: null;
}

/** Where a player is sent by `teleport`: coordinates or a named place, never both. */
export type TeleportDestination =
  | { position: { x: number; y: number; z: number }; place?: never }
  | { place: string; position?: never };

/**
 * The payload of each command type, as the service validates it when the command is issued (its
 * src/schemas/commands.ts, which rejects unknown fields of the fixed types). Reasons are 1–500 characters,
 * names 1–128, `message.text` 1–1,000; a payload's JSON is at most 2,048 bytes.
 */
export interface CommandPayloads {
  /** Remove the user from the server. */
  kick: { reason: string };
  /** Silence the user for `durationSeconds` (1 s to 30 days). */
  mute: { durationSeconds: number; reason?: string };
  unmute: { reason?: string };
  /** Stop the user from moving or acting until unfrozen by the game. */
  freeze: { reason?: string };
  teleport: TeleportDestination;
  /** Show `text` to the user, or to everyone on the server for a server target. */
  message: { text: string };
  /** Force a door (`auto` lifts the forced state); the manifest's doorsVersion changes with it. */
  door_set_state: { doorKey: string; state: 'locked' | 'unlocked' | 'auto' };
  /** Drop cached door decisions: permissions changed. */
  refresh_permissions: Record<string, never>;
  /** Shut the server down gracefully. */
  shutdown: { reason?: string };
  /** Any JSON object: the integration decides what it means. */
  custom: Record<string, unknown>;
}

/** A command type of the spec's Command types table, as this version of the package knows them. */
export type CommandType = keyof CommandPayloads;

/** Every {@link CommandType}, in the order of the spec's table. */
export const COMMAND_TYPES: readonly CommandType[] = Object.freeze([
  'kick',
  'mute',
  'unmute',
  'freeze',
  'teleport',
  'message',
  'door_set_state',
  'refresh_permissions',
  'shutdown',
  'custom',
]);

/** The target of each command type: a user, the server, or either (message, custom). */
export interface CommandTargets {
  kick: UserTarget;
  mute: UserTarget;
  unmute: UserTarget;
  freeze: UserTarget;
  teleport: UserTarget;
  message: UserTarget | ServerTarget;
  door_set_state: ServerTarget;
  refresh_permissions: UserTarget | ServerTarget;
  shutdown: ServerTarget;
  custom: UserTarget | ServerTarget;
}

/**
 * One command of a heartbeat response of type `T` (shape decided by the service, its docs/api.md, since
 * the spec does not show it). Times are RFC 3339 UTC strings.
 */
export interface Command<T extends CommandType = CommandType> {
  /** Command id (UUID): the dedupe key and what goes into `acks` / `failures`. */
  id: string;
  type: T;
  /** The type's payload ({@link CommandPayloads}). */
  payload: CommandPayloads[T];
  /** The server the command is for and, for user commands, the user. */
  target: CommandTargets[T];
  issuedAt: string;
  /** After this instant the service marks the command expired; the client does not execute it. */
  expiresAt: string;
}

/**
 * A command as the handler receives it: a union discriminated by `type`, so `if (cmd.type === 'kick')`
 * narrows `payload` to `{ reason }` and `target.externalId` to a string. The service may add types
 * (spec: Versioning, additive): the client passes a type newer than this package unchanged, with its
 * payload as sent, so keep a branch that answers `{ ok: false, reason }` for types you do not handle.
 */
export type CommandEntry = { [T in CommandType]: Command<T> }[CommandType];

/**
 * `config` of a heartbeat response: every field the service documents (its HEARTBEAT_CONFIG_FIELDS);
 * fields added later are kept as given.
 */
export interface HeartbeatConfig {
  /** The interval the client must follow, in seconds (spec: 15–60, default 20). */
  heartbeatIntervalSeconds: number;
  /**
   * The longest a door decision may be cached, in seconds (the service's DOOR_CACHE_TTL_SECONDS, default
   * 300; changes reach the client before it as a new `doorsVersion` or a `refresh_permissions`). Always sent by the service; absent only from a response this client could not read fully.
   */
  doorCacheTtlSeconds?: number;
  /**
   * Version of the game's doors manifest, raised by every change of a door, a policy or a forced state;
   * sent when known. When it differs from the manifest held, refetch the manifest and drop cached decisions.
   */
  doorsVersion?: number;
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
    | 'events_unsent'
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
