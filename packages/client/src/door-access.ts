/**
 * The reference client's side of doors (spec: "Intended client flow: fetch manifest on boot; bulk-check
 * each user on join; cache for the TTL; make no further requests during normal play except single checks
 * for uncached doors"; Door › failMode; Command types door_set_state and refresh_permissions).
 *
 * Wiring into a {@link GameClient} (no privileged path: only the public endpoints and commands):
 *
 * ```ts
 * const doors = new DoorAccess({ request: (m, p, b) => client.request(m, p, b), externalServerId });
 * const client = new GameClient({ ..., onCommand: doors.commandHandler(gameHandler),
 *   onHeartbeat: (s) => doors.onConfig(s.response.config) });
 * await doors.refreshManifest();             // on boot
 * void doors.onJoin(userId);                 // when a player joins (one bulk check)
 * // or, one request per joining player: the ban check answers the bulk check too
 * const ban = await client.checkBan(userId, { includeDoors: true });
 * if (!ban.banned) void doors.onJoin(userId, ban.doors);
 * const answer = await doors.check(key, userId);   // whenever a player uses a door
 * ```
 *
 * Rules it follows:
 * - The manifest is fetched on boot, after `refresh_permissions` for the server (which also forgets every
 *   cached decision, spec: refresh_permissions invalidates cached permissions), and whenever the heartbeat `config`
 *   carries a `doorsVersion` other than the manifest's. Cached decisions remember the doors version they
 *   were made under; one from another version than the manifest's is never used (a changed version means
 *   a door, policy or forced state changed).
 * - `refresh_permissions` aimed at a user (`target.externalId`; the service sends it when that member's
 *   positions, records or clock-in change) forgets that user's decisions and bulk-checks them again.
 * - A forced state (from the manifest or a `door_set_state` command) is applied locally, without a
 *   request: locked denies, unlocked allows, auto returns to decisions (and forgets that door's cache).
 * - Decisions are cached for their `ttlSeconds` (0 = not cached); a single check is made only for an
 *   uncached door. A player whose join bulk check got no answer (refused in a join storm, an outage), or
 *   whose ban check asked with `includeDoors` brought none, gets it asked at their first uncached door,
 *   instead of a single check for every door they use.
 * - Service unreachable (network error, timeout, 5xx, 429, or a 401/403 setup problem): the door's
 *   failMode decides, `closed` (deny) when the door is not in the manifest. An unknown door (404) is denied.
 * - Boot herd (issue #15 item 3): a game's servers restart together, and every joining player causes a
 *   bulk check. {@link DoorAccess.boot} fetches the first manifest at a random point of the boot window
 *   (`bootWindowMs`, normally `GameClient.bootWindowMs`: half the interval); a player who joins inside
 *   the window gets their bulk check at a random point of its remainder, sent at once instead when they
 *   use a door first (one request either way). At most `maxConcurrent` (default 2) door requests of a
 *   server are in flight; the rest wait their turn. A manifest or bulk request refused with `Retry-After`
 *   (429/503) is retried after it plus up to 1 s of jitter, within `maxRetryWaitMs` (default 10 s) in
 *   total; a single check is not retried (the player is at the door now: failMode answers).
 */
import { systemClock, WAKE_REASON, type Clock } from './clock.js';
import { retryAfterWithJitterMs } from './backoff.js';
import { BusyGate } from './busy-gate.js';
import { ConcurrencyLimiter } from './limiter.js';
import { TransportError, type TransportResponse } from './http-transport.js';
import { GAME_PATHS, type CommandEntry, type CommandHandler, type CommandOutcome, type ProblemInfo } from './client-types.js';

/** One door of the `GET doors/manifest` response (spec: Doors; the service's `doorManifestResponseSchema`). */
export interface ManifestDoor {
  key: string;
  name: string;
  kind: string;
  defaultEffect: 'allow' | 'deny';
  failMode: 'closed' | 'open';
  forcedState: 'auto' | 'locked' | 'unlocked';
}

/** The answer for one user at one door. */
export interface DoorAnswer {
  doorKey: string;
  externalId: string;
  allowed: boolean;
  /**
   * The service's reason (`policy_allow:<id>`, `default_deny`, `forced_locked`, ...), or, decided locally:
   * `forced_locked` / `forced_unlocked`, `fail_closed` / `fail_open` (service unreachable), `unknown_door`.
   */
  reason: string;
  /** Where the answer came from. */
  source: 'service' | 'cache' | 'forced' | 'fail_mode';
}

