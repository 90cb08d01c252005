/**
 * Reference client of the game surface (spec: the whole document; it is "only a client of" the HTTP API,
 * with no privileged path). One instance per running game server. It owns the heartbeat loop and follows
 * every client rule of the spec:
 *
 * - Heartbeat every `config.heartbeatIntervalSeconds` of the last 200 (not a local setting). The first
 *   one goes out at a random point of the boot window after `start()` (`bootJitterSeconds`, default half
 *   the initial interval: 0–10 s at the default 20 s), because a game's servers restart together after
 *   every update and would otherwise all register in the same second. The second one goes out at a
 *   random point of the first interval the service returned (`spreadPhase`, default true): servers
 *   that registered within the same half-minute would otherwise heartbeat in the same half-minute for
 *   the rest of their lives, and the service would meet their events as one wave an interval (each
 *   heartbeat carrying an interval's events to store). The body carries the full roster, queued events,
 *   acks and failure reports.
 * - Events and acks stay queued until a heartbeat carrying them got its 200 (dropped on success, not on
 *   send); eventIds are made when the event happens and never change.
 * - 409: re-signed once after the next whole second (in {@link SignedTransport}). 413: events split in
 *   halves, first half sent at once, the rest on later heartbeats. 429, and 503 with `Retry-After` (the
 *   service shedding load): `Retry-After` seconds plus up to 1 s of jitter, else backoff. Other 5xx and
 *   network errors: exponential backoff with jitter. 401/403 only: setup error, the loop stops (no
 *   unchanged retry) until `start()` is called again. Nothing else stops heartbeats (issue #28): a 400
 *   whose `error.pointer` names an event drops that event (reported as `event_rejected`) and sends the
 *   rest at once; a 400 naming no event splits the batch as for 413 until the bad event is alone and
 *   dropped; a 400 without events and a 404 back off like a 5xx; a throw inside a cycle is reported
 *   (`handler_error`) and the loop carries on after a backoff.
 * - Ban checks (`checkBan`): at most `maxConcurrentChecks` (default 4) in flight per server, the rest
 *   wait their turn (a burst of joining players does not become a burst of requests; the spec has no
 *   bulk ban lookup); concurrent checks of one user share one request; a 429/503 with `Retry-After` is
 *   waited out (jittered) within `banCheckMaxWaitSeconds` (default 10) before the fail mode decides. A
 *   check waiting out a refusal keeps its slot: while the service sheds load, a server has at most 4
 *   checks outstanding, not one per joining player.
 * - Commands: deduped by id, executed by the game's handler, acked only after the handler resolved,
 *   failures reported in `failures`; a command already past `expiresAt` (by server time) is not run.
 * - `nudge()`: one early heartbeat for any number of nudges before the next send (spec: Urgent nudge).
 */
import { randomUUID } from 'node:crypto';
import { backoffDelayMs, DEFAULT_BACKOFF, retryAfterWithJitterMs, type BackoffOptions } from './backoff.js';
import { systemClock, WAKE_REASON, type Clock } from './clock.js';
import { StatsRecorder, type ClientStats } from './client-stats.js';
import { CommandTracker, type CommandResults } from './command-tracker.js';
import { entryOf, EventQueue, type QueuedEvent } from './event-queue.js';
import { SignedTransport, TransportError, type AttemptInfo, type FetchLike, type TransportResponse } from './http-transport.js';
import { Roster } from './roster.js';
import { BusyGate } from './busy-gate.js';
import { checkBan, type BanCheckResult, type BanFailMode } from './ban-check.js';
import { ConcurrencyLimiter } from './limiter.js';
import {
  GAME_PATHS,
  MAX_ACKS,
  MAX_EVENTS,
  type CommandEntry,
  type CommandHandler,
  type CommandOutcome,
  type EventEntry,
  type HeartbeatConfig,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type HeartbeatSuccess,
  type PlayerEntry,
  type ProblemInfo,
  type SetupErrorInfo,
} from './client-types.js';

/** `sdkVersion` reported when the game does not set one (spec: Versioning, rule 4). */
export const DEFAULT_SDK_VERSION = 'gis-ts-reference/0.1.0';
/** Interval used until the first 200 tells the real one, seconds (spec default). */
export const DEFAULT_INITIAL_INTERVAL_SECONDS = 20;
/** Default `shutdownJitterSeconds`: the window `stop()` spreads its final heartbeat over, seconds. */
export const DEFAULT_SHUTDOWN_JITTER_SECONDS = 5;
/** Command ids are remembered at least this long after their ack went out, ms. */
export const MIN_ID_RETENTION_MS = 10 * 60_000;

