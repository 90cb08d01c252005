/**
 * One simulated game server (issue #15 item 4): a reference client (@gis/client) with its door cache,
 * players who arrive, play and leave, and a command handler. Cheap per simulated request: no timer of its
 * own (its 1 s tick at the server's own phase, and every sleep of its client through the `clock` option,
 * are slots of the process's {@link TimerWheel}), players kept in one Map (no roster copies per tick),
 * door answers counted, not stored, HTTP through the process's keep-alive fetch, every attempt recorded
 * into the process's histograms by `onAttempt`.
 *
 * Players: after boot, `players` arrivals spread uniformly over `fillSeconds` (a restart's reconnect
 * wave; the platform does not put 30 players on a fresh server in one instant); each stays ~3 minutes
 * (exponential), and a player who leaves is replaced after ~20 s (exponential), now and then by one who
 * left before (so a banned or kicked player comes back and meets the ban check). Events: join, spawn,
 * death (~every 40 s), team_change (~4 min), a custom quest_complete (~90 s), leave.
 *
 * Session accounting (what Postgres should hold): opens and closes implied by the rosters the service
 * answered 200 for; a roster carried only by a heartbeat without an answer (timeout: outcome unknown)
 * may or may not have been applied, so the users it differs in count as `ambiguous`.
 * Not part of the service.
 */
import { GameClient, type CommandEntry, type CommandOutcome, type HeartbeatRequest, type HeartbeatSuccess, type ProblemInfo, type SetupErrorInfo, type AttemptInfo, type FetchLike } from '@gis/client';
import { DoorPlay, type DoorPlaySummary } from './door-play.js';
import { loadConfig } from '../../../src/config.js';
import { ROLES } from '../../../src/queues/worker-roles.js';
import type { TimerWheel } from './timer-wheel.js';

export const SDK_VERSION = 'gis-simulator/0.2.0';
const TEAMS = ['red', 'blue', 'green'] as const;
const QUESTS = ['q-tutorial', 'q-bandits', 'q-dragon', 'q-escort'] as const;
/** Mean stay of a player, s. */
const MEAN_STAY_S = 180;
/** Mean time before a leaving player is replaced, s. */
const MEAN_REPLACE_S = 20;
/** The service's default GONE_AFTER_MISSED_INTERVALS and its liveness sweep's period, s (src/queues). */
const GONE_AFTER_MISSED_INTERVALS = loadConfig({}).goneAfterMissedIntervals;
const SWEEP_PERIOD_S = ROLES['sweep-liveness'].everyMs / 1000;
/** Each player opens a door about this often, s. */
const DOOR_EVERY_S = 20;

/** Per second, each player: dies (when alive), respawns (when dead), changes team, finishes a quest. */
const DEATH_CHANCE = 1 / 40;
const RESPAWN_CHANCE = 1 / 3;
const TEAM_CHANCE = 1 / 240;
const QUEST_CHANCE = 1 / 90;
const CAUSES = ['fall', 'pvp', 'npc'] as const;

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
/** Exponentially distributed delay with mean `meanS` seconds, in ms. */
const expMs = (meanS: number): number => -Math.log(1 - Math.random()) * meanS * 1000;

/**
 * Calls `fn(i)` for each i in [0, n) with probability `chance`, independently: the same draw as one
 * `Math.random() < chance` per player, at the cost of one random number per hit instead of one per
 * player (the gap to the next hit is geometric). `logMiss` = Math.log(1 - chance).
 */
function eachWithChance(n: number, logMiss: number, fn: (i: number) => void): void {
  for (let i = Math.floor(Math.log(1 - Math.random()) / logMiss); i < n; i += 1 + Math.floor(Math.log(1 - Math.random()) / logMiss)) fn(i);
}
const LOG_MISS = {
  leave: Math.log(1 - 1 / MEAN_STAY_S),
  death: Math.log(1 - DEATH_CHANCE),
  team: Math.log(1 - TEAM_CHANCE),
  quest: Math.log(1 - QUEST_CHANCE),
  door: Math.log(1 - 1 / DOOR_EVERY_S),
};

