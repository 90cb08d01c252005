/**
 * The one registry of Redis key names, with the TTL of each family beside it.
 *
 * Every key of one game starts with `<prefix>:{g:<gameId>}` so the whole game lives in one Redis Cluster
 * hash slot: the heartbeat Lua script touches many of these keys atomically, which Cluster only allows
 * within one slot. Workspace-wide keys use `{w:<workspaceId>}` the same way. Every game-key suffix is
 * spelled once, in src/store/keyspace/suffixes.ts; the Lua scripts receive their keys as KEYS, and the
 * few keys a script derives from data it reads it builds from {@link GameKeys.base} and the same suffix
 * table (test/store/keys.test.ts checks the names, test/store/script-slots.test.ts the slots).
 */
import { GAME_SUFFIXES as S } from './keyspace/suffixes.js';

/**
 * Seconds of server time a replay claim must be found in: twice the ±300 s acceptance window (spec:
 * Authentication, rule 3), the longest a signature can stay acceptable after its first use. A bucket is
 * kept until its claims' own windows close (src/store/lua/lib/replay-claim.ts), at most this long after its end.
 */
export const REPLAY_TTL_SECONDS = 600;
/**
 * Seconds a claim outlives its request's window (ts + 300 s): room for the API processes' and Redis's
 * clocks to differ and for the script to run after `nowMs` was read. The versions before kept at least
 * 1 s in the worst case (a client 300 s ahead, claimed at a bucket's end).
 */
export const REPLAY_MARGIN_SECONDS = 30;
/**
 * Seconds of server time one replay bucket hash covers (src/store/lua/lib/replay-claim.ts): a claim checks the
 * {@link REPLAY_BUCKETS_CHECKED} newest buckets, which cover the last {@link REPLAY_TTL_SECONDS} s.
 */
export const REPLAY_BUCKET_SECONDS = 120;
/** Buckets a replay claim reads: ⌈600 / 120⌉ + 1 (the window's start need not fall on a bucket edge). */
export const REPLAY_BUCKETS_CHECKED = Math.ceil(REPLAY_TTL_SECONDS / REPLAY_BUCKET_SECONDS) + 1;
/** Seconds an idle server hash survives if the liveness sweep never ran (safety net, not the gone rule). */
export const SERVER_TTL_SECONDS = 24 * 3600;
/** Ms the blocklist rebuild lock lives: one process rebuilds a workspace's blocklist, the others wait (src/bans/blocklist.ts). */
export const BAN_REBUILD_LOCK_MS = 10_000;
/**
 * Seconds a command hash outlives its expiry: long enough for late acks to be recognised as re-acks
 * and for `commands show` to read the live state; the durable record is in Postgres.
 */
export const COMMAND_HASH_GRACE_SECONDS = 3600;
/** Sliding window of the nudge budget (spec: Limits, messaging receive budget is per minute), ms. */
export const NUDGE_WINDOW_MS = 60_000;
/**
 * A door-decision hash outlives the window after its own (`DOOR_DECISION_WINDOW_SECONDS`, the windows a
 * lookup reads) by this many seconds; each entry also carries its own expiry, checked on read.
 */
export const DOOR_DECISIONS_TTL_MARGIN_SECONDS = 5;
/**
 * Seconds a window's quota counters (`{g}:rl:<kind>:<window>:<keyId>`) outlive the window: room for a
 * request that read its `nowMs` inside the window to reach Redis after the window ended (the request
 * deadline, API and Redis clocks apart). Nothing reads an ended window's counts; until 2026-11-29 they were
 * kept through the whole next window, which doubled the counters a join storm leaves in Redis (issue #32
 * item 4).
 */
export const QUOTA_MARGIN_SECONDS = 10;
/**
 * Seconds a per-minute throttle count (`{g}:rl:429:<minute>`) lives: longer than the
 * {@link THROTTLE_HISTORY_MINUTES}-minute history the ingest health check reads (src/limits/ingest-health.ts).
 */
export const THROTTLE_COUNT_TTL_SECONDS = 15 * 60;
/** Minutes of throttle history the ingest health check and `admin health` look at. */
export const THROTTLE_HISTORY_MINUTES = 10;
/**
 * Most entries a game's dead-letter stream keeps (`XADD … MAXLEN ~`: Redis may keep a few more until it
 * can drop a whole node); each entry's row is cut to {@link DEAD_LETTER_ROW_MAX_CHARS}, so one game's
 * dead letters stay within ~16 MB whatever is sent. No TTL: an operator reads them (src/store/dead-letters.ts).
 */