/** Options of {@link GameClient}; only `baseUrl`, `apiKey`, `externalServerId` and `maxPlayers` are required. */
export interface GameClientOptions {
  /** Service origin, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Server key `svc_live_<prefix>.<secret>`; servers of one game share it. */
  apiKey: string;
  /** Identifier of this running instance (platform job id, server id, or a UUID made at boot). */
  externalServerId: string;
  /** Place, map or world of the instance. */
  externalScopeId?: string;
  /** Free-form region label. */
  region?: string;
  /** Configured capacity. */
  maxPlayers: number;
  /** Integration version reported on every heartbeat. Default {@link DEFAULT_SDK_VERSION}. */
  sdkVersion?: string;
  /** Executes commands; without one every command is reported failed ("no command handler"). */
  onCommand?: CommandHandler;
  /** A 401/403: the loop has stopped; fix the key or its scopes and call `start()` again. */
  onSetupError?: (error: SetupErrorInfo) => void;
  /** A transient problem the client is already handling (for logs). */
  onProblem?: (problem: ProblemInfo) => void;
  /** After every 200 heartbeat. */
  onHeartbeat?: (success: HeartbeatSuccess) => void;
  /**
   * A heartbeat got no HTTP response (timeout, connection lost): the service may or may not have applied
   * it ("outcome unknown"). Its events stay queued and are resent; `request` is what was sent.
   */
  onHeartbeatUnknown?: (request: HeartbeatRequest) => void;
  /** Heartbeat latency samples kept for {@link GameClient.stats} (0 keeps none). Default 10 000. */
  latencyWindow?: number;
  /** Interval until the first 200, seconds. Default 20. */
  initialIntervalSeconds?: number;
  /**
   * Window, seconds, over which the first heartbeat after `start()` is spread (uniformly at random), and
   * which {@link GameClient.bootWindowMs} hands to the door cache for the first manifest fetch and the
   * first bulk checks. Default: half of `initialIntervalSeconds` (10 s at the default 20). 0 sends the
   * first heartbeat at once.
   */
  bootJitterSeconds?: number;
  /**
   * Send the second heartbeat (the first after the registration's 200) at a uniformly random point of
   * the interval that 200 returned, instead of a whole interval later, so that each server keeps a phase
   * of its own. Default true; false keeps every gap at one interval.
   */
  spreadPhase?: boolean;
  /**
   * Window, seconds, over which `stop()` spreads its first final heartbeat (uniformly at random), at most
   * a third of `stop()`'s timeout: a game update stops a whole fleet in the same second, and its final
   * heartbeats would otherwise all arrive at once. Default {@link DEFAULT_SHUTDOWN_JITTER_SECONDS}; 0
   * sends it at once.
   */
  shutdownJitterSeconds?: number;
  /** Ban checks in flight at once for this server; more wait their turn. Default 4. */
  maxConcurrentChecks?: number;
  /** Longest total wait for `Retry-After` on a refused ban check before the fail mode decides, seconds. Default 10. */
  banCheckMaxWaitSeconds?: number;
  /** Most events per heartbeat, before any 413 shrinking. Default 1000, at most 2000 (service limit). */
  maxEventsPerHeartbeat?: number;
  /** Most events queued locally; the oldest are dropped beyond it. Default 100 000. */
  maxQueuedEvents?: number;
  /** Minimum time handled command ids are remembered after their result went out, ms; the client uses
   *  max(this, 3 heartbeat intervals). Default 10 minutes. */
  idRetentionMs?: number;
  /** Backoff for 5xx, network errors and 429 without Retry-After. Default 1 s doubling up to 60 s. */
  backoff?: BackoffOptions;
  /** Least time between a heartbeat and a nudged one, ms. Default 250. */
  minNudgeGapMs?: number;
  /**
   * Send the ack (or failure) of a finished command with an early heartbeat instead of waiting for the
   * next interval, through the same coalescing as {@link GameClient.nudge}. Default true: moderators see
   * `acked` within a second instead of up to one interval later.
   */
  ackEarly?: boolean;
  /** Per-attempt HTTP timeout, ms. Default 10 000. */
  requestTimeoutMs?: number;
  /** Gzip request bodies of at least this many bytes (signed as sent: compressed). Default: never. */
  gzipMinBytes?: number;
  /** When the instance booted, epoch ms (for `uptimeSeconds`). Default: construction time. */
  bootTimeMs?: number;
  clock?: Clock;
  /** Random source in [0, 1) for jitter. */
  random?: () => number;
  /** fetch implementation (default the global one); the simulator passes a cheaper keep-alive one. */
  fetch?: FetchLike;
  /** Send `?nonce=` with every request, signed with it (default true; the service's docs/api.md "Replays on a shared key"). */
  requestNonce?: boolean;
  /** After every HTTP attempt of any endpoint (heartbeat, checks, manifest), e.g. for latency figures. */
  onAttempt?: (attempt: AttemptInfo) => void;
  /**
   * What {@link GameClient.checkBan} answers when the service cannot be asked (network error, timeout,
   * 5xx, 429, setup error): `open` admits the user (default, the spec's recommendation), `closed` refuses.
   */
  banCheckFailMode?: BanFailMode;
}