interface Player {
  id: string;
  username: string;
  team: string;
  /** Position in the server's player list (for picking players at random). */
  index: number;
  /** Tick number of the death, or -1 while alive. */
  deadAt: number;
  /** Chosen to leave in the current tick. */
  leaving: boolean;
}

/** What a worker gives each server: where to send, and where to count. */
export interface SimServerDeps {
  url: string;
  key: string;
  fetch: FetchLike;
  requestTimeoutMs: number;
  onAttempt: (a: AttemptInfo) => void;
  onProblem: (p: ProblemInfo) => void;
  onSetupError: (e: SetupErrorInfo, server: string) => void;
  /** Door answers of the whole process. */
  doors: DoorPlaySummary;
  /** The process's one timer: the server's tick and every sleep of its client go through it. */
  wheel: TimerWheel;
  log: (line: string) => void;
}

export class SimServer {
  readonly id: string;
  readonly client: GameClient;
  readonly doors: DoorPlay;
  readonly players = new Map<string, Player>();
  /** The same players in an array (`Player.index`), for drawing them at random. */
  private readonly list: Player[] = [];
  /** Players who are dead now. */
  private readonly dead = new Set<Player>();
  private ticks = 0;
  /** Epoch ms of arrivals still to come. */
  private arrivals: number[] = [];
  /** When the next tick is due, epoch ms. */
  private nextTickAt = 0;
  private readonly onTick = (): void => this.tick();
  private nextPlayer = 0;
  private readonly departed: { externalId: string; username: string }[] = [];
  /** Joins waiting for their ban check. */
  private joining = 0;
  private accepted = new Set<string>();
  /** When the last heartbeat got its 200, epoch ms (0: none yet). */
  private lastAcceptedAt = 0;
  booted = false;
  stopped = false;
  sessionsOpened = 0;
  sessionsClosed = 0;
  sessionsAmbiguous = 0;
  bansChecked = 0;
  bansAnswered = 0;
  bansFailOpen = 0;
  bansRefused = 0;

  constructor(
    private readonly runTag: string,
    readonly index: number,
    private readonly target: number,
    private readonly fillSeconds: number,
    private readonly deps: SimServerDeps,
  ) {
    this.id = `sim-${runTag}-${String(index).padStart(4, '0')}`;
    this.client = new GameClient({
      baseUrl: deps.url,
      apiKey: deps.key,
      externalServerId: this.id,
      externalScopeId: `map-${index % 3}`,
      region: pick(['eu-west', 'us-east', 'ap-south']),
      maxPlayers: Math.max(target * 2, target + 10),
      sdkVersion: SDK_VERSION,
      fetch: deps.fetch,
      clock: deps.wheel.clock,
      requestTimeoutMs: deps.requestTimeoutMs,
      latencyWindow: 0,
      onAttempt: deps.onAttempt,
      onCommand: (cmd) => this.execute(cmd),
      onProblem: deps.onProblem,
      onSetupError: (e) => deps.onSetupError(e, this.id),
      onHeartbeat: (hb) => this.accept(hb),
      onHeartbeatUnknown: (req) => this.unknown(req),
    });
    this.doors = new DoorPlay((method, path, body) => this.client.request(method, path, body), this.id, deps.onProblem, deps.doors, {
      bootWindowMs: this.client.bootWindowMs,
      clock: deps.wheel.clock,
      busyGate: this.client.busyGate,
    });
  }

  /** The server boots: heartbeat loop (first one inside the boot window), manifest, arrivals, the tick. */
  boot(): void {
    if (this.booted || this.stopped) return;
    this.booted = true;
    this.client.start();
    void this.doors.access.boot();
    const now = Date.now();
    for (let i = 0; i < this.target; i++) this.arrivals.push(now + Math.random() * this.fillSeconds * 1000);
    this.nextTickAt = now + 1000;
    this.deps.wheel.at(this.nextTickAt, this.onTick);
  }