export const DEAD_LETTER_MAXLEN = 1000;
/** Longest refused row (its JSON) a dead letter keeps, in characters; longer ones are cut and marked. */
export const DEAD_LETTER_ROW_MAX_CHARS = 16 * 1024;
/**
 * Life of an API process's pressure report, ms (src/limits/flush-yield.ts): the flushers hold off while a
 * report is younger than this, so they resume within 2 s of the last request that found the API pressed.
 */
export const PRESSURE_REPORT_TTL_MS = 2000;

/** Key builders for one game's hot state; made only by `KeySpace.game` (src/store/keyspace/key-space.ts). */
export class GameKeys {
  /** `<prefix>:{g:<gameId>}`: the hash-tagged base every per-game key extends. */
  readonly base: string;

  /**
   * @param legacyWrites whether replay claims and user locations are written in the layout before
   *   2026-11-29 ({@link replayBucket}, {@link where}) instead of {@link replayClaims} and
   *   {@link userLocations}: `LEGACY_LAYOUT_WRITES`, src/store/lua/lib/replay-claim.ts and user-location.ts.
   */
  constructor(prefix: string, readonly gameId: string, readonly legacyWrites = false) {
    this.base = `${prefix}:{g:${gameId}}`;
  }

  /**
   * The replay claims of one {@link REPLAY_BUCKET_SECONDS}-s bucket of server time (`bucket` = floor(ms / 120 000)):
   * this key counts them (a string integer; the bucket's shard count follows from it), its shards `<key>:<n>`
   * are sets of claims (integers), each kept until the latest of its claims' timestamps + 300 s (+ margin
   * and 10 s of headroom) (src/store/lua/lib/replay-claim.ts, src/store/lua/lib/replay.lua `claimReplay`).
   */
  replayClaims(bucket: number): string {
    return `${this.base}${S.replayClaims}${bucket}`;
  }
  /**
   * The same bucket in the layout before 2026-11-29: hash shard → concatenated replay tags (8 base64
   * characters each), read by every process and written instead of {@link replayClaims} during an upgrade's
   * first step (`LEGACY_LAYOUT_WRITES`, src/store/lua/lib/replay-claim.ts).
   */
  replayBucket(bucket: number): string {
    return `${this.base}${S.replay}${bucket}`;
  }
  /** hash: the live view of one server (fields in presence/server-view.ts), and `o` its ordinal ({@link serverOrdinals}). */
  server(externalServerId: string): string {
    return `${this.base}${S.server}${externalServerId}`;
  }
  /** zset member externalServerId, score = last heartbeat in ms. */
  servers(): string {
    return `${this.base}${S.servers}`;
  }
  /**
   * hash externalId → `<openedAt>\n<username>` (no team, a name on one line not starting with `[` or `{`),
   * `<openedAt>\n<team>\n<username>` (a string team on one line not starting with either) or
   * `<openedAt>\n<json [username, team]>`: the roster of one server (src/presence/server-view.ts `parseRosterValue`);
   * openedAt is the session's open time, ms in base 36 (decimal before 2026-11-30: src/store/lua/lib/roster-open-time.lua).
   */
  roster(externalServerId: string): string {
    return `${this.base}${S.roster}${externalServerId}`;
  }
  /**
   * The head of the user locations, hash externalId → externalServerId (or `<server>\n<previous server>`)
   * of every user on a roster (command routing, kicks), spread over listpack-sized shards `<key>:<n>`; its
   * field '' holds the shards' state (src/store/lua/lib/user-location.ts).
   */
  userLocations(): string {
    return `${this.base}${S.userLocations}`;
  }
  /**
   * The user locations in the layout before 2026-11-29, one hash externalId → externalServerId: read by
   * every process while it exists, written instead of {@link userLocations} during an upgrade's first step
   * (`LEGACY_LAYOUT_WRITES`, src/store/lua/lib/user-location.ts).
   */
  where(): string {
    return `${this.base}${S.where}`;
  }
  /** string, no TTL: the last server ordinal given in the game; INCR gives the next (src/store/lua/lib/user-locations.lua). */
  serverOrdinal(): string {
    return `${this.base}${S.serverOrdinal}`;
  }
  /**
   * hash, no TTL: live server ordinal n → externalServerId for n in [100·`hundred`, 100·`hundred` + 99], the
   * name user locations give a server ({@link userLocations}); the server's own hash holds its n in field
   * `o`. An entry goes when its server is swept; an empty hash vanishes.
   */
  serverOrdinals(hundred: number): string {
    return `${this.base}${S.serverOrdinals}${hundred}`;
  }
  /** stream of event batches, one entry per accepted heartbeat with events. */
  eventStream(): string {
    return `${this.base}${S.events}`;
  }
  /** stream of server up/gone and session open/close transitions, in order. */
  sessionStream(): string {
    return `${this.base}${S.sessions}`;
  }
  /** stream of command transitions (pending at issue, dispatched, acked, failed, expired); also read by the console live feed. */
  commandLog(): string {
    return `${this.base}${S.cmdlog}`;
  }
  /** hash: one command's state, its JSON entry and its transitions (`t:<status>` = `<ms>|<server>|<reason>`). */
  command(commandId: string): string {
    return `${this.base}${S.command}${commandId}`;
  }
  /** list of command ids waiting for delivery to a server. */
  pendingCommands(externalServerId: string): string {
    return `${this.base}${S.pending}${externalServerId}`;
  }
  /** zset of command ids delivered to a server and not yet acked, score = issuedAt ms. */
  dispatchedCommands(externalServerId: string): string {
    return `${this.base}${S.dispatched}${externalServerId}`;
  }
  /** hash keyId → last use ms, copied to ApiKey.lastUsedAt by the liveness sweep. */
  keysUsed(): string {
    return `${this.base}${S.keysUsed}`;
  }
  /** list of command ids for a user who is not online yet. */
  userCommands(externalId: string): string {
    return `${this.base}${S.userCommands}${externalId}`;
  }
  /** zset command id → expiresAt ms of every command issued in the game (src/commands/command-expiry.ts). */
  commandExpiry(): string {
    return `${this.base}${S.commandExpiry}`;
  }
  /** zset publish id → publish time ms, TTL {@link NUDGE_WINDOW_MS}: nudges sent on the game's topic. */
  nudgeLog(): string {
    return `${this.base}${S.nudgeLog}`;
  }
  /** zset write id → send time ms (Redis clock): platform ban writes of the game's universe in the last window (src/bans/platform-write-limits.ts). */
  banWriteSlots(): string {
    return `${this.base}${S.banWriteSlots}`;
  }
  /** zset write id → send time ms: platform ban writes for one user in the last window. */
  banWriteUserSlots(externalId: string): string {
    return `${this.base}${S.banWriteUserSlots}${externalId}`;
  }
  /** string, TTL = the platform's Retry-After: no ban write for the game's universe until it expires. */
  banWritePause(): string {
    return `${this.base}${S.banWritePause}`;
  }
  /**
   * hash, no TTL: the game's workspace, heartbeat interval and platform settings (never its cloud API key),
   * copied from Postgres for key verification during an outage (src/auth/key-records.ts).
   */
  gameRecord(): string {
    return `${this.base}${S.gameRecord}`;
  }
  /** string, no TTL: the game's doors version (= Game.doorsVersion, only ever raised; src/doors/doors-version.ts). */
  doorsVersion(): string {
    return `${this.base}${S.doorsVersion}`;
  }
  /**
   * hash, no TTL: door subject versions, `w` → the workspace's (schedule, org tree), `u:<externalId>` →
   * the member's (positions, records, clock-in); raised by src/doors/subject-invalidation.ts.
   */
  doorSubjects(): string {
    return `${this.base}${S.doorSubjects}`;
  }
  /**
   * hash of door decisions under one doors version, written in one door-cache window (`window` =
   * floor(ms / window ms) of the door decision window `DOOR_DECISION_WINDOW_SECONDS`): field `#<n>` per subject context
   * → msgpack `[doorKey, expiresAtMs, decision code, ...]` (the code is `packDecision` of
   * src/doors/decision-cache.ts, ~3 B for a decision no policy made; n from {@link doorContexts}), field
   * externalId per user → msgpack `[subjectVersion, "#<n>"]`, the pointer to the user's context. The head
   * of a sharded hash whose shards `<this key>:<shard>` door-store.lua / door-lookup.lua derive
   * (src/store/lua/lib/sharded-hash.lua). Lives until two windows after the window's start
   * plus {@link DOOR_DECISIONS_TTL_MARGIN_SECONDS} s. Written and read by door-store.lua / door-lookup.lua,
   * which derive it from the doors version they read (src/doors/decision-cache.ts).
   */
  doorDecisions(doorsVersion: string, window: number): string {
    return `${this.base}${S.doorDecisions}${doorsVersion}:${window}`;
  }
  /**
   * hash: the ordinal of every subject context whose decisions were cached under `doorsVersion`
   * (`<workspace version>:<context key>` → n; field "" the last n given), so that a user's pointer names
   * its context's field `#<n>` in a few bytes. Lives as long as the latest decision hash of that doors
   * version (door-store.lua extends it on every store).
   */
  doorContexts(doorsVersion: string): string {
    return `${this.base}${S.doorContexts}${doorsVersion}`;
  }
  /** stream of door decisions answered, for the access-log flusher (src/doors/access-log-flusher.ts). */
  accessStream(): string {
    return `${this.base}${S.access}`;
  }
  /**
   * stream, MAXLEN ~{@link DEAD_LETTER_MAXLEN}, no TTL: rows of this game's streams that Postgres refused,
   * each with its source stream, entry id, reason and row (src/store/dead-letters.ts).
   */
  deadLetters(): string {
    return `${this.base}${S.deadLetters}`;
  }
  /** hash source stream → rows dead-lettered in this game ever (not trimmed), written with {@link deadLetters}. */
  deadLetterCounts(): string {
    return `${this.base}${S.deadLetterCounts}`;
  }
  /**
   * hash, PEXPIRE to {@link QUOTA_MARGIN_SECONDS} past the window's end: the head of the request counters of one key in
   * one fixed window of one quota kind (src/limits/quotas.ts); `window` = floor(now ms / window length ms).
   * Subjects (`hb` `<externalServerId>`, `door` `u:<externalId>:<doorsVersion>:<subjectVersion>` and, past the
   * user's allowance (src/limits/quotas.ts), `d:<externalId>:<doorKey>:<doorsVersion>:<subjectVersion>`,
   * `bulk` `<externalId>:<doorsVersion>:<subjectVersion>`, `ban` `<externalId>`, `manifest` `-`) are
   * fields named by 2⁴⁸ + the first 48 bits of their SHA-1 in decimal (15 digits; 12 hex digits before
   * 2026-11-29), spread by linear hashing over this hash (shard 0, which also holds the state in field
   * `''`) and `<this key>:<shard>` for shards 1, 2, ..., each kept within the listpack encoding, where
   * such a field is a 64-bit integer (~10 B a subject with its count instead of ~75 B in a hash table). The shards are derived
   * by `overQuota` (src/store/lua/lib/quota.lua) and share this key's hash tag.
   */
  rateWindow(kind: string, window: number, keyId: string): string {
    return `${this.base}${S.rateWindow}${kind}:${window}:${keyId}`;
  }
  /**
   * hash `<kind>:<who>` → count, TTL {@link THROTTLE_COUNT_TTL_SECONDS}: requests of the game answered 429 in
   * one minute (`floor(ms / 60000)`), by quota kind and server or user (who is being throttled).
   */
  throttledInMinute(minute: number): string {
    return `${this.base}${S.throttled}${minute}`;
  }
}

