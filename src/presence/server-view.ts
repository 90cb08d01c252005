/**
 * The live server view of one game, read from Redis (spec: Versioning rule 4, "displayed so operators can
 * see stale instances"). The heartbeat Lua script (`src/store/lua/heartbeat.lua`) writes it; the liveness
 * sweep (`sweep-server.lua`) deletes a server's keys when it is declared gone. Read-only here: used by the
 * operator CLI (`servers list`) and, later, the moderator console.
 *
 * Keys (builders in `src/store/keys.ts`):
 * - zset {@link GameKeys.servers}: member externalServerId, score = last heartbeat in ms.
 * - hash {@link GameKeys.server}: the fields of {@link SERVER_FIELDS}, all stored as strings.
 * - hash {@link GameKeys.roster}: externalId → `<openedAt>\n<username>`, `<openedAt>\n<team>\n<username>` or
 *   `<openedAt>\n<json [username, team]>`, openedAt the session's open time in ms, in base 36 (see
 *   {@link parseRosterValue}).
 */
import type { Redis } from 'ioredis';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Field names of the server hash as written by `heartbeat.lua` (keep both in step). */
export const SERVER_FIELDS = {
  /** Last heartbeat, ms since the epoch. */
  lastHeartbeatMs: 'last',
  /** First heartbeat of this registration, ms since the epoch. */
  firstHeartbeatMs: 'first',
  /** externalScopeId; empty string when the game sent none. */
  externalScopeId: 'scope',
  /** region; empty string when the game sent none. */
  region: 'region',
  playerCount: 'pc',
  maxPlayers: 'mp',
  sdkVersion: 'sdk',
  /** uptimeSeconds as reported in the last heartbeat. */
  uptimeSeconds: 'up',
  /** Heartbeat interval in seconds the last response dictated. */
  heartbeatIntervalSeconds: 'iv',
} as const;

/** One live server (a member of the game's servers zset whose hash still exists). */
export interface LiveServer {
  externalServerId: string;
  /** null when the game sent no externalScopeId. */
  externalScopeId: string | null;
  /** null when the game sent no region. */
  region: string | null;
  playerCount: number;
  maxPlayers: number;
  sdkVersion: string;
  /** True when {@link sdkVersion} is older than the newest version among the game's live servers. */
  stale: boolean;
  /** Seconds since the instance booted, as reported in its last heartbeat (not extrapolated to now). */
  uptimeSeconds: number;
  /** Interval in seconds the service dictated in its last heartbeat response. */
  heartbeatIntervalSeconds: number;
  firstHeartbeatAt: Date;
  lastHeartbeatAt: Date;
  /** Whole seconds from the last heartbeat to `nowMs` (never negative). */
  secondsSinceLastHeartbeat: number;
  /** Number of users in the server's current roster. */
  rosterSize: number;
}

/** One user on a live server's roster. */
export interface RosterEntry {
  externalId: string;
  /** null only when the stored entry is unreadable. */
  username: string | null;
  team: string | null;
  /** The heartbeat at which the user first appeared on this server (session open time). */
  openedAt: Date;
  /** Whole seconds from {@link openedAt} to `nowMs` (never negative). */
  sessionSeconds: number;
}

const DIGITS = /^(\d+)(.*)$/s;

/** Compares two digit strings of any length numerically. */
function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Orders two sdkVersion strings: negative when `a` is older, positive when newer, 0 when equal.
 * Compares dot-separated parts left to right: a part's leading digits compare numerically
 * (`1.10` > `1.9`), the rest of the part as a string, where a part with no suffix ranks above one with a
 * suffix (`1.0.0` > `1.0.0-beta`); a part that is not numeric falls back to plain string comparison;
 * when one version runs out of parts first it is older (`1.2` < `1.2.1`).
 */