  /**
   * Counts session opens and closes the accepted roster implies (the service reconciles the same way).
   * After a gap the liveness sweep may have ended (the server silent for its gone-after time, less one
   * sweep period), the players this roster carries over may have been closed as gone and reopened by it
   * (spec: States › Other states): they count as ambiguous.
   */
  private accept(hb: HeartbeatSuccess): void {
    const at = Date.now();
    const interval = hb.response.config.heartbeatIntervalSeconds;
    const maybeSwept = this.lastAcceptedAt > 0 && at - this.lastAcceptedAt > (GONE_AFTER_MISSED_INTERVALS * interval - SWEEP_PERIOD_S) * 1000;
    this.lastAcceptedAt = at;
    const now = new Set<string>();
    for (const p of hb.request.players) {
      now.add(p.externalId);
      if (!this.accepted.has(p.externalId)) this.sessionsOpened++;
      else if (maybeSwept) this.sessionsAmbiguous++;
    }
    for (const id of this.accepted) if (!now.has(id)) this.sessionsClosed++;
    this.accepted = now;
    this.doors.access.onConfig(hb.response.config);
  }

  /** A heartbeat without an answer: the users it differs in from the last accepted roster are ambiguous. */
  private unknown(req: HeartbeatRequest): void {
    const seen = new Set<string>();
    for (const p of req.players) {
      seen.add(p.externalId);
      if (!this.accepted.has(p.externalId)) this.sessionsAmbiguous++;
    }
    for (const id of this.accepted) if (!seen.has(id)) this.sessionsAmbiguous++;
  }

  /**
   * A player connects: ban check first (spec: bans/check on connect), refused when banned; the same
   * request answers the player's bulk door check (`includeDoors`), so a join costs one request.
   */
  private async join(): Promise<void> {
    const back = this.departed.length && Math.random() < 0.3 ? this.departed.splice(Math.floor(Math.random() * this.departed.length), 1)[0] : undefined;
    const n = this.nextPlayer++;
    const { externalId, username } = back ?? { externalId: `p-${this.runTag}-${this.index}-${n}`, username: `player${this.index}_${n + 1}` };
    this.joining++;
    this.bansChecked++;
    const ban = await this.client.checkBan(externalId, { includeDoors: true }).finally(() => this.joining--);
    if (ban.source === 'service') this.bansAnswered++;
    else this.bansFailOpen++;
    if (ban.banned) {
      this.bansRefused++;
      this.deps.log(`${this.id}: refused ${externalId}: banned${ban.reason ? ` (${ban.reason})` : ''}`);
      this.arrivals.push(Date.now() + expMs(MEAN_REPLACE_S));
      return;
    }
    if (this.stopped || this.players.has(externalId)) return;
    const team = pick(TEAMS);
    const player: Player = { id: externalId, username, team, index: this.list.length, deadAt: -1, leaving: false };
    this.players.set(externalId, player);
    this.list.push(player);
    this.client.roster.add({ externalId, username, team, joinedAt: new Date().toISOString() });
    this.client.track({ type: 'join', externalId, payload: { team } });
    this.client.track({ type: 'spawn', externalId });
    void this.doors.access.onJoin(externalId, ban.doors);
  }

  private leave(externalId: string, reason: string): void {
    const player = this.players.get(externalId);
    if (!player) return;
    this.players.delete(externalId);
    // Out of the list: the last player takes its place.
    const last = this.list.pop()!;
    if (last !== player) {
      this.list[player.index] = last;
      last.index = player.index;
    }
    this.dead.delete(player);
    this.client.roster.remove(externalId);
    this.client.track({ type: 'leave', externalId, payload: { reason } });
    this.doors.access.onLeave(externalId);
    if (reason !== 'server_shutdown') {
      this.departed.push({ externalId, username: player.username });
      this.arrivals.push(Date.now() + expMs(MEAN_REPLACE_S));
    }
  }