/**
 * Key builders for one workspace's hot state: `<prefix>:{w:<workspaceId>}`, one Cluster slot per
 * workspace. Bans are workspace-scoped (spec: What the service does, item 5), so the blocklist lives here.
 * Made only by `KeySpace.workspace`.
 */
export class WorkspaceKeys {
  /** `<prefix>:{w:<workspaceId>}`: the hash-tagged base every per-workspace key extends. */
  readonly base: string;

  constructor(prefix: string, readonly workspaceId: string) {
    this.base = `${prefix}:{w:${workspaceId}}`;
  }

  /** hash externalId → `<ticket>|<JSON array of active bans>` (empty after `|` = none): the blocklist. No TTL. */
  banList(): string {
    return `${this.base}:bans`;
  }
  /** hash `seq` (write ticket counter), `built` (ticket of the last complete rebuild). No TTL; its absence means "rebuild". */
  banMeta(): string {
    return `${this.base}:bans:meta`;
  }
  /** string, PX {@link BAN_REBUILD_LOCK_MS}: held by the process rebuilding the blocklist. */
  banRebuildLock(): string {
    return `${this.base}:bans:rebuilding`;
  }
}

/** Keys that are not per game; made only by `KeySpace` (its `global`). */
export class GlobalKeys {
  constructor(private readonly prefix: string) {}