/** Options of {@link DoorAccess}. */
export interface DoorAccessOptions {
  /** Sends a signed request (normally `GameClient.request`). */
  request: (method: string, path: string, body?: unknown) => Promise<TransportResponse>;
  /** This server, named in the service's access log; its manifest fetches count against a quota of its own. */
  externalServerId?: string;
  clock?: Clock;
  /** Transient problems, for logs (the answer has already applied failMode). */
  onProblem?: (problem: ProblemInfo) => void;
  /** Boot window, ms: the first manifest fetch and the bulk checks of players joining inside it spread over it. Default 0. */
  bootWindowMs?: number;
  /** Door requests of this server in flight at once. Default 2. */
  maxConcurrent?: number;
  /** Longest total wait for Retry-After on a refused manifest or bulk request, ms. Default 10 000. */
  maxRetryWaitMs?: number;
  /** Random source in [0, 1) for the jitter. */
  random?: () => number;
  /**
   * The server's memory of a 503 with Retry-After (packages/client/src/busy-gate.ts), shared with its
   * ban checks (`GameClient.busyGate`); default: one of its own.
   */
  busyGate?: BusyGate;
}

interface CachedAnswer {
  allowed: boolean;
  reason: string;
  /** Local clock, ms. */
  expiresAt: number;
  /** The doors version the service decided under (`doorsVersion` of the response). */
  version: number | null;
}

interface WireDecision {
  doorKey?: unknown;
  decision?: unknown;
  reason?: unknown;
  ttlSeconds?: unknown;
}

/**
 * One game server's door cache and checks (see the module comment for the rules it follows): the doors
 * manifest, cached decisions per user and door, forced states, and the door's `failMode` when the
 * service cannot answer.
 */
export class DoorAccess {
  private doors = new Map<string, ManifestDoor>();
  private version: number | null = null;
  /** externalId → doorKey → cached answer. */
  private readonly decisions = new Map<string, Map<string, CachedAnswer>>();
  private refreshing: Promise<boolean> | null = null;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly limiter: ConcurrencyLimiter;
  private readonly gate: BusyGate;
  /** End of the boot window (local clock, ms); 0 before {@link boot}. */
  private bootEndsAt = 0;
  /** Bulk checks deferred inside the boot window, by user: `send()` sends at once, `done` settles with it. */
  private readonly deferred = new Map<string, { send: () => void; drop: () => void; done: Promise<void> }>();
  /** Players whose join bulk check got no answer: their first uncached door asks for the bulk again. */
  private readonly bulkOwed = new Set<string>();

  /** Makes no request; call {@link DoorAccess.boot} (or `refreshManifest`) when the server boots. */
  constructor(private readonly opts: DoorAccessOptions) {
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.limiter = new ConcurrencyLimiter(Math.max(1, opts.maxConcurrent ?? 2));
    this.gate = opts.busyGate ?? new BusyGate(this.clock);
  }

  /**
   * The server booted: fetches the first manifest at a random point of the boot window (at once when it
   * is 0) and starts the window in which bulk checks of joining players are spread. Resolves as
   * {@link refreshManifest}. Never rejects for HTTP or network outcomes.
   */
  async boot(): Promise<boolean> {
    const window = Math.max(0, this.opts.bootWindowMs ?? 0);
    this.bootEndsAt = this.clock.now() + window;
    if (window > 0) await this.clock.sleep(Math.floor(this.random() * window));
    return this.refreshManifest();
  }

  /** Version of the manifest held, or null before the first successful fetch. */
  get manifestVersion(): number | null {
    return this.version;
  }

  /** Keys of the doors the manifest lists. */
  doorKeys(): string[] {
    return [...this.doors.keys()];
  }

  /** The door `key` as the manifest (and later door_set_state commands) describe it. */
  door(key: string): ManifestDoor | undefined {
    const d = this.doors.get(key);
    return d ? { ...d } : undefined;
  }