  /**
   * One second of play: each player leaves, dies or respawns, changes team, finishes a quest and opens a
   * door with its chance per second, drawn for the players who do (see {@link eachWithChance}); then the
   * arrivals that are due join.
   */
  tick(): void {
    if (this.stopped) return;
    const tick = ++this.ticks;
    const list = this.list;
    const n = list.length;
    let leaving: Player[] | undefined;
    eachWithChance(n, LOG_MISS.leave, (i) => {
      list[i]!.leaving = true;
      (leaving ??= []).push(list[i]!);
    });
    eachWithChance(n, LOG_MISS.death, (i) => {
      const p = list[i]!;
      if (p.leaving || p.deadAt >= 0) return;
      p.deadAt = tick;
      this.dead.add(p);
      this.client.track({ type: 'death', externalId: p.id, payload: { killer: this.randomOther(p), cause: pick(CAUSES) } });
    });
    // The dead of before this tick (those who died in it stay down a second at least).
    for (const p of this.dead) {
      if (!p.leaving && p.deadAt < tick && Math.random() < RESPAWN_CHANCE) {
        p.deadAt = -1;
        this.dead.delete(p);
        this.client.track({ type: 'spawn', externalId: p.id });
      }
    }
    eachWithChance(n, LOG_MISS.team, (i) => {
      const p = list[i]!;
      if (p.leaving) return;
      const team = pick(TEAMS.filter((t) => t !== p.team));
      this.client.track({ type: 'team_change', externalId: p.id, payload: { from: p.team, to: team } });
      p.team = team;
      this.client.roster.update(p.id, { team });
    });
    eachWithChance(n, LOG_MISS.quest, (i) => {
      const p = list[i]!;
      if (!p.leaving) this.client.track({ type: 'quest_complete', externalId: p.id, payload: { questId: pick(QUESTS), xp: 50 + Math.floor(Math.random() * 450) } });
    });
    eachWithChance(n, LOG_MISS.door, (i) => {
      if (!list[i]!.leaving) this.doors.open(list[i]!.id);
    });
    if (leaving) for (const p of leaving) this.leave(p.id, 'quit');
    const now = Date.now();
    // Arrivals that are due join now (as many as there is room for); the rest keep waiting.
    let kept = 0;
    for (const t of this.arrivals) {
      if (t <= now && this.players.size + this.joining < this.target) void this.join();
      else if (t > now) this.arrivals[kept++] = t;
    }
    this.arrivals.length = kept;
    // The next tick a second after this one's due time (from now when the process fell behind).
    this.nextTickAt = Math.max(this.nextTickAt + 1000, now + 500);
    this.deps.wheel.at(this.nextTickAt, this.onTick);
  }

  /** Another player than `p`, at random, or null when `p` is alone. */
  private randomOther(p: Player): string | null {
    const n = this.list.length;
    if (n < 2) return null;
    const k = Math.floor(Math.random() * (n - 1));
    return this.list[k >= p.index ? k + 1 : k]!.id;
  }

  /** The game's command handler: the effect happens here, then the client acks. */
  private async execute(cmd: CommandEntry): Promise<CommandOutcome> {
    const user = cmd.target.externalId ?? undefined;
    const here = user !== undefined && this.players.has(user);
    const type: string = cmd.type; // a type newer than the client package reaches the default branch
    switch (cmd.type) {
      case 'kick':
        if (!here) return { ok: false, reason: 'player not on this server' };
        this.leave(user, 'kicked');
        return { ok: true };
      case 'mute':
      case 'unmute':
      case 'freeze':
      case 'teleport':
        return here ? { ok: true } : { ok: false, reason: 'player not on this server' };
      case 'message':
        return user !== undefined && !here ? { ok: false, reason: 'player not on this server' } : { ok: true };
      case 'door_set_state':
      case 'refresh_permissions':
        return (await this.doors.access.handleCommand(cmd)) ?? { ok: true };
      case 'custom':
        return { ok: true };
      case 'shutdown':
        this.deps.log(`${this.id}: shutdown requested; closing this server after the ack`);
        setImmediate(() => void this.shutdown());
        return { ok: true };
      default:
        return { ok: false, reason: `unsupported command type ${type}` };
    }
  }

  /** Players leave, then the client flushes everything with final heartbeats and stops. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const id of [...this.players.keys()]) this.leave(id, 'server_shutdown');
    if (this.booted) await this.client.stop({ flush: true, timeoutMs: 20_000 });
  }
}
