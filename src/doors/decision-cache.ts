/**
 * The Redis side of the door endpoints: replay claim, quota, versions and cached decisions read in one
 * round trip (`door-lookup.lua`), and fresh decisions written back together with their access-log entry
 * without the request waiting for it.
 *
 * Cache: `{g}:doors:dc:<doorsVersion>:<window>`, one sharded hash (listpack-sized shards, src/store/lua/
 * lib/sharded-hash.lua) per game, doors version and door-cache window (floor(now / DOOR_DECISION_WINDOW_SECONDS)) (src/store/keys.ts
 * `doorDecisions`; fields instead of one key per user, issue #15 item 5). Decisions are cached per subject
 * context, not per user (issue #32 item 4; src/doors/context-key.ts): field `#<n>` → the context's
 * decisions ({@link packDecision} codes, not their JSON), shared by every user of that context, where n is
 * the ordinal door-store.lua gives the context's name `<workspaceVersion>:<context key>` under the doors
 * version (`{g}:doors:ctx:<doorsVersion>`, src/store/keys.ts `doorContexts`); field externalId → the
 * user's pointer `{<workspaceVersion>.<userVersion>, "#<n>"}` under the subject version it was made under. A lookup follows the user's pointer (current window, else
 * the previous one; older decisions are evaluated afresh) to the context's decisions (current window, else the
 * previous one); a store moves the user's pointer into the current window and merges the context's
 * still-fresh decisions of both windows there (the previous window's copy stays until its hash expires:
 * contexts are few).
 * The doors version changes with any door, policy or forced state (doors-version.ts); the subject
 * versions change with the member's positions, records and clock-in, and with the workspace's schedule
 * and org tree (subject-invalidation.ts). A change therefore moves readers to a new hash or makes the
 * field's subject version stale; decisions under the old versions are never read again and expire with
 * the hash. A decision computed from data loaded *after* the versions were read can only be newer than its
 * key, never older. Each entry also carries its own expiry (time windows, operations, records and
 * tenure thresholds end a decision early; see evaluate.ts), checked by the script.
 */
import { holdWritesForThisTurn, type AppRedis } from '../store/redis.js';
import { DOOR_DECISIONS_TTL_MARGIN_SECONDS, GlobalKeys } from '../store/keys.js';
import { doorLookupCall } from '../store/lua/door-lookup.js';
import { doorStoreCall } from '../store/lua/door-store.js';
import { ReplayError } from '../errors.js';
import { log } from '../log.js';
import { doorQuota, type QuotaArgs } from '../limits/quotas.js';
import { QuotaExceededError } from '../limits/quota-error.js';
import type { Effect } from './door-types.js';
import { ThrottleMarks } from '../limits/throttle-marks.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

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
  /** Mode "join" only: the user is over the bulk quota, so no decision was read and none may be answered. */
  doorsLimited?: boolean;
}

export interface LookupInput {
  gameId: string;
  keyId: string;
  signature: string;
  /** The request's signed timestamp, s: how long its replay claim is kept (src/store/lua/lib/replay-claim.ts; absent: as long as any). */
  signedAtSeconds?: number;
  /** `join`: a ban check asking for the bulk decisions too (door-lookup.lua); needs `banQuota`. */
  mode: 'one' | 'all' | 'join' | 'version';
  /** Mode `join`: the ban check's quota (src/limits/quotas.ts `banCheckQuota`), counted first. */
  banQuota?: QuotaArgs;
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
  /** The user's subject context key (src/doors/context-key.ts); required when `fresh` is not empty. */
  contextKey?: string;
  externalServerId?: string | null;
  nowMs: number;
  /** Fresh decisions to cache. */
  fresh: { doorKey: string; decision: CachedDecision }[];
  /** Decision JSONs to append to the access log (fresh ones and cache hits the script did not log). */
  logged: string[];
}

const DECISION_LETTERS: Readonly<Record<string, string>> = { a: 'allow', d: 'deny' };
const FAIL_MODE_LETTERS: Readonly<Record<string, string>> = { c: 'closed', o: 'open' };
const FORCED_LETTERS: Readonly<Record<string, string>> = { a: 'auto', l: 'locked', u: 'unlocked' };

