/**
 * Per-key rate quotas (spec: Limits, "Numeric per-key rate quotas: not shown"; "Server-side limits are
 * derived from the configured heartbeat interval; door checks are governed by the cache TTL. A client that
 * heartbeats at the returned interval and respects the TTL is not throttled").
 *
 * All servers of a game share one key, so no quota counts a whole key: each counts one *subject* (one
 * server, one user, one user × door) in fixed windows, inside the Lua script that already does the
 * request's Redis work (no extra round trip). Over the quota: 429 `rate_limited`, `Retry-After` = whole
 * seconds to the end of the window (at least 1), nothing of the request stored.
 *
 * | kind | subject | window | quota per window |
 * | --- | --- | --- | --- |
 * | `heartbeat` | key × externalServerId | 60 s | 2·⌈60 / I⌉ + N + 10 |
 * | `door_check` | key × externalId × doorKey (× versions), past the user's first 10 of the window | T | 10 |
 * | `door_bulk` | key × externalId (× versions) | T | 10 |
 * | `manifest` | key × externalServerId when the request names its server, else key | 60 s | 10 per server, else 2·S + 10 |
 * | `ban_check` | key × externalId | 60 s | 10 |
 *
 * I = the game's heartbeat interval (15–60 s), T = the door decision window (`DOOR_DECISION_WINDOW_SECONDS`,
 * 60 s by default, never longer than the door cache TTL `DOOR_CACHE_TTL_SECONDS`), versions = the game's doors version and the user's subject version (a change of either
 * invalidates cached decisions, so the client's re-checks start a fresh count), S = the game's live servers, N = {@link NUDGE_ALLOWANCE} = the most nudges the service
 * publishes on one game's topic in a minute (src/commands/nudge-budget.ts, 108 for a one-server game and
 * fewer per server for more), each of which may make every server heartbeat once early (spec: Urgent
 * nudge).
 *
 * Why a compliant client is never throttled:
 * - heartbeat: at the returned interval it sends ⌈60 / I⌉ scheduled heartbeats a minute; a fixed window
 *   can catch one more, and each may be re-sent once (a 409 re-sign or a 413 split), hence 2·⌈60 / I⌉;
 *   plus at most N nudged heartbeats; plus 10 for retries after 5xx (exponential backoff from 1 s fits
 *   fewer than 7 in a minute). I = 20 s: 6 + 108 + 10 = 124 a minute per server; I = 60 s: 120.
 * - door_check: a decision is re-checked only after its ttlSeconds ran out; a fresh one lives the door
 *   cache TTL (≥ T), one answered from the shared cache (made in this window or the previous one) at
 *   least the TTL less 2·T, so one (user, door) needs at most 2 checks in a window of T (a window edge)
 *   when the TTL is T, and fewer when it is longer; 10 leaves room for re-signs, 5xx retries and decisions
 *   with a TTL shorter than T near a policy time-window boundary. The per-(user, door) count starts only
 *   after the user's first {@link DOOR_CHECK_USER_ALLOWANCE} checks of the window (issue #32 item 4,
 *   docs/decisions.md): a player who checks a few doors, the normal case, costs Redis one counter instead
 *   of one per door (~16 B each), and a (user, door) count is never higher than before, so no request
 *   that passed before is refused; a client hammering one door is refused after at most
 *   {@link DOOR_CHECK_USER_ALLOWANCE} + 10 checks in a window instead of 10.
 * - door_bulk: once per join (and after a user-targeted `refresh_permissions`); 10 within one window is not normal play.
 * - manifest: on server start and after `refresh_permissions`, so at most about twice a minute per
 *   server. A request that names its server (`?externalServerId=`, as the reference clients send) is
 *   counted per server: 10 a minute. One that does not is counted per key against 2·S + 10, S the live
 *   servers read in the script; that quota lags a fleet that boots at once (its servers fetch the
 *   manifest before their first heartbeat makes them live: 57 of 1,000 booting servers were refused in
 *   a bench:fleet run, issue #32), which the per-server count does not.
 * - ban_check: once per connect.
 */
import { nudgesPerMinute } from '../commands/nudge-budget.js';
import type { QuotaCount } from '../store/lua/lib/quota-count.js';

export type QuotaKind = 'heartbeat' | 'door_check' | 'door_bulk' | 'manifest' | 'ban_check';