export function compareSdkVersions(a: string, b: string): number {
  const pa = a.trim().split('.');
  const pb = b.trim().split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const mx = DIGITS.exec(x);
    const my = DIGITS.exec(y);
    if (mx && my) {
      const byNumber = compareDigits(mx[1]!, my[1]!);
      if (byNumber !== 0) return byNumber;
      const [sx, sy] = [mx[2]!, my[2]!];
      if (sx === sy) continue;
      if (!sx) return 1;
      if (!sy) return -1;
      return sx < sy ? -1 : 1;
    }
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** The newest of `versions` by {@link compareSdkVersions}; undefined for an empty list. */
export function newestSdkVersion(versions: Iterable<string>): string | undefined {
  let newest: string | undefined;
  for (const v of versions) if (newest === undefined || compareSdkVersions(v, newest) > 0) newest = v;
  return newest;
}

/** True when `version` is older than `newest` (false when there is no newest version). */
export function isStaleSdkVersion(version: string, newest: string | undefined): boolean {
  return newest !== undefined && compareSdkVersions(version, newest) < 0;
}

function toNumber(value: string | undefined, fallback = 0): number {
  const n = Number(value);
  return value === undefined || value === '' || !Number.isFinite(n) ? fallback : n;
}

function elapsedSeconds(fromMs: number, nowMs: number): number {
  return Math.max(0, Math.floor((nowMs - fromMs) / 1000));
}

/** Throws the first error of an ioredis pipeline result and returns the replies. */
function repliesOf(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('redis pipeline was discarded');
  return results.map(([err, reply]) => {
    if (err) throw err;
    return reply;
  });
}

/**
 * Lists the live servers of `gameId` in `keySpace`, sorted by externalServerId, at server time
 * `nowMs` (ms). Two round trips (the zset, then one pipeline of every server hash and roster size; all
 * keys share the game's hash slot). A zset member whose hash has expired is left out. `stale` is
 * computed against the newest sdkVersion among the returned servers.
 * @throws the Redis client's error when Redis is unreachable.
 */
export async function listLiveServers(redis: Redis, keySpace: KeySpace, gameId: string, nowMs: number): Promise<LiveServer[]> {
  const keys = keySpace.game(gameId);
  const flat = await redis.zrange(keys.servers(), '0', '-1', 'WITHSCORES');
  const members: { sid: string; score: number }[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) members.push({ sid: flat[i]!, score: Number(flat[i + 1]) });
  if (!members.length) return [];

  const pipe = redis.pipeline();
  for (const { sid } of members) {
    pipe.hgetall(keys.server(sid));
    pipe.hlen(keys.roster(sid));
  }
  const replies = repliesOf(await pipe.exec());

  const rows: Omit<LiveServer, 'stale'>[] = [];
  members.forEach(({ sid, score }, i) => {
    const h = replies[2 * i] as Record<string, string>;
    const rosterSize = Number(replies[2 * i + 1]);
    if (!h || !Object.keys(h).length) return;
    const last = toNumber(h[SERVER_FIELDS.lastHeartbeatMs], score);
    rows.push({
      externalServerId: sid,
      externalScopeId: h[SERVER_FIELDS.externalScopeId] || null,
      region: h[SERVER_FIELDS.region] || null,
      playerCount: toNumber(h[SERVER_FIELDS.playerCount]),
      maxPlayers: toNumber(h[SERVER_FIELDS.maxPlayers]),
      sdkVersion: h[SERVER_FIELDS.sdkVersion] ?? '',
      uptimeSeconds: toNumber(h[SERVER_FIELDS.uptimeSeconds]),
      heartbeatIntervalSeconds: toNumber(h[SERVER_FIELDS.heartbeatIntervalSeconds]),
      firstHeartbeatAt: new Date(toNumber(h[SERVER_FIELDS.firstHeartbeatMs], last)),
      lastHeartbeatAt: new Date(last),
      secondsSinceLastHeartbeat: elapsedSeconds(last, nowMs),
      rosterSize,
    });
  });
  const newest = newestSdkVersion(rows.map((r) => r.sdkVersion));
  return rows
    .sort((a, b) => (a.externalServerId < b.externalServerId ? -1 : a.externalServerId > b.externalServerId ? 1 : 0))
    .map((r) => ({ ...r, stale: isStaleSdkVersion(r.sdkVersion, newest) }));
}

/**
 * A roster value's open time → ms: 8–9 base-36 digits as heartbeat.lua writes it since 2026-11-30
 * (src/store/lua/lib/roster-open-time.lua), else the decimal ms of earlier builds (13 digits for any time
 * from 2001 to 2286, so the length tells them apart). NaN when unreadable.
 */
function openTimeMs(text: string): number {
  if (text.length === 8 || text.length === 9) return /^[0-9a-z]+$/.test(text) ? parseInt(text, 36) : Number.NaN;
  return text.trim() === '' ? Number.NaN : Number(text);
}

/**
 * Parses one roster hash value `<openedAt>\n<info>` as heartbeat.lua writes it (openedAt: see
 * {@link openTimeMs}): info is the bare
 * username of a player without a team whose name starts with neither `[` nor `{` (most players), else
 * the JSON `[username, team]` (an object `{u, t}` is accepted too). Returns null when the open time is
 * unreadable; an unreadable JSON info yields null username and team.
 */
export function parseRosterValue(value: string): { openedAtMs: number; username: string | null; team: string | null } | null {
  const nl = value.indexOf('\n');
  const openedAtMs = openTimeMs(nl < 0 ? value : value.slice(0, nl));
  if (!Number.isFinite(openedAtMs)) return null;
  let username: unknown = null;
  let team: unknown = null;
  const text = nl < 0 ? null : value.slice(nl + 1);
  if (text !== null && text[0] !== '[' && text[0] !== '{') {
    // heartbeat.lua `rosterInfo`: a bare username on one line, or `<team>\n<username>`
    const teamEnd = text.indexOf('\n');
    return teamEnd < 0 ? { openedAtMs, username: text, team: null } : { openedAtMs, username: text.slice(teamEnd + 1), team: text.slice(0, teamEnd) };
  }
  try {
    const info: unknown = text === null ? null : JSON.parse(text);
    if (Array.isArray(info)) [username, team] = info as unknown[];
    else if (info && typeof info === 'object') ({ u: username, t: team } = info as { u?: unknown; t?: unknown });
  } catch {
    // unreadable info: keep nulls
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : v === null || v === undefined ? null : JSON.stringify(v));
  return { openedAtMs, username: str(username), team: str(team) };
}

/**
 * The current roster of one live server at server time `nowMs` (ms), sorted by session start then
 * externalId. Empty when the server is unknown, gone or has nobody on it; unreadable entries are skipped.
 * @throws the Redis client's error when Redis is unreachable.
 */
export async function getRoster(redis: Redis, keySpace: KeySpace, gameId: string, externalServerId: string, nowMs: number): Promise<RosterEntry[]> {
  const raw = await redis.hgetall(keySpace.game(gameId).roster(externalServerId));
  const entries: RosterEntry[] = [];
  for (const [externalId, value] of Object.entries(raw)) {
    const parsed = parseRosterValue(value);
    if (!parsed) continue;
    entries.push({
      externalId,
      username: parsed.username,
      team: parsed.team,
      openedAt: new Date(parsed.openedAtMs),
      sessionSeconds: elapsedSeconds(parsed.openedAtMs, nowMs),
    });
  }
  return entries.sort((a, b) => a.openedAt.getTime() - b.openedAt.getTime() || (a.externalId < b.externalId ? -1 : a.externalId > b.externalId ? 1 : 0));
}