/** `decisionJson` of door-lookup.lua, which answers cache hits: the JSON a {@link packDecision} code stands for. */
function codeJson(doorKey: string, code: string): string {
  const decision = DECISION_LETTERS[code.charAt(0)];
  const forced = FORCED_LETTERS[code.charAt(2)];
  const policy = code.slice(3);
  let reason = `default_${decision}`;
  let policyJson = 'null';
  if (forced !== 'auto') reason = `forced_${forced}`;
  else if (policy !== '') [reason, policyJson] = [`policy_${decision}:${policy}`, `"${policy}"`];
  return `{"doorKey":"${doorKey}","decision":"${decision}","reason":"${reason}","policyId":${policyJson},"failMode":"${FAIL_MODE_LETTERS[code.charAt(1)]}","forcedState":"${forced}"}`;
}

/**
 * The form a decision is cached in (issue #15 item 5: ~3 B instead of ~110 B of JSON): the first letters
 * of its `decision`, `failMode` and `forcedState`, then its `policyId` (empty for none), e.g. `aca` for a
 * door's default allow. The reason is not stored: evaluate.ts derives it from those (`forced_<state>`,
 * `policy_<decision>:<id>`, `default_<decision>`). door-lookup.lua rebuilds the JSON from the code; the
 * code is used only when that rebuild equals `json` byte for byte, otherwise (a door key or policy id
 * that JSON escapes, a reason evaluate.ts would not give) the JSON itself is stored, which the script
 * recognises by its leading `{`.
 * @param doorKey the door's key, as in the JSON's `doorKey`.
 * @param json the decision's public JSON without TTL (`decisionJson` in door-access-service.ts).
 */
