/**
 * The three door endpoints' work (spec: Endpoints › doors/check, doors/bulk, doors/manifest; issue #5),
 * answered as values ({@link DoorCheckAnswer}, {@link DoorBulkAnswer}, {@link DoorManifestAnswer}) that
 * src/adapters/http/door-responses.ts serialises. A decision travels as its ready-made JSON plus its outcome, so a
 * cache hit never parses or re-serialises it.
 *
 * - check: one round trip to Redis (replay claim + versions + the cached decision, logged by the script
 *   on a hit). On a miss: door definitions from the in-process catalog (Postgres only when the doors
 *   version moved), the workspace snapshot from its in-process cache (Postgres only when the schedule or
 *   org tree changed, or once per TTL), the member's own rows from Postgres (one statement shared by the
 *   checks of the same moment, src/doors/member-rows.ts), evaluation,
 *   answer; the cache write and the access-log entry follow without holding the response.
 * - bulk: the same for every door of the game, with one subject load for all the doors the user's
 *   cached decisions (made by single checks) do not answer; it logs its answer but caches nothing.
 * - manifest: replay claim + version (one round trip), definitions from the catalog.
 *
 * Response shapes: `doorCheckResponseSchema`, `doorBulkResponseSchema`, `doorManifestResponseSchema`
 * (src/schemas/doors.ts).
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { DomainError, NotFoundError, UnavailableError } from '../errors.js';
import { log } from '../log.js';
import type { Decision, DoorDef, Effect } from './door-types.js';
import { DoorCatalog, type CatalogEntry } from './door-catalog.js';
import { DecisionCache, type CachedDecision, type Lookup } from './decision-cache.js';
import type { QuotaArgs } from '../limits/quotas.js';
import { raiseDoorsVersion } from '../store/lua/raise-doors-version.js';
import { evaluateDoor } from './evaluate.js';
import { buildSubjectContext, type SubjectContext } from './subject-context.js';
import { contextKey, usersNamedBy } from './context-key.js';
import { MemberRows } from './member-rows.js';
import { WorkspaceSnapshots } from './workspace-snapshot.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Who is asking: the authenticated key's game plus the request's signature (the replay-cache key). */
export interface DoorCaller {
  gameId: string;
  keyId: string;
  signature: string;
  /** The request's signed timestamp, s (see {@link LookupInput}). */
  signedAtSeconds?: number;
}

export interface DoorAccessDeps {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  /** Config `DOOR_CACHE_TTL_SECONDS`: longest life of a decision (its ttlSeconds), seconds. */
  doorCacheTtlSeconds: number;
  /** Config `DOOR_DECISION_WINDOW_SECONDS`: window of the shared decision cache and the door quotas, seconds. */
  doorDecisionWindowSeconds: number;
}

/** The public JSON of a decision without its TTL: `{doorKey, decision, reason, policyId, failMode, forcedState}`. */
function decisionJson(door: DoorDef, d: Decision): string {
  return JSON.stringify({ doorKey: door.key, decision: d.decision, reason: d.reason, policyId: d.policyId, failMode: door.failMode, forcedState: door.forcedState });
}

/**
 * One answered decision: its outcome (for metrics), its public JSON without the TTL
 * (`{doorKey, decision, reason, policyId, failMode, forcedState}`) and its remaining life in seconds.
 */
export interface AnsweredDecision {
  decision: Effect;
  json: string;
  ttlSeconds: number;
}

/** doors/check's answer (`doorCheckResponseSchema` without serverTime). */
export interface DoorCheckAnswer {
  answered: AnsweredDecision;
  externalId: string;
  doorsVersion: number;
  /** True when the decision came from the decision cache. */
  cached: boolean;
}

/** doors/bulk's answer (`doorBulkResponseSchema` without serverTime): every door, in key order. */
export interface DoorBulkAnswer {
  externalId: string;
  doorsVersion: number;
  decisions: AnsweredDecision[];
}

/** doors/manifest's answer (`doorManifestResponseSchema` without serverTime); `version` is also the ETag. */
export interface DoorManifestAnswer {
  version: number;
  /** Config `DOOR_CACHE_TTL_SECONDS`, seconds. */
  doorCacheTtlSeconds: number;
  /** The `doors` array as JSON, built once per doors version by the catalog. */
  doorsJson: string;
}

function answered(c: CachedDecision, nowMs: number): AnsweredDecision {
  return { decision: c.decision, json: c.json, ttlSeconds: Math.max(0, Math.floor((c.expiresAtMs - nowMs) / 1000)) };
}

