/**
 * The one registry of Redis key names, with the TTL of each family beside it.
 *
 * Every key of one game starts with `<prefix>:{g:<gameId>}` so the whole game lives in one Redis Cluster
 * hash slot: the heartbeat Lua script touches many of these keys atomically, which Cluster only allows
 * within one slot. Workspace-wide keys use `{w:<workspaceId>}` the same way. The Lua scripts in
 * `src/store/lua/` receive {@link GameKeys.base} and append the same suffixes; keep both in step
 * (test/store/keys.test.ts checks the names).
 */

/** Seconds a replay-cache entry lives: twice the ±300 s acceptance window (spec: Authentication, rule 3). */
export const REPLAY_TTL_SECONDS = 600;
/** Seconds an idle server hash survives if the liveness sweep never ran (safety net, not the gone rule). */
export const SERVER_TTL_SECONDS = 24 * 3600;

/** Key builders for one game's hot state. */
export class GameKeys {
  /** `<prefix>:{g:<gameId>}`: the hash-tagged base every per-game key extends. */
  readonly base: string;

  constructor(prefix: string, readonly gameId: string) {
    this.base = `${prefix}:{g:${gameId}}`;
  }

  /** string, TTL {@link REPLAY_TTL_SECONDS}: a signature seen for a key id. */
  replay(keyId: string, signature: string): string {
    return `${this.base}:replay:${keyId}:${signature}`;
  }
  /** hash: the live view of one server (fields in presence/server-view.ts). */
  server(externalServerId: string): string {
    return `${this.base}:server:${externalServerId}`;
  }
  /** zset member externalServerId, score = last heartbeat in ms. */
  servers(): string {
    return `${this.base}:servers`;
  }
  /** hash externalId → `<openedAtMs>\n<json {u,t}>`: the roster of one server. */
  roster(externalServerId: string): string {
    return `${this.base}:roster:${externalServerId}`;
  }
  /** hash externalId → externalServerId: where each online user is (command routing). */
  where(): string {
    return `${this.base}:where`;
  }
  /** stream of event batches, one entry per accepted heartbeat with events. */
  eventStream(): string {
    return `${this.base}:events`;
  }
  /** stream of server up/gone and session open/close transitions, in order. */
  sessionStream(): string {
    return `${this.base}:sessions`;
  }
  /** stream of command transitions (dispatched, acked, failed, expired). */
  commandLog(): string {
    return `${this.base}:cmdlog`;
  }
  /** hash: one command's state and its JSON entry. */
  command(commandId: string): string {
    return `${this.base}:cmd:${commandId}`;
  }
  /** list of command ids waiting for delivery to a server. */
  pendingCommands(externalServerId: string): string {
    return `${this.base}:cmd:pending:${externalServerId}`;
  }
  /** zset of command ids delivered to a server and not yet acked, score = issuedAt ms. */
  dispatchedCommands(externalServerId: string): string {
    return `${this.base}:cmd:dispatched:${externalServerId}`;
  }
  /** hash keyId → last use ms, copied to ApiKey.lastUsedAt by the liveness sweep. */
  keysUsed(): string {
    return `${this.base}:keys-used`;
  }
  /** list of command ids for a user who is not online yet. */
  userCommands(externalId: string): string {
    return `${this.base}:cmd:user:${externalId}`;
  }
}

/** Keys that are not per game. */
export class GlobalKeys {
  constructor(readonly prefix: string) {}

  /** zset gameId → last activity ms: games whose streams the flushers should look at. */
  activeGames(): string {
    return `${this.prefix}:active-games`;
  }
  /** pub/sub channel: a key prefix was revoked or changed, or a game's settings changed. */
  authChannel(): string {
    return `${this.prefix}:auth-invalidate`;
  }
  /** BullMQ prefix; queue names carry their own hash tag (BullMQ's Redis Cluster guidance). */
  bullPrefix(): string {
    return `${this.prefix}:bull`;
  }
}
