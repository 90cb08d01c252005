/**
 * The Redis side of the door endpoints: replay claim, quota, versions and cached decisions read in one
 * round trip (`door-lookup.lua`), and fresh decisions written back together with their access-log entry
 * without the request waiting for it.
 *
 * Cache key: `{g}:doors:dec:<doorsVersion>:<workspaceVersion>.<userVersion>:<externalId>`, a hash
 * doorKey → `<expiresAtMs>\n<decision JSON>`. The doors version changes with any door, policy or forced
 * state (doors-version.ts); the subject versions change with the member's positions, records and
 * clock-in, and with the workspace's schedule and org tree (subject-invalidation.ts). A change therefore
 * moves readers to a new key; decisions under the old one are never read again and expire with the
 * hash. A decision computed from data loaded *after* the versions were read can only be newer than its
 * key, never older. Each entry also carries its own expiry (time windows, operations, records and
 * tenure thresholds end a decision early; see evaluate.ts), checked by the script.
 */
import type { AppRedis } from '../store/redis.js';
import { DOOR_DECISIONS_TTL_MARGIN_SECONDS, GameKeys, GlobalKeys, REPLAY_TTL_SECONDS, THROTTLE_COUNT_TTL_SECONDS } from '../store/keys.js';
import { ReplayError } from '../errors.js';
import { log } from '../log.js';
import { doorQuota } from '../limits/quotas.js';
import { QuotaExceededError } from '../limits/quota-error.js';
import type { Effect } from './door-types.js';
import { ThrottleMarks } from '../limits/throttle-marks.js';

/**
 * A decision as cached: its expiry (ms since the epoch), its outcome and its public JSON (see
 * `decisionJson` in door-access-service.ts).
 */
export interface CachedDecision {
  expiresAtMs: number;
  decision: Effect;
  json: string;
}

export interface Lookup {
  /** The game's doors version in Redis; null when Redis does not hold it (never set, or state lost). */
  doorsVersion: number | null;
  /** `<workspaceVersion>.<userVersion>` (empty in mode "version"). */
  subjectVersion: string;
  /** Fresh cached decisions by door key (mode "one": at most the asked door, already access-logged). */
  hits: Map<string, CachedDecision>;
}

export interface LookupInput {
  gameId: string;
  keyId: string;
  signature: string;
  mode: 'one' | 'all' | 'version';
  externalId?: string;
  doorKey?: string;
  externalServerId?: string | null;
  /** Server time, ms. */
  nowMs: number;
}

export interface StoreInput {
  gameId: string;
  /** The version the decisions are cached under: the one {@link DecisionCache.lookup} returned. */
  doorsVersion: number;
  subjectVersion: string;
  externalId: string;
  externalServerId?: string | null;
  nowMs: number;
  /** Fresh decisions to cache. */
  fresh: { doorKey: string; decision: CachedDecision }[];
  /** Decision JSONs to append to the access log (fresh ones and cache hits the script did not log). */
  logged: string[];
}

/**
 * Decodes a cached value `<expiresAtMs>\n<decision JSON>`. The outcome is read from the JSON this module's
 * writer produced (`decisionJson`: member `"decision"` is always present, and a quote inside a string is
 * always escaped), so a hit is never JSON-parsed.
 */
function parseCached(value: string): CachedDecision {
  const nl = value.indexOf('\n');
  const json = value.slice(nl + 1);
  return { expiresAtMs: Number(value.slice(0, nl)), decision: json.includes('"decision":"deny"') ? 'deny' : 'allow', json };
}

export class DecisionCache {
  private readonly lastMarked = new Map<string, number>();
  private readonly globalKeys: GlobalKeys;
  private readonly throttled: ThrottleMarks;

  /** `doorCacheTtlSeconds`: config `DOOR_CACHE_TTL_SECONDS`, the longest life of a cached decision. */
  constructor(private readonly redis: AppRedis, private readonly redisPrefix: string, private readonly doorCacheTtlSeconds: number) {
    this.globalKeys = new GlobalKeys(redisPrefix);
    this.throttled = new ThrottleMarks(redis, redisPrefix);
  }