export class DoorAccessService {
  private readonly catalog: DoorCatalog;
  private readonly workspaces: WorkspaceSnapshots;
  private readonly cache: DecisionCache;
  private readonly members: MemberRows;
  private readonly ttlMs: number;

  constructor(private readonly deps: DoorAccessDeps) {
    this.ttlMs = deps.doorCacheTtlSeconds * 1000;
    this.catalog = new DoorCatalog(deps.db);
    this.workspaces = new WorkspaceSnapshots(deps.db, this.ttlMs);
    this.cache = new DecisionCache(deps.redis, deps.keySpace, deps.doorDecisionWindowSeconds);
    this.members = new MemberRows(deps.db);
  }

  /**
   * One door, one user → the answer of a 200 (`doorCheckResponseSchema`).
   * @throws {ReplayError} 409. @throws {QuotaExceededError} 429 (src/limits/quotas.ts).
   * @throws {NotFoundError} 404 `unknown_door` / `unknown_game`.
   * @throws {UnavailableError} 503 when Postgres cannot be read on a cache miss.
   */
  async check(caller: DoorCaller, input: { doorKey: string; externalId: string; externalServerId?: string | null }, nowMs: number): Promise<DoorCheckAnswer> {
    const found = await this.cache.lookup({ ...caller, mode: 'one', externalId: input.externalId, doorKey: input.doorKey, externalServerId: input.externalServerId, nowMs });
    const hit = found.hits.get(input.doorKey);
    if (hit && found.doorsVersion !== null) return { answered: answered(hit, nowMs), externalId: input.externalId, doorsVersion: found.doorsVersion, cached: true };

    const entry = await this.definitions(caller.gameId, found);
    const door = entry.doors.get(input.doorKey);
    if (!door) throw new NotFoundError(`unknown door key "${input.doorKey}"`, 'unknown_door');
    const ctx = await this.subject(entry, found, input.externalId, nowMs);
    const cached = this.evaluate(door, ctx, nowMs);
    this.remember(caller.gameId, found, entry, input, nowMs, [{ doorKey: door.key, decision: cached }], [cached.json], contextKey(ctx, usersNamedBy(entry.doors)));
    return { answered: answered(cached, nowMs), externalId: input.externalId, doorsVersion: entry.version, cached: false };
  }

  /**
   * Every door of the game for one user → the answer of a 200 (`doorBulkResponseSchema`), doors in key
   * order. @throws {ReplayError} 409. @throws {QuotaExceededError} 429. @throws {UnavailableError} 503 as
   * {@link check}.
   */
  async bulk(caller: DoorCaller, input: { externalId: string; externalServerId?: string | null }, nowMs: number): Promise<DoorBulkAnswer> {
    const found = await this.cache.lookup({ ...caller, mode: 'all', externalId: input.externalId, externalServerId: input.externalServerId, nowMs });
    return this.bulkFrom(caller, found, input, nowMs);
  }

  /**
   * The read side of a ban check that asks for its user's bulk decisions too (bans/check `includeDoors`,
   * src/adapters/http/routes/bans-check.ts): the request's one replay claim, the ban-check quota `banQuota`
   * (src/limits/quotas.ts `banCheckQuota`), then the bulk quota and the cached decisions, in one round trip.
   * Over the bulk quota the lookup comes back with `doorsLimited` (the ban check is still answered).
   * Pass the result to {@link bulkFrom} unless the user is banned.
   * @throws {ReplayError} 409. @throws {QuotaExceededError} 429 `ban_check` over the ban-check quota.
   */
  lookupForJoin(caller: DoorCaller, input: { externalId: string; externalServerId?: string | null }, banQuota: QuotaArgs, nowMs: number): Promise<Lookup> {
    return this.cache.lookup({ ...caller, mode: 'join', banQuota, externalId: input.externalId, externalServerId: input.externalServerId, nowMs });
  }

  /**
   * doors/bulk's answer from a lookup already made ({@link bulk}, {@link lookupForJoin}): every door in key
   * order, the cached decisions as they are, the others evaluated (one subject load) and logged.
   * @throws {UnavailableError} 503 when Postgres cannot be read for what the cache does not answer.
   */
  async bulkFrom(caller: DoorCaller, found: Lookup, input: { externalId: string; externalServerId?: string | null }, nowMs: number): Promise<DoorBulkAnswer> {
    const entry = await this.definitions(caller.gameId, found);
    const hits = found.hits;
    const ctx = entry.keys.every((k) => hits.has(k)) ? null : await this.subject(entry, found, input.externalId, nowMs);
    // ctx is loaded whenever a key has no hit
    const all = entry.keys.map((key) => hits.get(key) ?? this.evaluate(entry.doors.get(key)!, ctx!, nowMs));
    // Logged, not cached: the client keeps every decision of a bulk for its ttlSeconds (spec: "cache for
    // the TTL"), so a pointer per joining user would be read by almost nothing, and it was the largest
    // Redis family per live server (docs/decisions.md "A bulk check caches nothing").
    this.remember(caller.gameId, found, entry, input, nowMs, [], all.map((c) => c.json), undefined);
    return { externalId: input.externalId, doorsVersion: entry.version, decisions: all.map((c) => answered(c, nowMs)) };
  }