/** Input of {@link GameClient.track}. */
export interface TrackInput {
  /** join, leave, team_change, death, spawn, or a workspace-defined custom type. */
  type: string;
  /** The user the event is about. */
  externalId?: string | null;
  /** Custom structure (any JSON value). */
  payload?: unknown;
  /** When it happened; default now. */
  occurredAt?: Date | string;
  /** A deterministic id (spec: Events rule 3); default a fresh UUID. */
  eventId?: string;
}

/** What one heartbeat attempt cycle decided about the next one. */
type Cycle = { kind: 'ok'; delayMs: number } | { kind: 'retry'; delayMs: number } | { kind: 'halt' };

/** The only statuses that stop the loop: the key or its scopes are wrong, and no resend can fix that. */
const SETUP_HINTS: Record<number, string> = {
  401: 'check the key (missing, malformed, revoked) and the signature; the request is not retried',
  403: 'check the key scopes first, then the platform outbound HTTP setting',
};

/** The index of the event a 400's `error.pointer` names (`/events/<i>` or below), else undefined. */
function eventIndexOfPointer(pointer: string | undefined): number | undefined {
  const m = pointer === undefined ? null : /^\/events\/(\d+)(?:\/|$)/.exec(pointer);
  return m ? Number(m[1]) : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One game server's connection to the service. See the module comment for the rules it follows. */
export class GameClient {
  /** Identifier of this running instance, sent as `externalServerId` on every heartbeat. */
  readonly externalServerId: string;
  /** Who is on the server now; sent whole on every heartbeat. */
  readonly roster = new Roster();

  private readonly opts: GameClientOptions;
  private readonly transport: SignedTransport;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly events: EventQueue;
  private readonly commands = new CommandTracker();
  private readonly recorder: StatsRecorder;
  /**
   * Events carried by a heartbeat whose outcome is unknown (no response); see `eventsOutcomeUnknown`.
   * Those a 200 confirmed leave it at once; those dropped from a full queue by {@link pruneMaybeSent}.
   */
  private maybeSent = new Set<QueuedEvent>();
  private readonly handlers = new Set<Promise<void>>();
  private readonly bootMs: number;
  private readonly maxEventsPerHeartbeat: number;
  private readonly bootWindow: number;
  private readonly checks: ConcurrencyLimiter;
  /**
   * This server's memory of a 503 with Retry-After to a ban or door request (packages/client/src/busy-gate.ts):
   * its ban checks use it; give it to the server's `DoorAccess` (`busyGate` option) so both hold back together.
   */
  readonly busyGate: BusyGate;
  /** Ban checks in flight by fail mode and user: concurrent checks of one user share one request. */
  private readonly banChecks = new Map<string, Promise<BanCheckResult>>();

  private interval: number;
  private lastConfig: HeartbeatConfig | undefined;
  private batchLimit: number;
  private failureStreak = 0;
  private running = false;
  private stopping = false;
  private halted: SetupErrorInfo | undefined;
  private stopCtl: AbortController | null = null;
  private wakeCtl: AbortController | null = null;
  private nudgePending = false;
  private lastSendAt = Number.NEGATIVE_INFINITY;
  private loopDone: Promise<void> | null = null;

  /** @throws {KeyFormatError} when `apiKey` is not `svc_live_<prefix>.<secret>`. */
  constructor(opts: GameClientOptions) {
    this.opts = opts;
    this.externalServerId = opts.externalServerId;
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.busyGate = new BusyGate(this.clock);
    this.bootMs = opts.bootTimeMs ?? this.clock.now();
    this.interval = opts.initialIntervalSeconds ?? DEFAULT_INITIAL_INTERVAL_SECONDS;
    this.bootWindow = Math.max(0, (opts.bootJitterSeconds ?? this.interval / 2) * 1000);
    this.checks = new ConcurrencyLimiter(Math.max(1, opts.maxConcurrentChecks ?? 4));
    this.maxEventsPerHeartbeat = Math.max(1, Math.min(MAX_EVENTS, opts.maxEventsPerHeartbeat ?? 1000));
    this.batchLimit = this.maxEventsPerHeartbeat;
    this.events = new EventQueue(opts.maxQueuedEvents);
    this.recorder = new StatsRecorder(opts.latencyWindow);
    this.transport = new SignedTransport({
      baseUrl: opts.baseUrl,
      apiKey: opts.apiKey,
      clock: this.clock,
      requestTimeoutMs: opts.requestTimeoutMs,
      gzipMinBytes: opts.gzipMinBytes,
      userAgent: opts.sdkVersion ?? DEFAULT_SDK_VERSION,
      fetch: opts.fetch,
      requestNonce: opts.requestNonce,
      onAttempt: (a) => {
        if (a.path === GAME_PATHS.heartbeat) this.recorder.attempt(a.outcome, a.latencyMs);
        opts.onAttempt?.(a);
      },
    });
  }

  /**
   * The boot window, ms (`bootJitterSeconds`): the first heartbeat goes out at a random point of it; give
   * it to the door cache (`DoorAccess` option `bootWindowMs`) so the first manifest fetch and the first
   * bulk checks spread over it too.
   */
  get bootWindowMs(): number {
    return this.bootWindow;
  }

  /** The heartbeat interval in force, seconds: the last one a 200 returned, else the initial one. */
  get intervalSeconds(): number {
    return this.interval;
  }

  /**
   * `config` of the last 200 heartbeat as the service sent it (the interval plus any later additive
   * fields, e.g. door cache settings), or undefined before the first 200.
   */
  get config(): Readonly<HeartbeatConfig> | undefined {
    return this.lastConfig;
  }

  /** True while the heartbeat loop runs. */
  get isRunning(): boolean {
    return this.running;
  }

  /** The setup error that stopped the loop, if any (cleared by `start()`). */
  get setupError(): SetupErrorInfo | undefined {
    return this.halted;
  }

  /** Last measured clock skew, ms: server time minus local time (spec: Authentication rule 6). */
  get clockSkewMs(): number {
    return this.transport.clockSkewMs;
  }

  /** A copy of the counters (see {@link ClientStats}). */
  stats(): ClientStats {
    this.pruneMaybeSent();
    return this.recorder.snapshot(this.events.size, this.maybeSent.size);
  }

  /** Keeps in {@link maybeSent} only the events still queued. */
  private pruneMaybeSent(): void {
    if (!this.maybeSent.size) return;
    const queued = new Set<QueuedEvent>();
    for (const e of this.events.peek(this.events.size)) if (this.maybeSent.has(e)) queued.add(e);
    this.maybeSent = queued;
  }

  /**
   * Starts the heartbeat loop. The first heartbeat (the server registers on it) goes out at a random
   * point of the boot window (`bootJitterSeconds`; at once when 0, or when this is a restart after a setup
   * error or `stop()`); a nudge cuts the wait short. No-op while running. After a setup error, clears it
   * and starts again.
   */
  start(): void {
    if (this.running) return;
    const firstDelayMs = this.loopDone === null && this.recorder.counters.heartbeatsSent === 0 ? Math.floor(this.random() * this.bootWindow) : 0;
    this.running = true;
    this.stopping = false;
    this.halted = undefined;
    const ctl = new AbortController();
    this.stopCtl = ctl;
    const previous = this.loopDone ?? Promise.resolve();
    this.loopDone = previous.then(() => this.loop(ctl.signal, firstDelayMs)).catch((err: unknown) => {
      this.running = false;
      this.problem({ kind: 'handler_error', message: `heartbeat loop crashed: ${err instanceof Error ? err.message : String(err)}` });
    });
  }

  /**
   * Stops the loop. With `flush` (default true) it then waits for running command handlers and sends
   * final heartbeats until every queued event, ack and failure got a 200, or `timeoutMs` (default 10 000
   * ms) passed, or a setup error occurred; the last roster is reported by that final heartbeat, which
   * goes out at a random point of `shutdownJitterSeconds` (at most a third of `timeoutMs`). Events
   * still queued then are reported as one `events_unsent` problem (their count in the message; `stats()`
   * too). Commands arriving in the final responses are not executed. Resolves when done; never rejects.
   */
  async stop(opts: { flush?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const flush = opts.flush ?? true;
    const deadline = this.clock.now() + (opts.timeoutMs ?? 10_000);
    this.stopping = true;
    this.running = false;
    this.stopCtl?.abort(WAKE_REASON);
    this.wakeCtl?.abort(WAKE_REASON);
    await this.loopDone;
    this.loopDone = null;
    if (!flush || this.halted) return;

    if (this.handlers.size) {
      const cancel = new AbortController();
      await Promise.race([Promise.allSettled([...this.handlers]), this.clock.sleep(Math.max(0, deadline - this.clock.now()), cancel.signal)]);
      cancel.abort(WAKE_REASON);
    }
    // A fleet stopped together (a game update) does not send its final heartbeats in the same instant.
    const spreadMs = Math.min((this.opts.shutdownJitterSeconds ?? DEFAULT_SHUTDOWN_JITTER_SECONDS) * 1000, (deadline - this.clock.now()) / 3);
    if (spreadMs > 0) await this.clock.sleep(Math.floor(this.random() * spreadMs));
    for (;;) {
      const out = await this.cycle();
      if (out.kind === 'halt') break;
      if (out.kind === 'ok' && this.events.size === 0 && this.commands.pendingResults === 0) return;
      const left = deadline - this.clock.now();
      if (left <= 0) break;
      if (out.kind === 'retry') await this.clock.sleep(Math.min(out.delayMs, left));
    }
    // what the game must know before the process exits: these die with it unless it keeps them itself
    if (this.events.size > 0) this.problem({ kind: 'events_unsent', message: `stop(): ${this.events.size} event(s) not delivered before the deadline` });
  }

  /**
   * Asks for an early heartbeat (spec: Events › Urgent nudge). Any number of nudges before the next send
   * cause one early heartbeat, no sooner than `minNudgeGapMs` after the previous one. A nudge during a
   * backoff does not shorten it.
   */
  nudge(): void {
    this.nudgePending = true;
    this.wakeCtl?.abort(WAKE_REASON);
  }

  /**
   * Records a player event now: the eventId (UUID unless given) and `occurredAt` (RFC 3339, now unless
   * given) are fixed here, when the event happens, and stay the same on every retry (spec: Events rules
   * 1–2). The entry is serialised here too, once: every heartbeat that carries it (a resend after a
   * timeout or a refusal included) sends these bytes, and later changes to the entry or its payload are
   * not sent. The event goes out with the next heartbeat and stays queued until one got a 200.
   * @returns the queued entry. @throws {TypeError} when `type` is empty or the payload is not
   *   JSON-serialisable (a BigInt, a cycle); nothing is queued then.
   */
  track(input: TrackInput): EventEntry {
    if (typeof input.type !== 'string' || !input.type) throw new TypeError('event type must be a non-empty string');
    const occurredAt =
      input.occurredAt === undefined
        ? new Date(this.clock.now()).toISOString()
        : typeof input.occurredAt === 'string'
          ? input.occurredAt
          : input.occurredAt.toISOString();
    const entry: EventEntry = { eventId: input.eventId ?? randomUUID(), type: input.type, occurredAt };
    if (input.externalId !== undefined && input.externalId !== null) entry.externalId = input.externalId;
    if (input.payload !== undefined) entry.payload = input.payload;
    let json: string;
    try {
      json = JSON.stringify(entry);
    } catch (err) {
      throw new TypeError(`event payload is not JSON-serialisable: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    this.recorder.counters.eventsTracked++;
    const dropped = this.events.push(json);
    if (dropped) {
      this.recorder.counters.eventsDropped += dropped;
      this.problem({ kind: 'event_queue_overflow', message: `local event queue full: dropped ${dropped} oldest event(s)` });
    }
    return entry;
  }

  /** Replaces the roster (spec: `players` is the full roster). Same as `roster.set(players)`. */
  setRoster(players: readonly PlayerEntry[]): void {
    this.roster.set(players);
  }

  /**
   * Generic signed request, the extension point for doors/check, doors/bulk, doors/manifest (GET, empty
   * body) and bans/check (paths in {@link GAME_PATHS}). Signs the exact bytes, retries a 409 once after the
   * next whole second with a fresh timestamp (every attempt carries its own signed nonce, so servers
   * sharing the key never collide; the service's docs/api.md "Replays on a shared key"), and returns every
   * other status to the caller.
   * @throws {TransportError} when no HTTP response arrived.
   */
  request(method: string, path: string, body?: unknown): Promise<TransportResponse> {
    return this.transport.request(method, path, body);
  }

  /**
   * Connect-time ban check of `externalId` joining this server (spec: POST bans/check; ./ban-check.ts).
   * Refuse the user when `banned` is true. Without an answer the fail mode decides: `opts.failMode`,
   * else the `banCheckFailMode` option, else `open`; the problem goes to `onProblem`. With
   * `opts.includeDoors` (the key needs scope `doors` too) the same request answers the user's bulk door
   * check: pass the result's `doors` to `DoorAccess.onJoin`, which then sends no doors/bulk of its own.
   * Never rejects for HTTP or network outcomes.
   */
  checkBan(externalId: string, opts: { failMode?: BanFailMode; includeDoors?: boolean } = {}): Promise<BanCheckResult> {
    const failMode = opts.failMode ?? this.opts.banCheckFailMode ?? 'open';
    const includeDoors = opts.includeDoors === true;
    const key = `${failMode}\n${includeDoors}\n${externalId}`;
    const shared = this.banChecks.get(key);
    if (shared) return shared;
    const retry = { maxWaitMs: (this.opts.banCheckMaxWaitSeconds ?? 10) * 1000, clock: this.clock, random: this.random, gate: this.busyGate };
    const run = this.checks
      .run(() => checkBan((m, p, b) => this.transport.request(m, p, b), { externalId, externalServerId: this.externalServerId, includeDoors }, failMode, (p) => this.problem(p), retry))
      .finally(() => this.banChecks.delete(key));
    this.banChecks.set(key, run);
    return run;
  }

  // ------------------------------------------------------------------------------------------------

  private async loop(stop: AbortSignal, firstDelayMs: number): Promise<void> {
    let next: Cycle = { kind: 'ok', delayMs: firstDelayMs };
    while (!stop.aborted) {
      if (next.delayMs > 0) await this.wait(next.delayMs, next.kind === 'ok', stop);
      if (stop.aborted) return;
      try {
        next = await this.cycle();
      } catch (err) {
        // Nothing may stop heartbeats but a setup error: a bug or a throwing hook costs one backoff.
        next = this.retryLater('handler_error', `heartbeat cycle threw: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (next.kind === 'halt') {
        this.running = false;
        return;
      }
    }
  }

  /** Waits `ms`; a nudge cuts a regular wait short (respecting the minimum gap); `stop` ends any wait. */
  private async wait(ms: number, nudgeable: boolean, stop: AbortSignal): Promise<void> {
    if (!nudgeable) {
      await this.clock.sleep(ms, stop);
      return;
    }
    if (!this.nudgePending) {
      const wake = new AbortController();
      this.wakeCtl = wake;
      await this.clock.sleep(ms, wake.signal);
      this.wakeCtl = null;
    }
    if (stop.aborted || !this.nudgePending) return;
    const gapLeft = this.lastSendAt + (this.opts.minNudgeGapMs ?? 250) - this.clock.now();
    if (gapLeft > 0) await this.clock.sleep(gapLeft, stop);
  }

  private retentionMs(): number {
    return Math.max(this.opts.idRetentionMs ?? MIN_ID_RETENTION_MS, 3 * this.interval * 1000);
  }

  /**
   * The heartbeat body, fields in the spec's order, as an object (for `onHeartbeat` and
   * `onHeartbeatUnknown`) and as the JSON text that is signed and sent: the same text as
   * `JSON.stringify(request)`, put together from the roster's kept JSON and each event's JSON made by
   * `track()`, so neither is serialised again for every heartbeat or resend. The object's `events` are
   * parsed from that JSON when first read (most heartbeats have no reader of them).
   */
  private buildRequest(events: QueuedEvent[], results: CommandResults): { request: HeartbeatRequest; body: string } {
    const { externalScopeId, region } = this.opts;
    const players = this.roster.list();
    const head = {
      externalServerId: this.externalServerId,
      ...(externalScopeId !== undefined ? { externalScopeId } : {}),
      playerCount: players.length,
      maxPlayers: this.opts.maxPlayers,
      sdkVersion: this.opts.sdkVersion ?? DEFAULT_SDK_VERSION,
      uptimeSeconds: Math.max(0, Math.floor((this.clock.now() - this.bootMs) / 1000)),
      ...(region !== undefined ? { region } : {}),
    };
    let entries: EventEntry[] | undefined;
    const request = { ...head, players } as HeartbeatRequest;
    Object.defineProperty(request, 'events', { enumerable: true, get: () => (entries ??= events.map(entryOf)) });
    request.acks = results.acks;
    if (results.failures.length) request.failures = results.failures;
    const eventsJson = events.join(',');
    const failures = results.failures.length ? `,"failures":${JSON.stringify(results.failures)}` : '';
    const body = `${JSON.stringify(head).slice(0, -1)},"players":${this.roster.toJSONText()},"events":[${eventsJson}],"acks":${JSON.stringify(results.acks)}${failures}}`;
    return { request, body };
  }

  /**
   * One heartbeat, including the immediate re-sends a 413 calls for. Returns when the next one is due.
   * Never throws for HTTP or network outcomes.
   */
  private async cycle(): Promise<Cycle> {
    for (;;) {
      const events = this.events.peek(this.batchLimit);
      const results = this.commands.outgoing(MAX_ACKS);
      const { request, body } = this.buildRequest(events, results);
      this.nudgePending = false;
      this.lastSendAt = this.clock.now();
      let res: TransportResponse;
      try {
        res = await this.transport.request('POST', GAME_PATHS.heartbeat, body);
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        // No response: the service may have applied it. The events stay queued and are resent (eventIds
        // make that a no-op on the service); the caller hears what was sent, for its own accounting.
        this.recorder.counters.heartbeatsOutcomeUnknown++;
        for (const e of events) this.maybeSent.add(e);
        // a long outage drops the oldest events from a full queue: forget them here too
        if (this.maybeSent.size > this.events.size) this.pruneMaybeSent();
        try {
          this.opts.onHeartbeatUnknown?.(request);
        } catch {
          // a throwing callback must not break the client
        }
        return this.retryLater('network', err.message);
      }
      if (res.timestamps.length > 1) this.recorder.counters.retries409++;
      const { status } = res;
      if (status === 200) return this.accepted(request, events, results, res);
      if (status === 413) {
        if (events.length > 1) {
          // Spec: "split events across two heartbeats": first half now, the rest next time (recursively).
          this.batchLimit = Math.max(1, Math.floor(events.length / 2));
          this.recorder.counters.splits413++;
          this.problem({ kind: 'envelope_too_large', status, message: `413 with ${events.length} events; resending ${this.batchLimit}`, delayMs: 0 });
          continue;
        }
        if (events.length === 1) {
          // One event alone is over the limit: it can never be accepted, and would block the queue forever.
          this.events.remove(events[0]!);
          this.recorder.counters.eventsRejected++;
          const { eventId, type } = entryOf(events[0]!);
          this.problem({ kind: 'event_rejected', status, message: `event ${eventId} (${type}) alone exceeds the envelope limit; dropped` });
          continue;
        }
        return this.retryLater('envelope_too_large', 'heartbeat without events exceeds the envelope limit (roster or acks too large)', status);
      }
      if (status === 429 || status === 503) {
        // A refusal that says when to come back (a quota, the service shedding load, a dependency briefly
        // away): Retry-After plus jitter, so a fleet refused together does not return together.
        const retryAfter = retryAfterWithJitterMs(res.headers.get('retry-after'), this.clock.now(), this.random);
        if (status === 429 || retryAfter !== null) {
          return this.retryLater(status === 429 ? 'rate_limited' : 'server_error', `${status} ${res.errorCode ?? ''}`.trim(), status, retryAfter ?? undefined);
        }
      }
      if (status === 400) {
        const outcome = this.rejected(events, res);
        if (outcome) return outcome;
        continue;
      }
      if (status === 409) {
        return this.retryLater(
          'replay_rejected',
          `409 ${res.errorCode ?? ''} after one re-signed retry; clock skew vs serverTime ${this.transport.clockSkewMs} ms`,
          status,
        );
      }
      if (status === 401 || status === 403) return this.setupFailure(res, GAME_PATHS.heartbeat);
      return this.retryLater(status >= 500 || status === 408 || status < 400 ? 'server_error' : 'bad_request', `${status} ${res.errorCode ?? ''}`.trim(), status);
    }
  }

  /**
   * A 400 on a heartbeat carrying `events`: drops the event `error.pointer` names, else halves the batch
   * (as for 413) or drops the one event left and sends full batches again; reports each drop as `event_rejected`. Returns undefined to
   * resend at once, or a backoff when the batch had no events (the roster or acks were refused).
   */
  private rejected(events: QueuedEvent[], res: TransportResponse): Cycle | undefined {
    const pointer = res.errorPointer;
    const message = res.errorMessage ?? res.errorCode ?? '400';
    const index = eventIndexOfPointer(pointer);
    const badJson = index !== undefined ? events[index] : events.length === 1 ? events[0] : undefined;
    if (badJson) {
      this.events.remove(badJson);
      const bad = entryOf(badJson);
      // Found by halving, it is gone: the rest go out in full batches again. Left at 1 and doubling once
      // per 200 (one heartbeat an interval), a queue with a bad event every few intervals never drains
      // (the Luau SDK had the same flaw: sdk/luau/GameIntegration/init.luau `Client.rejected`).
      if (index === undefined) this.batchLimit = this.maxEventsPerHeartbeat;
      this.recorder.counters.eventsRejected++;
      this.problem({ kind: 'event_rejected', status: 400, eventId: bad.eventId, pointer, message: `event ${bad.eventId} (${bad.type}) refused: ${message}; dropped` });
      return undefined;
    }
    if (events.length > 1) {
      this.batchLimit = Math.max(1, Math.floor(events.length / 2));
      this.problem({ kind: 'bad_request', status: 400, pointer, message: `400 naming no event (${message}) with ${events.length} events; resending ${this.batchLimit}`, delayMs: 0 });
      return undefined;
    }
    return this.retryLater('bad_request', `400 without events (${pointer ?? 'no pointer'}): ${message}`, 400);
  }

  private accepted(request: HeartbeatRequest, events: QueuedEvent[], results: CommandResults, res: TransportResponse): Cycle {
    const now = this.clock.now();
    this.events.confirm(events);
    for (const e of events) this.maybeSent.delete(e);
    this.recorder.counters.heartbeatsOk++;
    this.recorder.counters.eventsAcked += events.length;
    const confirmed = this.commands.confirm(results, now, this.retentionMs());
    this.recorder.counters.commandsAcked += confirmed.acked;
    this.recorder.counters.commandsFailed += confirmed.failed;
    this.commands.prune(now);
    this.failureStreak = 0;
    this.batchLimit = Math.min(this.maxEventsPerHeartbeat, this.batchLimit * 2);

    const response = parseHeartbeatResponse(res.json);
    if (!response) {
      this.problem({ kind: 'bad_response', status: 200, message: 'heartbeat 200 without a readable body; keeping the current interval' });
      return { kind: 'ok', delayMs: this.interval * 1000 };
    }
    this.lastConfig = response.config;
    const iv = response.config.heartbeatIntervalSeconds;
    if (Number.isFinite(iv) && iv > 0) this.interval = Math.min(3600, Math.max(1, iv));
    // The registration's 200: the next heartbeat at a random point of the interval (`spreadPhase`).
    const spread = this.recorder.counters.heartbeatsOk === 1 && this.opts.spreadPhase !== false;
    const delayMs = spread ? Math.max(1, Math.floor(this.random() * this.interval * 1000)) : this.interval * 1000;
    for (const command of response.commands) this.dispatch(command);
    if (this.opts.onHeartbeat) {
      try {
        this.opts.onHeartbeat({ request, response, latencyMs: res.attemptLatenciesMs.at(-1) ?? 0 });
      } catch (err) {
        this.problem({ kind: 'handler_error', message: `onHeartbeat threw: ${err instanceof Error ? err.message : String(err)}` });
      }
    }
    return { kind: 'ok', delayMs };
  }

  private retryLater(kind: ProblemInfo['kind'], message: string, status?: number, delayMs?: number): Cycle {
    this.failureStreak++;
    const delay = delayMs ?? backoffDelayMs(this.failureStreak, this.opts.backoff ?? DEFAULT_BACKOFF, this.random);
    this.problem({ kind, message, status, delayMs: delay });
    return { kind: 'retry', delayMs: delay };
  }

  private setupFailure(res: TransportResponse, path: string): Cycle {
    const info: SetupErrorInfo = {
      status: res.status,
      code: res.errorCode ?? 'unknown',
      message: res.errorMessage ?? res.text.slice(0, 300),
      requestId: res.requestId,
      path,
      hint: SETUP_HINTS[res.status] ?? 'client error; the request is not retried unchanged',
    };
    this.halted = info;
    this.running = false;
    try {
      this.opts.onSetupError?.(info);
    } catch {
      // a throwing callback must not break the client
    }
    return { kind: 'halt' };
  }

  private dispatch(raw: unknown): void {
    if (!isRecord(raw) || typeof raw.id !== 'string' || !raw.id || typeof raw.type !== 'string') {
      this.problem({ kind: 'bad_response', message: 'command entry without a string id and type; ignored' });
      return;
    }
    if (this.stopping) return; // shutting down: leave it unacked; the service expires or re-delivers it
    if (!this.commands.claim(raw.id)) {
      this.recorder.counters.commandsDuplicate++;
      return;
    }
    this.recorder.counters.commandsReceived++;
    const target = isRecord(raw.target) ? raw.target : {};
    // Typed as the service documents it; a type newer than this package passes through as sent (CommandEntry).
    const command = {
      id: raw.id,
      type: raw.type,
      payload: isRecord(raw.payload) ? raw.payload : {},
      target: {
        externalServerId: typeof target.externalServerId === 'string' ? target.externalServerId : this.externalServerId,
        externalId: typeof target.externalId === 'string' ? target.externalId : null,
      },
      issuedAt: typeof raw.issuedAt === 'string' ? raw.issuedAt : '',
      expiresAt: typeof raw.expiresAt === 'string' ? raw.expiresAt : '',
    } as CommandEntry;
    const expires = Date.parse(command.expiresAt);
    if (Number.isFinite(expires) && expires <= this.transport.serverNow()) {
      // Too late to act: no ack (the effect did not happen) and no failure report; the service turns it
      // into `expired` on its own (spec: Command lifecycle, "not yet acked → expired").
      this.commands.drop(command.id, this.clock.now() + this.retentionMs());
      return;
    }
    const run = this.execute(command);
    this.handlers.add(run);
    void run.finally(() => this.handlers.delete(run));
  }

  private async execute(command: CommandEntry): Promise<void> {
    let outcome: CommandOutcome;
    try {
      outcome = this.opts.onCommand ? ((await this.opts.onCommand(command)) ?? { ok: true }) : { ok: false, reason: 'no command handler' };
    } catch (err) {
      outcome = { ok: false, reason: err instanceof Error ? err.message : String(err) };
    }
    if (outcome.ok) this.recorder.counters.commandsExecuted++;
    this.commands.complete(command.id, outcome.ok, outcome.ok ? '' : outcome.reason);
    if (this.opts.ackEarly ?? true) this.nudge();
  }

  private problem(p: ProblemInfo): void {
    try {
      this.opts.onProblem?.(p);
    } catch {
      // a throwing callback must not break the client
    }
  }
}

/** Reads a 200 heartbeat body leniently (unknown fields ignored); null when it is not an object. */
export function parseHeartbeatResponse(json: unknown): HeartbeatResponse | null {
  if (!isRecord(json)) return null;
  const config = isRecord(json.config) ? json.config : {};
  const iv = typeof config.heartbeatIntervalSeconds === 'number' ? config.heartbeatIntervalSeconds : Number.NaN;
  return {
    commands: Array.isArray(json.commands) ? (json.commands as CommandEntry[]) : [],
    config: { ...config, heartbeatIntervalSeconds: iv },
    serverTime: typeof json.serverTime === 'string' ? json.serverTime : '',
  };
}