  /**
   * Claims the request signature and reads the versions and cached decisions (one round trip).
   * @throws {ReplayError} 409 `replayed_signature` when the signature was used in the last
   *   {@link REPLAY_TTL_SECONDS} s.
   * @throws {QuotaExceededError} 429 with Retry-After when the request's subject is over its quota
   *   (src/limits/quotas.ts `doorQuota`); nothing is looked up or logged.
   */
  async lookup(input: LookupInput): Promise<Lookup> {
    const keys = new GameKeys(this.redisPrefix, input.gameId);
    const q = doorQuota(input.mode, { keyId: input.keyId, externalId: input.externalId, doorKey: input.doorKey, doorCacheTtlSeconds: this.doorCacheTtlSeconds });
    const out = (await this.redis.runScript('doorLookup', [keys.doorsVersion()], [
      keys.base,
      input.keyId,
      input.signature,
      REPLAY_TTL_SECONDS,
      input.mode,
      input.externalId ?? '',
      input.doorKey ?? '',
      input.nowMs,
      input.externalServerId ?? '',
      q.tag,
      q.subject,
      q.quota,
      q.perServer,
      q.windowSeconds,
      THROTTLE_COUNT_TTL_SECONDS,
      q.who,
    ])) as string[];
    if (out[0] === 'replay') throw new ReplayError('replayed_signature', 'this signature was already used; re-sign with a fresh timestamp');
    if (out[0] === 'limited') {
      this.throttled.mark(input.gameId, input.nowMs);
      throw new QuotaExceededError(input.gameId, q.kind, Number(out[1]));
    }
    const hits = new Map<string, CachedDecision>();
    if (input.mode === 'one' && out[3] !== undefined) hits.set(input.doorKey!, parseCached(out[3]));
    if (input.mode === 'all') for (let i = 3; i + 1 < out.length; i += 2) hits.set(out[i]!, parseCached(out[i + 1]!));
    if (hits.size && input.mode === 'one') this.markActive(input.gameId, input.nowMs);
    return { doorsVersion: out[1] ? Number(out[1]) : null, subjectVersion: out[2] ?? '', hits };
  }

  /**
   * Caches fresh decisions and appends the access-log entry. The commands are issued in one tick and go
   * back to back on the one connection (an explicit ioredis pipeline costs more CPU to build than these
   * commands take). Resolves when Redis has them; callers do not wait for it before answering
   * (a failure is logged: the decision was already answered, and the next request simply evaluates again).
   */
  async store(input: StoreInput): Promise<void> {
    const keys = new GameKeys(this.redisPrefix, input.gameId);
    const writes: Promise<unknown>[] = [];
    if (input.fresh.length) {
      const key = keys.doorDecisions(String(input.doorsVersion), input.subjectVersion, input.externalId);
      const flat: string[] = [];
      for (const f of input.fresh) flat.push(f.doorKey, `${f.decision.expiresAtMs}\n${f.decision.json}`);
      writes.push(this.redis.hset(key, ...flat), this.redis.expire(key, this.doorCacheTtlSeconds + DOOR_DECISIONS_TTL_MARGIN_SECONDS));
    }
    if (input.logged.length) {
      writes.push(this.redis.xadd(keys.accessStream(), '*', 'u', input.externalId, 's', input.externalServerId ?? '', 'at', String(input.nowMs), 'v', `[${input.logged.join(',')}]`));
      this.markActive(input.gameId, input.nowMs);
    }
    await Promise.all(writes);
  }

  /** Flushers look at games marked active (at most one mark per game per second per process). */
  private markActive(gameId: string, nowMs: number): void {
    if (nowMs - (this.lastMarked.get(gameId) ?? 0) < 1000) return;
    this.lastMarked.set(gameId, nowMs);
    this.redis.zadd(this.globalKeys.activeGames(), nowMs, gameId).catch((err: unknown) => {
      log.warn('could not mark game active', { gameId, err: String(err) });
    });
  }
}