/** Window of the heartbeat, manifest and ban-check quotas, seconds. */
export const MINUTE_WINDOW_SECONDS = 60;
/** Re-sends of failed requests a quota leaves room for (5xx backoff retries). */
export const RETRY_ALLOWANCE = 10;
/** Most nudged heartbeats one server can be asked for in a minute: the nudge budget of a one-server game. */
export const NUDGE_ALLOWANCE = nudgesPerMinute(1);
/** Door checks per (key, user, door) per door decision window, counted after the user's {@link DOOR_CHECK_USER_ALLOWANCE}. */
export const DOOR_CHECK_QUOTA = 10;
/**
 * Door checks per (key, user) per door decision window counted only per user, not per door: 2 checks (a window
 * edge) of each of 5 doors, more than the intended client flow needs (bulk on join, single checks only
 * for uncached doors).
 */
export const DOOR_CHECK_USER_ALLOWANCE = 10;
/** Bulk door checks per (key, user) per door decision window. */
export const DOOR_BULK_QUOTA = 10;
/** Ban checks per (key, user) per minute. */
export const BAN_CHECK_QUOTA = 10;
/** Manifest fetches per key per minute, per live server (plus {@link RETRY_ALLOWANCE}), for requests that do not name their server. */
export const MANIFEST_PER_SERVER = 2;
/**
 * Manifest fetches per minute of one server that names itself (`?externalServerId=`): boot and
 * `refresh_permissions` need at most about 2 (4 across a window edge), the rest is room for re-sends.
 */
export const MANIFEST_PER_NAMED_SERVER = 10;

/** Heartbeats per (key, server) per minute for a game whose interval is `intervalSeconds`. */
export function heartbeatQuota(intervalSeconds: number): number {
  return 2 * Math.ceil(MINUTE_WINDOW_SECONDS / intervalSeconds) + NUDGE_ALLOWANCE + RETRY_ALLOWANCE;
}

/** Manifest fetches per key per minute for a game with `liveServers` live servers. */
export function manifestQuota(liveServers: number): number {
  return MANIFEST_PER_SERVER * Math.max(1, liveServers) + RETRY_ALLOWANCE;
}

/** Short names of the kinds inside Redis keys and the throttle history (`hb:server-7`). */
export const KIND_TAGS: Readonly<Record<QuotaKind, string>> = {
  heartbeat: 'hb',
  door_check: 'door',
  door_bulk: 'bulk',
  manifest: 'manifest',
  ban_check: 'ban',
};

/** One request's quota (what the scripts count: src/store/lua/lib/quota-count.ts) and its kind, which the 429 names. */
export interface QuotaArgs extends QuotaCount {
  kind: QuotaKind;
}

/**
 * The quota a door request is counted against (see the table above): `one` = doors/check, `all` =
 * doors/bulk and `join` = the bulk decisions a bans/check asks for, `version` = doors/manifest. `windowSeconds` is config `DOOR_DECISION_WINDOW_SECONDS`.
 */
export function doorQuota(mode: 'one' | 'all' | 'join' | 'version', q: { keyId: string; externalId?: string; doorKey?: string; externalServerId?: string | null; windowSeconds: number }): QuotaArgs {
  const user = q.externalId ?? '';
  // `u:` and `d:` keep the per-user and per-door subjects of one hash apart whatever the ids hold
  if (mode === 'one') {
    return { kind: 'door_check', tag: KIND_TAGS.door_check, field: `d:${user}:${q.doorKey ?? ''}`, quota: DOOR_CHECK_QUOTA, perServer: 0, windowSeconds: q.windowSeconds, who: user, userAllowance: { field: `u:${user}`, count: DOOR_CHECK_USER_ALLOWANCE } };
  }
  if (mode === 'all' || mode === 'join') return { kind: 'door_bulk', tag: KIND_TAGS.door_bulk, field: user, quota: DOOR_BULK_QUOTA, perServer: 0, windowSeconds: q.windowSeconds, who: user };
  // `s:` keeps a server's field apart from the key's `-` whatever the id holds
  if (q.externalServerId) return { kind: 'manifest', tag: KIND_TAGS.manifest, field: `s:${q.externalServerId}`, quota: MANIFEST_PER_NAMED_SERVER, perServer: 0, windowSeconds: MINUTE_WINDOW_SECONDS, who: q.externalServerId };
  return { kind: 'manifest', tag: KIND_TAGS.manifest, field: '-', quota: RETRY_ALLOWANCE, perServer: MANIFEST_PER_SERVER, windowSeconds: MINUTE_WINDOW_SECONDS, who: q.keyId };
}

/** The quota of POST bans/check for `externalId` (see the table above): per (key, user) per minute. */
export function banCheckQuota(externalId: string): QuotaArgs {
  return { kind: 'ban_check', tag: KIND_TAGS.ban_check, field: externalId, quota: BAN_CHECK_QUOTA, perServer: 0, windowSeconds: MINUTE_WINDOW_SECONDS, who: externalId };
}