export function packDecision(doorKey: string, json: string): string {
  const d = JSON.parse(json) as Record<string, unknown>;
  const letter = (v: unknown) => (typeof v === 'string' ? v.charAt(0) : '?');
  const code = `${letter(d.decision)}${letter(d.failMode)}${letter(d.forcedState)}${typeof d.policyId === 'string' ? d.policyId : ''}`;
  return code.charAt(0) !== '{' && codeJson(doorKey, code) === json ? code : json;
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

  /**
   * `windowSeconds`: config `DOOR_DECISION_WINDOW_SECONDS`, the window a cached decision is shared in and
   * the door quotas count in. A decision may outlive its window (clients cache it for its own ttlSeconds,
   * up to `DOOR_CACHE_TTL_SECONDS`); the next window evaluates it afresh.
   */
  constructor(private readonly redis: AppRedis, private readonly keySpace: KeySpace, private readonly windowSeconds: number) {
    this.globalKeys = keySpace.global;
    this.throttled = new ThrottleMarks(redis, keySpace);
  }

  /**
   * Claims the request signature and reads the versions and cached decisions (one round trip).
   * @throws {ReplayError} 409 `replayed_signature` when the signature was used in the last
   *   600 s (src/store/lua/lib/replay-claim.ts).
   * @throws {QuotaExceededError} 429 with Retry-After when the request's subject is over its quota
   *   (src/limits/quotas.ts `doorQuota`); nothing is looked up or logged.
   */
  async lookup(input: LookupInput): Promise<Lookup> {
    const keys = this.keySpace.game(input.gameId);
    const q = doorQuota(input.mode, { keyId: input.keyId, externalId: input.externalId, doorKey: input.doorKey, externalServerId: input.externalServerId, windowSeconds: this.windowSeconds });
    const call = doorLookupCall(keys, {
      mode: input.mode,
      externalId: input.externalId ?? '',
      doorKey: input.doorKey ?? '',
      externalServerId: input.externalServerId ?? '',
      nowMs: input.nowMs,
      window: this.window(input.nowMs),
      keyId: input.keyId,
      signature: input.signature,
      signedAtSeconds: input.signedAtSeconds,
      quota: q,
      banQuota: input.banQuota,
    });
    const out = (await this.redis.runScript('doorLookup', call.keys, call.args)) as string[];
    if (out[0] === 'replay') throw new ReplayError('replayed_signature', 'this signature was already used; re-sign with a fresh timestamp');
    if (out[0] === 'limited') {
      this.throttled.mark(input.gameId, input.nowMs);
      // in mode join only the ban check's quota refuses the request (the bulk quota only withholds doors)
      throw new QuotaExceededError(input.gameId, (input.banQuota ?? q).kind, Number(out[1]));
    }
    const hits = new Map<string, CachedDecision>();
    if (input.mode === 'one' && out[3] !== undefined) hits.set(input.doorKey!, parseCached(out[3]));
    // mode join: out[3] is "1", or "0" when over the bulk quota; its pairs start one later
    const pairsFrom = input.mode === 'all' ? 3 : input.mode === 'join' ? 4 : out.length;
    for (let i = pairsFrom; i + 1 < out.length; i += 2) hits.set(out[i]!, parseCached(out[i + 1]!));
    if (hits.size && input.mode === 'one') this.markActive(input.gameId, input.nowMs);
    const found: Lookup = { doorsVersion: out[1] ? Number(out[1]) : null, subjectVersion: out[2] ?? '', hits };
    if (input.mode === 'join' && out[3] === '0') {
      this.throttled.mark(input.gameId, input.nowMs);
      found.doorsLimited = true;
    }
    return found;
  }

  /**
   * Caches fresh decisions and appends the access-log entry, in one script (`door-store.lua`). Resolves
   * when Redis has them; callers do not wait for it before answering (a failure is logged: the decision
   * was already answered, and the next request simply evaluates again). With nothing to cache (a bulk
   * check, a join's) the entry is one plain `XADD` of the fields door-store.lua would append: a script
   * took twice the Redis CPU for it (docs/benchmarks.md "No RDB snapshots: the join storm's forks; a join's
   * access-log entry without a script").
   */
  async store(input: StoreInput): Promise<void> {
    if (!input.fresh.length && !input.logged.length) return;
    const keys = this.keySpace.game(input.gameId);
    const logJson = input.logged.length ? `[${input.logged.join(',')}]` : '';
    if (!input.fresh.length) {
      // the fields door-store.lua appends (and door-lookup.lua for a cache hit): the access-log flusher reads these
      holdWritesForThisTurn(this.redis);
      await this.redis.xadd(keys.accessStream(), '*', 'u', input.externalId, 's', input.externalServerId ?? '', 'at', String(input.nowMs), 'v', logJson);
      this.markActive(input.gameId, input.nowMs);
      return;
    }
    const window = this.window(input.nowMs);
    const windowMs = this.windowSeconds * 1000;
    const entries: string[] = [];
    for (const f of input.fresh) entries.push(f.doorKey, String(f.decision.expiresAtMs), packDecision(f.doorKey, f.decision.json));
    if (entries.length && !input.contextKey) throw new Error('DecisionCache.store: fresh decisions need their contextKey');
    const call = doorStoreCall(keys, {
      doorsVersion: String(input.doorsVersion),
      window,
      externalId: input.externalId,
      subjectVersion: input.subjectVersion,
      // the context's name: its decisions hold for one workspace version (schedule, org tree)
      contextName: `${input.subjectVersion.split('.')[0] ?? ''}:${input.contextKey ?? ''}`,
      nowMs: input.nowMs,
      entries,
      // the window's hash outlives the next window, which still reads it (a decision that would outlive
      // the hash is evaluated afresh then: a miss is always safe)
      expireInMs: (window + 2) * windowMs + DOOR_DECISIONS_TTL_MARGIN_SECONDS * 1000 - input.nowMs,
      externalServerId: input.externalServerId ?? '',
      logJson,
    });
    await this.redis.runScript('doorStore', call.keys, call.args);
    if (input.logged.length) this.markActive(input.gameId, input.nowMs);
  }

  /** The door-cache window of `nowMs` (ms): floor(now / window ms). */
  private window(nowMs: number): number {
    return Math.floor(nowMs / (this.windowSeconds * 1000));
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