  /**
   * The game's door definitions and forced states (`doorManifestResponseSchema`); the route sends
   * `version` as the ETag. @throws {ReplayError} 409. @throws {QuotaExceededError} 429.
   */
  async manifest(caller: DoorCaller, nowMs: number, externalServerId: string | null = null): Promise<DoorManifestAnswer> {
    const found = await this.cache.lookup({ ...caller, mode: 'version', externalServerId, nowMs });
    const entry = await this.definitions(caller.gameId, found);
    return { version: entry.version, doorCacheTtlSeconds: this.deps.doorCacheTtlSeconds, doorsJson: entry.manifestJson };
  }

  /** `door`'s decision for `ctx` at `nowMs` (ms), in the form it is answered, cached and logged. */
  private evaluate(door: DoorDef, ctx: SubjectContext, nowMs: number): CachedDecision {
    const decided = evaluateDoor(door, ctx, nowMs, this.ttlMs);
    return { expiresAtMs: decided.expiresAtMs, decision: decided.decision, json: decisionJson(door, decided) };
  }

  /** The catalog entry at the looked-up version; initialises the Redis version when Redis had none. */
  private async definitions(gameId: string, found: Lookup): Promise<CatalogEntry> {
    const entry = await this.guard(() => this.catalog.get(gameId, found.doorsVersion));
    if (found.doorsVersion === null) {
      await raiseDoorsVersion(this.deps.redis, this.deps.keySpace, gameId, entry.version);
    }
    return entry;
  }

  /**
   * The user's subject context: the workspace half cached per subject version (`<workspace>.<user>`),
   * the member's rows read together with those of the other users asked for at the same moment.
   *
   * No rows are read for a user the snapshot does not list as a member whose own subject version is
   * still 0: every Member row created since the snapshot was loaded raised its user's version
   * in every game of the workspace (src/doors/subject-invalidation.ts `memberChanged`), so such a user
   * has none. A new member is missed only where that raise did not land (Redis lost or refused it, or
   * the game was created after it), and then for at most the snapshot's life: one TTL, the bound a
   * cached decision has anyway.
   */
  private subject(entry: CatalogEntry, found: Lookup, externalId: string, nowMs: number): Promise<SubjectContext> {
    const [workspaceVersion = '0', userVersion = '0'] = found.subjectVersion.split('.');
    return this.guard(async () => {
      const workspace = await this.workspaces.get(entry.workspaceId, workspaceVersion, nowMs);
      const known = userVersion !== '0' || !workspace.memberIds || workspace.memberIds.has(externalId);
      const row = known ? await this.members.load(entry.workspaceId, externalId, nowMs) : undefined;
      return buildSubjectContext(workspace, externalId, row);
    });
  }

  /**
   * Caches fresh decisions under the user's subject context `context` (src/doors/context-key.ts; none
   * when nothing is fresh) and logs the answered ones, without holding the response.
   */
  private remember(
    gameId: string,
    found: Lookup,
    entry: CatalogEntry,
    input: { externalId: string; externalServerId?: string | null },
    nowMs: number,
    fresh: { doorKey: string; decision: CachedDecision }[],
    logged: string[],
    context: string | undefined,
  ): void {
    const doorsVersion = found.doorsVersion ?? entry.version;
    this.cache
      .store({ gameId, doorsVersion, subjectVersion: found.subjectVersion, externalId: input.externalId, contextKey: context, externalServerId: input.externalServerId, nowMs, fresh, logged })
      .catch((err: unknown) => log.warn('door decision cache/access log write failed', { gameId, err: String(err) }));
  }

  /** Runs a Postgres read; anything but a domain error becomes 503 so clients apply failMode and retry. */
  private async guard<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      if (err instanceof DomainError) throw err;
      log.warn('door data unavailable', { err: String(err) });
      throw new UnavailableError('door data temporarily unavailable');
    }
  }
}