  /** zset gameId → last activity ms: games whose streams the flushers should look at. */
  activeGames(): string {
    return `${this.prefix}:active-games`;
  }
  /**
   * string (Date.now() ms of the latest report), TTL {@link PRESSURE_REPORT_TTL_MS}: some API process is
   * near its admission ceilings, so the stream flushers hold off (src/limits/flush-yield.ts). One key for
   * the deployment: the flushers of every game yield to any API process under pressure.
   */
  apiPressure(): string {
    return `${this.prefix}:api-pressure`;
  }
  /**
   * string (hex), no TTL (deleted on revoke): keyed digest of the secret last verified with argon2 for a key prefix
   * (src/auth/verified-digests.ts). Not per game: the game is unknown until the key is.
   */
  verifiedKeyDigest(keyPrefix: string): string {
    return `${this.prefix}:key-digest:${keyPrefix}`;
  }
  /**
   * hash, no TTL: what a heartbeat needs of a server key when Postgres cannot be asked (src/auth/key-records.ts):
   * id, game, argon2id hash (never the secret), scopes, revoked flag, record format. `{k:<keyPrefix>}` tags it
   * so a Cluster routes it by the key prefix, the only thing a request names before it is verified.
   */
  serverKeyRecord(keyPrefix: string): string {
    return `${this.prefix}:{k:${keyPrefix}}:record`;
  }
  /**
   * string (ISO 8601 time), no TTL: when a process last copied every key and game record from Postgres
   * (src/auth/key-records.ts `reconcileKeyRecords`); /readyz of the game listener needs it.
   */
  keyRecordsSynced(): string {
    return `${this.prefix}:key-records:synced`;
  }
  /**
   * pub/sub channel: a key prefix was revoked or changed, a game's settings changed, or a moderator
   * account changed (`moderator:<id>`, src/auth/moderators/moderator-accounts.ts).
   */
  authChannel(): string {
    return `${this.prefix}:auth-invalidate`;
  }
  /**
   * string (JSON), TTL = the session's idle expiry capped by its absolute one: a console sign-in session,
   * by SHA-256 (hex) of its cookie value, so the store alone never yields a usable cookie
   * (src/auth/moderators/console-sessions.ts).
   */
  consoleSession(idDigest: string): string {
    return `${this.prefix}:console-session:${idDigest}`;
  }
  /**
   * string (JSON), TTL 10 min, read once (GETDEL): what an OpenID Connect sign-in started with (PKCE
   * verifier, nonce, invitation code), by its `state` (src/adapters/console/console-oidc.ts).
   */
  oidcLogin(state: string): string {
    return `${this.prefix}:oidc-login:${state}`;
  }
  /**
   * zset `<gameId>:<commandId>` → expiresAt ms: which games have commands coming due, so the expiry
   * worker visits only those (one member per command; removed once that game's due commands expired).
   */
  commandExpiryIndex(): string {
    return `${this.prefix}:cmd-expiry`;
  }
  /**
   * string, no TTL: the highest Session.id the live shift derivation has processed (src/derived/
   * live-derivation.ts). Global, not per workspace: one indexed read of new sessions serves every workspace.
   */
  derivedSessionCursor(): string {
    return `${this.prefix}:derived:session-cursor`;
  }
  /**
   * zset, no TTL: ranges of Session ids below {@link derivedSessionCursor} that no committed row held when
   * the cursor passed them, as members `<from>-<to>` (inclusive) scored by when they were first seen (ms).
   * A flusher's transaction may commit after one with higher ids; the live derivation looks for such rows
   * in these ranges until they are old enough to be ids that will never commit (src/derived/live-derivation.ts).
   */
  derivedSessionGaps(): string {
    return `${this.prefix}:derived:session-gaps`;
  }
  /**
   * set `<workspaceId>:<memberId>`, no TTL: members holding an open shift, so the live derivation finds
   * shifts to close or accrue without scanning the Shift table (src/derived/shift-deriver.ts; a superset
   * is harmless, the derivation repairs it). Also this Redis's record of who is clocked in: a member
   * entering or leaving it is reported to the door side's decision cache (issue #33).
   */
  openShifts(): string {
    return `${this.prefix}:derived:open-shifts`;
  }
  /**
   * zset gameId → last 429 ms: games throttled recently, so the ingest health check visits only those
   * (pruned after {@link THROTTLE_COUNT_TTL_SECONDS}).
   */
  throttledGames(): string {
    return `${this.prefix}:throttled-games`;
  }
  /** hash source stream → rows dead-lettered in every game, for `/metrics` (src/store/dead-letters.ts). No TTL. */
  deadLetterTotals(): string {
    return `${this.prefix}:dead-letters:total`;
  }
  /** BullMQ prefix; queue names carry their own hash tag (BullMQ's Redis Cluster guidance). */
  bullPrefix(): string {
    return `${this.prefix}:bull`;
  }
}