  /**
   * Fetches the manifest (GET doors/manifest) and forgets cached decisions made under another doors
   * version. Concurrent calls share one request. Resolves true on success, false when the service could
   * not be reached (the previous manifest stays in force). Never rejects for HTTP or network outcomes.
   */
  refreshManifest(): Promise<boolean> {
    this.refreshing ??= this.fetchManifest().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  /** Reads a heartbeat `config`: a `doorsVersion` other than the manifest's triggers a refetch. */
  onConfig(config: Record<string, unknown>): void {
    const v = config.doorsVersion;
    if (typeof v === 'number' && v !== this.version) void this.refreshManifest();
  }

  /**
   * Bulk-checks `externalId` (POST doors/bulk) and caches every decision for its TTL; called once when a
   * player joins. Inside the boot window the request waits for a random point of the window's remainder
   * (or until the player uses a door, whichever comes first). Failures are reported through `onProblem`;
   * the bulk check is then asked for again when the player first uses an uncached door. Never rejects for
   * HTTP or network outcomes.
   *
   * `joined`: the `doors` of a ban check asked with `includeDoors` (`GameClient.checkBan`). When it holds
   * the decisions they are cached and no request is made. When it is null the service gave none: the ban
   * check was refused or unanswered (a join storm, an outage), or the user is over the bulk quota, or the
   * door data could not be read. A bulk check sent now would meet the same, one more request per joining
   * player in the very overload that refused the first; so none is sent, and the player's first uncached
   * door asks for the bulk instead (one request either way).
   */
  async onJoin(externalId: string, joined?: unknown): Promise<void> {
    if (joined === null) {
      this.bulkOwed.add(externalId);
      return;
    }
    if (joined !== undefined && this.take(externalId, joined)) return;
    const left = this.bootEndsAt - this.clock.now();
    if (left <= 0 || this.deferred.has(externalId)) return this.deferred.get(externalId)?.done ?? this.bulk(externalId).then(() => undefined);
    const wake = new AbortController();
    let dropped = false;
    const done = this.clock
      .sleep(Math.floor(this.random() * left), wake.signal)
      .then(async () => {
        if (!dropped) await this.bulk(externalId);
      })
      .finally(() => this.deferred.delete(externalId));
    const drop = () => {
      dropped = true;
      wake.abort(WAKE_REASON);
    };
    this.deferred.set(externalId, { send: () => wake.abort(WAKE_REASON), drop, done });
    return done;
  }

  /**
   * POST doors/bulk for `externalId`, caching every decision; with `retry` a refusal with Retry-After is
   * waited out (see {@link send}). Resolves to the answers by door key, or null when the service gave none.
   */
  private async bulk(externalId: string, retry = true): Promise<Map<string, { allowed: boolean; reason: string }> | null> {
    const res = await this.send('POST', GAME_PATHS.doorsBulk, { externalId, externalServerId: this.opts.externalServerId }, retry);
    const answers = this.take(externalId, res?.status === 200 ? res.json : undefined);
    if (!answers) this.bulkOwed.add(externalId);
    return answers;
  }

  /**
   * Caches the decisions of a bulk answer `body` (`{doorsVersion, decisions: [...]}`: doors/bulk's body,
   * or bans/check's `doors`) for `externalId`. Resolves to the answers by door key, or null when `body`
   * holds no decisions.
   */
  private take(externalId: string, body: unknown): Map<string, { allowed: boolean; reason: string }> | null {
    const bulk = body as { decisions?: unknown; doorsVersion?: unknown } | undefined;
    if (typeof bulk !== 'object' || bulk === null || !Array.isArray(bulk.decisions)) return null;
    this.bulkOwed.delete(externalId);
    const answers = new Map<string, { allowed: boolean; reason: string }>();
    for (const d of bulk.decisions as WireDecision[]) {
      const answer = this.remember(externalId, d, bulk.doorsVersion);
      if (answer) answers.set(d.doorKey as string, answer);
    }
    return answers;
  }

  /** Forgets a player's cached decisions (when they leave); a bulk check still deferred is sent no more. */
  onLeave(externalId: string): void {
    this.deferred.get(externalId)?.drop();
    this.decisions.delete(externalId);
    this.bulkOwed.delete(externalId);
  }

  /**
   * May `externalId` pass `doorKey` now? Forced state first, then the cache, then POST doors/check;
   * failMode when the service is unreachable. Never rejects for HTTP or network outcomes.
   */
  async check(doorKey: string, externalId: string): Promise<DoorAnswer> {
    const door = this.doors.get(doorKey);
    if (door && door.forcedState !== 'auto') {
      return { doorKey, externalId, allowed: door.forcedState === 'unlocked', reason: `forced_${door.forcedState}`, source: 'forced' };
    }
    const pending = this.deferred.get(externalId);
    if (pending) {
      // The player's bulk check is still waiting for its slot of the boot window: send it now and use it.
      pending.send();
      await pending.done;
    }
    const fromCache = (): DoorAnswer | undefined => {
      const cached = this.decisions.get(externalId)?.get(doorKey);
      if (!cached || cached.expiresAt <= this.clock.now() || (this.version !== null && cached.version !== this.version)) return undefined;
      return { doorKey, externalId, allowed: cached.allowed, reason: cached.reason, source: 'cache' };
    };
    const cached = fromCache();
    if (cached) return cached;
    if (this.bulkOwed.has(externalId)) {
      // The join's bulk check got no answer (a refusal during a join storm, an outage): ask for it now, once,
      // instead of a single check for every door the player then uses. Not retried: the player is at the door.
      const answers = await this.bulk(externalId, false);
      if (!answers) return this.failMode(doorKey, externalId);
      const answer = answers.get(doorKey);
      // a door the bulk answer leaves out is not a door of the game: denied, as a 404 of a single check
      return answer ? { doorKey, externalId, ...answer, source: 'service' } : { doorKey, externalId, allowed: false, reason: 'unknown_door', source: 'service' };
    }

    const res = await this.send('POST', GAME_PATHS.doorsCheck, { doorKey, externalId, externalServerId: this.opts.externalServerId });
    if (res?.status === 200) {
      const wire = res.json as WireDecision & { doorsVersion?: unknown };
      const answer = this.remember(externalId, wire, wire.doorsVersion);
      if (answer) return { doorKey, externalId, ...answer, source: 'service' };
    }
    if (res?.status === 404) return { doorKey, externalId, allowed: false, reason: 'unknown_door', source: 'service' };
    return this.failMode(doorKey, externalId);
  }

  /** The door's failMode answer (`closed` for a door not in the manifest). */
  private failMode(doorKey: string, externalId: string): DoorAnswer {
    const failMode = this.doors.get(doorKey)?.failMode ?? 'closed';
    return { doorKey, externalId, allowed: failMode === 'open', reason: `fail_${failMode}`, source: 'fail_mode' };
  }

  /**
   * Executes door commands: `door_set_state` `{doorKey, state}` applies the forced state locally (and
   * forgets that door's cached decisions); `refresh_permissions` aimed at a user forgets that user's
   * decisions and bulk-checks them again (ok even when the bulk check fails: nothing stale is kept), aimed
   * at the server it forgets every cached decision and refetches the manifest. Returns undefined
   * for any other type.
   */
  async handleCommand(command: CommandEntry): Promise<CommandOutcome | undefined> {
    if (command.type === 'refresh_permissions') {
      const user = command.target.externalId;
      if (user) {
        this.decisions.delete(user);
        // a bulk check still waiting for its slot of the boot window asks afresh anyway
        if (!this.deferred.has(user)) await this.bulk(user);
        return { ok: true };
      }
      // Spec: refresh_permissions invalidates cached permissions, whether or not the doors version changed
      // (a role granted outside the doors, e.g. in the game's own data, changes no manifest).
      this.decisions.clear();
      return (await this.refreshManifest()) ? { ok: true } : { ok: false, reason: 'manifest could not be fetched' };
    }
    if (command.type !== 'door_set_state') return undefined;
    const { doorKey, state } = command.payload as { doorKey?: unknown; state?: unknown };
    if (typeof doorKey !== 'string' || (state !== 'locked' && state !== 'unlocked' && state !== 'auto')) {
      return { ok: false, reason: 'door_set_state needs {doorKey, state: locked|unlocked|auto}' };
    }
    const door = this.doors.get(doorKey);
    if (door) door.forcedState = state;
    else this.doors.set(doorKey, { key: doorKey, name: doorKey, kind: 'door', defaultEffect: 'deny', failMode: 'closed', forcedState: state });
    for (const perUser of this.decisions.values()) perUser.delete(doorKey);
    return { ok: true };
  }

  /** A {@link CommandHandler} that runs door commands here and passes every other command to `next`. */
  commandHandler(next?: CommandHandler): CommandHandler {
    return async (command) => {
      const outcome = await this.handleCommand(command);
      if (outcome) return outcome;
      return next ? next(command) : { ok: false, reason: 'no command handler' };
    };
  }

  private async fetchManifest(): Promise<boolean> {
    // Naming the server counts its fetches against a quota of its own, not the key's (docs/api.md).
    const id = this.opts.externalServerId;
    const path = id ? `${GAME_PATHS.doorsManifest}?externalServerId=${encodeURIComponent(id)}` : GAME_PATHS.doorsManifest;
    const res = await this.send('GET', path, undefined, true);
    const body = res?.status === 200 ? (res.json as { version?: unknown; doors?: unknown }) : undefined;
    if (!body || typeof body.version !== 'number' || !Array.isArray(body.doors)) return false;
    this.doors = new Map((body.doors as ManifestDoor[]).map((d) => [d.key, { ...d }]));
    this.version = body.version;
    for (const perUser of this.decisions.values()) {
      for (const [key, cached] of perUser) if (cached.version !== body.version) perUser.delete(key);
    }
    return true;
  }

  /** Caches one wire decision made under doors version `version`; returns it as an answer, or undefined when malformed. */
  private remember(externalId: string, d: WireDecision, version: unknown): { allowed: boolean; reason: string } | undefined {
    if (typeof d.doorKey !== 'string' || (d.decision !== 'allow' && d.decision !== 'deny')) return undefined;
    const answer = { allowed: d.decision === 'allow', reason: typeof d.reason === 'string' ? d.reason : '' };
    const ttl = typeof d.ttlSeconds === 'number' ? d.ttlSeconds : 0;
    if (ttl > 0) {
      let perUser = this.decisions.get(externalId);
      if (!perUser) this.decisions.set(externalId, (perUser = new Map<string, CachedAnswer>()));
      perUser.set(d.doorKey, { ...answer, expiresAt: this.clock.now() + ttl * 1000, version: typeof version === 'number' ? version : null });
    }
    return answer;
  }

  /**
   * One request inside the per-server limit (each attempt holds a slot; a Retry-After wait does not, so a
   * player's single check never queues behind a bulk request that is waiting out a refusal); with
   * `retry`, a 429/503 with Retry-After is waited out (plus jitter) within `maxRetryWaitMs`. Undefined
   * when no usable answer came (reported as a problem).
   */
  private async send(method: string, path: string, body?: unknown, retry = false): Promise<TransportResponse | undefined> {
    let waited = 0;
    for (;;) {
      // The service said "busy" to one of this server's requests: wait for its Retry-After, or fail now.
      const held = await this.gate.waitWithin(retry ? (this.opts.maxRetryWaitMs ?? 10_000) - waited : 0, this.random);
      if (held === null) {
        this.problem({ kind: 'server_error', status: 503, message: `${method} ${path}: not sent, the service asked to retry in ${Math.ceil(this.gate.remainingMs() / 1000)} s` });
        return undefined;
      }
      if (held > 0) {
        waited += held;
        continue;
      }
      let res: TransportResponse;
      try {
        res = await this.limiter.run(() => this.opts.request(method, path, body));
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        this.problem({ kind: 'network', message: err.message });
        return undefined;
      }
      this.gate.observe(res.status, res.headers.get('retry-after'));
      if (retry && (res.status === 429 || res.status === 503)) {
        const delay = retryAfterWithJitterMs(res.headers.get('retry-after'), this.clock.now(), this.random);
        if (delay !== null && waited + delay <= (this.opts.maxRetryWaitMs ?? 10_000)) {
          waited += delay;
          await this.clock.sleep(delay);
          continue;
        }
      }
      if (res.status !== 200 && res.status !== 404) {
        const kind = res.status === 429 ? 'rate_limited' : res.status >= 500 ? 'server_error' : 'bad_response';
        this.problem({ kind, status: res.status, message: `${method} ${path}: ${res.status} ${res.errorCode ?? ''}`.trim() });
      }
      return res;
    }
  }

  private problem(p: ProblemInfo): void {
    try {
      this.opts.onProblem?.(p);
    } catch {
      // a throwing callback must not break door answers
    }
  }
}
