/**
 * Fleet simulator: `npm run simulate -- --servers N --players M --duration S [--url U] [--interval S]
 * [--key K] [--wait S] [--commands R] [--nudges] [--json]`.
 *
 * N simulated game servers, each a reference client (src/client/) against a running API. Unless `--key`
 * is given it first creates a workspace, a game (heartbeat interval `--interval`, default 15 s) and a key
 * with every scope, through the service functions directly in Postgres. Each server keeps about M players
 * who join and leave over time and produce join, leave, team_change, death, spawn and a custom
 * `quest_complete` event; commands it receives are executed (kick removes the player) and acked, with an
 * early heartbeat so the ack does not wait a whole interval. Servers fetch the door manifest on boot,
 * bulk-check each joining player and let players open a random door about every 20 s through the
 * reference client's DoorAccess (a created game gets four doors: scripts/support/door-play.ts); the summary
 * reports the door decisions. While it runs it issues `--commands` moderation
 * commands a minute to random players and servers through the service (scripts/support/command-load.ts);
 * with `--nudges` (only for a game it created) the game's urgent nudges go to a local imitation of the
 * cloud messaging API that every simulated server subscribes to (the workers must run `publish-nudges`).
 *
 * At the end every server lets its players go and flushes with a final heartbeat; then the simulator waits
 * (up to `--wait` s, default 30) for the workers to bring Postgres up to date and prints a summary:
 * heartbeats sent/ok, latency p50/p99 (ms), events sent vs PlayerEvent rows, sessions opened/closed
 * (Session rows vs what the accepted rosters imply), commands received/acked, and of the commands it
 * issued: how many were acked, failed, expired or are still open, and issue→ack p50/p99 (ms, server clock;
 * it waits up to one interval for open ones before stopping the fleet; a command for a player who left
 * the game stays open until it expires). `--json` prints it as one
 * JSON object on stdout (progress goes to stderr either way).
 *
 * Exit codes: 0 ok; 1 events sent and rows in Postgres differ after the wait, events were left unsent, or
 * a server hit a setup error (400/401/403/404); 2 usage or configuration error.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../src/config.js';
import { createDb, type Db } from '../src/store/prisma.js';
import { createGame, createWorkspace, checkInterval } from '../src/games/game-service.js';
import { createKey } from '../src/auth/key-service.js';
import { parseServerKey } from '../src/auth/server-key.js';
import { SCOPES } from '../src/auth/scopes.js';
import { GameClient } from '../src/client/game-client.js';
import { percentile, type ClientStats } from '../src/client/client-stats.js';
import { realSleep } from '../src/client/clock.js';
import type { CommandEntry, CommandOutcome, HeartbeatSuccess, ProblemInfo, SetupErrorInfo } from '../src/client/client-types.js';
import { createRedis, type AppRedis } from '../src/store/redis.js';
import { NudgeQueue } from '../src/commands/nudge-queue.js';
import { attachNudgeImitation, CommandLoad } from './support/command-load.js';
import { DoorPlay, emptyDoorSummary, seedSimulatedDoors } from './support/door-play.js';

const USAGE = `usage: npm run simulate -- --servers N --players M --duration S [--url U] [--interval S] [--key K] [--wait S] [--commands R] [--nudges] [--json]
  --servers   simulated game servers (default 5)
  --players   players kept on each server, about (default 10)
  --duration  seconds to run (default 60)
  --url       API origin (default http://127.0.0.1:3000)
  --interval  heartbeat interval of the created game, 15-60 s (default 15; ignored with --key)
  --key       use this existing server key (svc_live_<prefix>.<secret>) instead of creating a game
  --wait      seconds to wait for Postgres to catch up at the end (default 30)
  --commands  moderation commands to issue per minute (default 6; 0 with --key)
  --nudges    publish urgent nudges through a local cloud messaging imitation (not with --key)
  --json      print the summary as one JSON object on stdout`;

const SDK_VERSION = 'gis-simulator/0.1.0';
const TICK_MS = 1000;
const PROGRESS_MS = 5000;
const TEAMS = ['red', 'blue', 'green'] as const;
const QUESTS = ['q-tutorial', 'q-bandits', 'q-dragon', 'q-escort'] as const;

class UsageError extends Error {}

interface Options {
  servers: number;
  players: number;
  durationSeconds: number;
  url: string;
  intervalSeconds: number;
  key?: string;
  waitSeconds: number;
  commandsPerMinute: number;
  nudges: boolean;
  json: boolean;
}

function int(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max} (got ${value})`);
  return n;
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      servers: { type: 'string' },
      players: { type: 'string' },
      duration: { type: 'string' },
      url: { type: 'string' },
      interval: { type: 'string' },
      key: { type: 'string' },
      wait: { type: 'string' },
      commands: { type: 'string' },
      nudges: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return null;
  const intervalSeconds = int('interval', values.interval, 15, 1, 3600);
  try {
    checkInterval(intervalSeconds);
  } catch (err) {
    throw new UsageError(`--interval: ${(err as Error).message}`);
  }
  const url = values.url ?? 'http://127.0.0.1:3000';
  if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be an http(s) origin (got ${url})`);
  if (values.key !== undefined && !parseServerKey(values.key)) throw new UsageError('--key must look like svc_live_<prefix>.<secret>');
  return {
    servers: int('servers', values.servers, 5, 1, 10_000),
    players: int('players', values.players, 10, 0, 1000),
    durationSeconds: int('duration', values.duration, 60, 1, 86_400),
    url,
    intervalSeconds,
    key: values.key,
    waitSeconds: int('wait', values.wait, 30, 0, 3600),
    commandsPerMinute: int('commands', values.commands, values.key === undefined ? 6 : 0, 0, 6000),
    nudges: values.nudges ?? false,
    json: values.json ?? false,
  };
}

const log = (line: string): void => {
  process.stderr.write(`[simulate] ${line}\n`);
};

/** Chance per tick of an event whose mean spacing is `seconds`. */
const every = (seconds: number): boolean => Math.random() < TICK_MS / 1000 / seconds;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

/** One simulated game server: its players' behaviour, its command handler and its reference client. */
class SimServer {
  readonly id: string;
  readonly client: GameClient;
  /** The server's doors: manifest, decisions, players opening doors (scripts/support/door-play.ts). */
  readonly doors: DoorPlay;
  private nextPlayer = 0;
  private readonly dead = new Set<string>();
  /** Players in the last roster the service accepted (for the expected session counts). */
  private accepted = new Set<string>();
  sessionsOpened = 0;
  sessionsClosed = 0;
  stopped = false;
  /** Joins refused because the service's blocklist said the player is banned. */
  bansRefused = 0;
  /** Joins waiting for their ban check. */
  private joining = 0;
  /** Players who left (kicked ones too) and may come back: a banned one is then refused. */
  private readonly departed: { externalId: string; username: string }[] = [];

  constructor(
    private readonly runTag: string,
    readonly index: number,
    private readonly target: number,
    opts: { url: string; key: string; onProblem: (p: ProblemInfo) => void; onSetupError: (e: SetupErrorInfo) => void },
  ) {
    this.id = `sim-${runTag}-${String(index).padStart(3, '0')}`;
    this.client = new GameClient({
      baseUrl: opts.url,
      apiKey: opts.key,
      externalServerId: this.id,
      externalScopeId: `map-${index % 3}`,
      region: pick(['eu-west', 'us-east', 'ap-south']),
      maxPlayers: Math.max(this.target * 2, this.target + 10),
      sdkVersion: SDK_VERSION,
      // The ack goes out with an early heartbeat instead of waiting a whole interval.
      onCommand: (cmd) => this.execute(cmd),
      onProblem: opts.onProblem,
      onSetupError: opts.onSetupError,
      onHeartbeat: (hb) => this.accept(hb),
    });
    this.doors = new DoorPlay((method, path, body) => this.client.request(method, path, body), this.id, opts.onProblem);
  }

  /** Counts session opens and closes the accepted roster implies (the service reconciles the same way). */
  private accept(hb: HeartbeatSuccess): void {
    const now = new Set(hb.request.players.map((p) => p.externalId));
    for (const id of now) if (!this.accepted.has(id)) this.sessionsOpened++;
    for (const id of this.accepted) if (!now.has(id)) this.sessionsClosed++;
    this.accepted = now;
    this.doors.access.onConfig(hb.response.config);
  }

  /**
   * A player connects (a new one, or now and then one who left): the service's blocklist is asked first
   * (spec: POST bans/check, on connect) and a banned player is refused.
   */
  private async join(): Promise<void> {
    const n = this.nextPlayer++;
    const back = this.departed.length && Math.random() < 0.3 ? this.departed.splice(Math.floor(Math.random() * this.departed.length), 1)[0] : undefined;
    const { externalId, username } = back ?? { externalId: `p-${this.runTag}-${this.index}-${n}`, username: `player${this.index}_${n + 1}` };
    this.joining++;
    const ban = await this.client.checkBan(externalId).finally(() => this.joining--);
    if (ban.banned) {
      this.bansRefused++;
      log(`${this.id}: refused ${externalId}: banned${ban.reason ? ` (${ban.reason})` : ''}`);
      return;
    }
    if (this.stopped || this.client.roster.has(externalId)) return;
    const team = pick(TEAMS);
    this.client.roster.add({ externalId, username, team, joinedAt: new Date().toISOString() });
    this.client.track({ type: 'join', externalId, payload: { team } });
    this.client.track({ type: 'spawn', externalId });
    void this.doors.access.onJoin(externalId);
  }

  private leave(externalId: string, reason: string): void {
    const player = this.client.roster.list().find((p) => p.externalId === externalId);
    if (!this.client.roster.remove(externalId)) return;
    if (player && reason !== 'server_shutdown') this.departed.push({ externalId, username: player.username });
    this.dead.delete(externalId);
    this.client.track({ type: 'leave', externalId, payload: { reason } });
    this.doors.access.onLeave(externalId);
  }

  /** One second of play: joins towards the target, leaves (mean stay 3 min), deaths, spawns, quests. */
  tick(): void {
    if (this.stopped) return;
    for (const p of this.client.roster.list()) {
      const id = p.externalId;
      if (every(180)) {
        this.leave(id, 'quit');
        continue;
      }
      if (this.dead.has(id)) {
        if (every(3)) {
          this.dead.delete(id);
          this.client.track({ type: 'spawn', externalId: id });
        }
      } else if (every(40)) {
        this.dead.add(id);
        const killers = this.client.roster.list().filter((o) => o.externalId !== id);
        this.client.track({ type: 'death', externalId: id, payload: { killer: killers.length ? pick(killers).externalId : null, cause: pick(['fall', 'pvp', 'npc']) } });
      }
      if (every(240)) {
        const team = pick(TEAMS.filter((t) => t !== p.team));
        this.client.roster.update(id, { team });
        this.client.track({ type: 'team_change', externalId: id, payload: { from: p.team ?? null, to: team } });
      }
      if (every(90)) {
        this.client.track({ type: 'quest_complete', externalId: id, payload: { questId: pick(QUESTS), xp: 50 + Math.floor(Math.random() * 450) } });
      }
    }
    this.doors.tick(this.client.roster.list(), 1 / 20);
    const deficit = this.target - this.client.roster.size - this.joining;
    if (deficit > 0) {
      const joins = Math.ceil(deficit / 3);
      for (let i = 0; i < joins; i++) if (Math.random() < 0.7) void this.join();
    }
  }

  /** The game's command handler: the effect happens here, then the client acks. */
  private async execute(cmd: CommandEntry): Promise<CommandOutcome> {
    const user = cmd.target.externalId ?? undefined;
    const here = user !== undefined && this.client.roster.has(user);
    const reason = typeof cmd.payload.reason === 'string' ? cmd.payload.reason : '';
    switch (cmd.type) {
      case 'kick':
        if (!here) return { ok: false, reason: 'player not on this server' };
        this.leave(user, 'kicked');
        log(`${this.id}: kicked ${user}${reason ? ` (${reason})` : ''}`);
        return { ok: true };
      case 'mute':
      case 'unmute':
      case 'freeze':
      case 'teleport':
        if (!here) return { ok: false, reason: 'player not on this server' };
        log(`${this.id}: ${cmd.type} ${user} ${JSON.stringify(cmd.payload)}`);
        return { ok: true };
      case 'message':
        if (user !== undefined && !here) return { ok: false, reason: 'player not on this server' };
        log(`${this.id}: message to ${user ?? 'everyone'}: ${JSON.stringify(cmd.payload.text ?? cmd.payload.message ?? cmd.payload)}`);
        return { ok: true };
      case 'door_set_state':
      case 'refresh_permissions':
        log(`${this.id}: ${cmd.type} ${JSON.stringify(cmd.payload)}`);
        return (await this.doors.access.handleCommand(cmd)) ?? { ok: true };
      case 'custom':
        log(`${this.id}: ${cmd.type} ${JSON.stringify(cmd.payload)}`);
        return { ok: true };
      case 'shutdown':
        log(`${this.id}: shutdown requested; closing this server after the ack`);
        setImmediate(() => void this.shutdown());
        return { ok: true };
      default:
        return { ok: false, reason: `unsupported command type ${cmd.type}` };
    }
  }

  /** Players leave, then the client flushes everything with final heartbeats and stops. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const p of this.client.roster.list()) this.leave(p.externalId, 'server_shutdown');
    await this.client.stop({ flush: true, timeoutMs: 20_000 });
  }
}

interface Totals {
  sent: number;
  ok: number;
  statuses: Record<string, number>;
  latencies: number[];
  eventsTracked: number;
  eventsAcked: number;
  eventsQueued: number;
  eventsDropped: number;
  commandsReceived: number;
  commandsAcked: number;
  commandsFailed: number;
  commandsDuplicate: number;
  players: number;
}

function totals(fleet: SimServer[]): Totals {
  const t: Totals = {
    sent: 0, ok: 0, statuses: {}, latencies: [], eventsTracked: 0, eventsAcked: 0, eventsQueued: 0, eventsDropped: 0,
    commandsReceived: 0, commandsAcked: 0, commandsFailed: 0, commandsDuplicate: 0, players: 0,
  };
  for (const s of fleet) {
    const st: ClientStats = s.client.stats();
    t.sent += st.heartbeatsSent;
    t.ok += st.heartbeatsOk;
    for (const [k, v] of Object.entries(st.heartbeatStatuses)) t.statuses[k] = (t.statuses[k] ?? 0) + v;
    t.latencies.push(...st.latencySamplesMs);
    t.eventsTracked += st.eventsTracked;
    t.eventsAcked += st.eventsAcked;
    t.eventsQueued += st.eventsQueued;
    t.eventsDropped += st.eventsDropped + st.eventsRejected;
    t.commandsReceived += st.commandsReceived;
    t.commandsAcked += st.commandsAcked;
    t.commandsFailed += st.commandsFailed;
    t.commandsDuplicate += st.commandsDuplicate;
    t.players += s.client.roster.size;
  }
  return t;
}

async function resolveGame(db: Db, opts: Options): Promise<{ gameId: string; key: string; intervalSeconds: number; created: boolean }> {
  if (opts.key) {
    const prefix = parseServerKey(opts.key)!.prefix;
    const row = await db.apiKey.findUnique({ where: { prefix }, include: { game: true } });
    if (!row) throw new UsageError(`no key with prefix ${prefix} in the database`);
    return { gameId: row.gameId, key: opts.key, intervalSeconds: row.game.heartbeatIntervalSeconds, created: false };
  }
  const stamp = new Date().toISOString();
  const ws = await createWorkspace(db, `simulator ${stamp}`);
  const game = await createGame(db, { workspaceId: ws.id, name: `simulated game ${stamp}`, heartbeatIntervalSeconds: opts.intervalSeconds });
  const created = await createKey(db, game.id, [...SCOPES], 'simulator');
  return { gameId: game.id, key: created.key, intervalSeconds: game.heartbeatIntervalSeconds, created: true };
}

interface DbCounts {
  events: number;
  sessions: number;
  sessionsClosed: number;
}

async function countRows(db: Db, gameId: string, serverIds: string[]): Promise<DbCounts> {
  const mine = { gameId, externalServerId: { in: serverIds } };
  const [events, sessions, sessionsClosed] = await Promise.all([
    db.playerEvent.count({ where: mine }),
    db.session.count({ where: mine }),
    db.session.count({ where: { ...mine, closedAt: { not: null } } }),
  ]);
  return { events, sessions, sessionsClosed };
}

const round = (ms: number): number | null => (Number.isFinite(ms) ? Math.round(ms * 10) / 10 : null);

async function run(opts: Options): Promise<number> {
  const config = loadConfig();
  const db = createDb(config.databaseUrl, 2);
  let redis: AppRedis | undefined;
  let nudgeQueue: NudgeQueue | undefined;
  let push: Awaited<ReturnType<typeof attachNudgeImitation>> | undefined;
  try {
    const game = await resolveGame(db, opts);
    const runTag = randomBytes(3).toString('hex');
    if (game.created) {
      redis ??= createRedis(config.redisUrl, { name: 'simulate' });
      // The first players of the first two servers are the VIPs of the armory and the heli spawner.
      const vips = [0, 1].flatMap((server) => [0, 1, 2].map((n) => `p-${runTag}-${server}-${n}`));
      await seedSimulatedDoors({ db, redis, redisPrefix: config.redisPrefix }, game.gameId, vips);
    }
    const prefix = parseServerKey(game.key)!.prefix;
    log(
      `${game.created ? 'created' : 'using'} game ${game.gameId} (interval ${game.intervalSeconds} s), key svc_live_${prefix}.…; ` +
        `${opts.servers} servers × ~${opts.players} players for ${opts.durationSeconds} s against ${opts.url} (run ${runTag})`,
    );
    if (!game.created && opts.intervalSeconds !== 15) log('--interval is ignored with --key (the game keeps its interval)');

    const problems: Record<string, number> = {};
    const setupErrors: (SetupErrorInfo & { server: string })[] = [];
    const fleet: SimServer[] = [];
    for (let i = 0; i < opts.servers; i++) {
      const server: SimServer = new SimServer(runTag, i, opts.players, {
        url: opts.url,
        key: game.key,
        onProblem: (p) => {
          problems[p.kind] = (problems[p.kind] ?? 0) + 1;
          if (problems[p.kind] === 1) log(`${server.id}: ${p.kind}: ${p.message} (further ${p.kind} problems are only counted)`);
        },
        onSetupError: (e) => {
          setupErrors.push({ ...e, server: server.id });
          log(`${server.id}: SETUP ERROR ${e.status} ${e.code}: ${e.message}; ${e.hint}`);
        },
      });
      fleet.push(server);
    }

    // Moderation while the fleet plays (issue #3): random commands through the service, optionally nudged.
    let load: CommandLoad | undefined;
    if (opts.commandsPerMinute > 0) {
      redis ??= createRedis(config.redisUrl, { name: 'simulate' });
      nudgeQueue = new NudgeQueue(redis, config.redisPrefix);
      load = new CommandLoad({ db, redis, redisPrefix: config.redisPrefix, gameId: game.gameId, nudges: nudgeQueue, issuedBy: `simulator:${runTag}` });
    }
    if (opts.nudges && !game.created) log('--nudges is ignored with --key (the game keeps its platform settings)');
    if (opts.nudges && game.created) {
      push = await attachNudgeImitation(db, game.gameId);
      for (const s of fleet) push.subscribe(() => s.client.nudge());
      log(`nudges on: the game publishes to ${push.platform.baseUrl} (the workers must run publish-nudges)`);
    }
    const targets = fleet.map((s) => ({ id: s.id, players: () => (s.stopped ? [] : s.client.roster.list().map((p) => p.externalId)) }));
    const commandsPerTick = (opts.commandsPerMinute / 60) * (TICK_MS / 1000);

    // Servers boot spread over the first interval so their heartbeats do not all land in one instant.
    const startedAt = Date.now();
    const spread = Math.min(game.intervalSeconds, opts.durationSeconds) * 1000;
    const boots = fleet.map((s) =>
      setTimeout(() => {
        if (s.stopped) return;
        s.client.start();
        void s.doors.access.refreshManifest(); // the door manifest on boot (spec: intended client flow)
      }, Math.random() * spread),
    );
    let interrupted = false;
    const onSignal = (): void => {
      if (!interrupted) log('interrupted: stopping the fleet');
      interrupted = true;
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

    let lastProgress = startedAt;
    while (!interrupted && Date.now() - startedAt < opts.durationSeconds * 1000) {
      for (const s of fleet) s.tick();
      for (let n = Math.floor(commandsPerTick) + (Math.random() < commandsPerTick % 1 ? 1 : 0); load && n > 0; n--) await load.issueRandom(targets);
      if (Date.now() - lastProgress >= PROGRESS_MS) {
        lastProgress = Date.now();
        const t = totals(fleet);
        log(
          `t=${Math.round((Date.now() - startedAt) / 1000)}s heartbeats ok ${t.ok}/${t.sent}, players ${t.players}, ` +
            `events tracked ${t.eventsTracked} acked ${t.eventsAcked} queued ${t.eventsQueued}, commands ${t.commandsAcked}/${t.commandsReceived}`,
        );
      }
      await realSleep(TICK_MS - ((Date.now() - startedAt) % TICK_MS));
    }
    for (const b of boots) clearTimeout(b);
    const playedSeconds = Math.round((Date.now() - startedAt) / 1000);
    if (load && !interrupted) log(`waiting (up to one interval) for the ${load.issuedIds.length} issued commands to be acked or failed`);
    const issued = load && (await load.settle(interrupted ? 0 : (game.intervalSeconds + 5) * 1000));

    log('stopping the fleet: players leave, final heartbeats flush the queues');
    await Promise.all(fleet.map((s) => s.shutdown()));
    const t = totals(fleet);
    const expectedOpened = fleet.reduce((n, s) => n + s.sessionsOpened, 0);
    const expectedClosed = fleet.reduce((n, s) => n + s.sessionsClosed, 0);

    // Workers flush Redis streams to Postgres asynchronously: wait (bounded) until the rows catch up.
    const serverIds = fleet.map((s) => s.id);
    const waitStart = Date.now();
    let rows = await countRows(db, game.gameId, serverIds);
    const settled = (c: DbCounts): boolean =>
      c.events === t.eventsAcked && c.sessions === expectedOpened && c.sessionsClosed === expectedClosed;
    while (!settled(rows) && Date.now() - waitStart < opts.waitSeconds * 1000 && !(interrupted && rows.events === t.eventsAcked)) {
      await realSleep(1000);
      rows = await countRows(db, game.gameId, serverIds);
    }
    const waited = Math.round((Date.now() - waitStart) / 100) / 10;

    const eventsMatch = rows.events === t.eventsAcked;
    const doors = emptyDoorSummary();
    for (const s of fleet) s.doors.addTo(doors);
    const summary = {
      url: opts.url,
      gameId: game.gameId,
      keyPrefix: prefix,
      run: runTag,
      servers: opts.servers,
      playersPerServer: opts.players,
      durationSeconds: playedSeconds,
      intervalSeconds: game.intervalSeconds,
      heartbeats: { sent: t.sent, ok: t.ok, byStatus: t.statuses },
      latencyMs: { p50: round(percentile(t.latencies, 50)), p99: round(percentile(t.latencies, 99)), max: round(t.latencies.reduce((m, x) => Math.max(m, x), Number.NEGATIVE_INFINITY)), samples: t.latencies.length },
      events: { tracked: t.eventsTracked, sent: t.eventsAcked, unsent: t.eventsQueued, dropped: t.eventsDropped, rowsInPostgres: rows.events, match: eventsMatch },
      sessions: { opened: rows.sessions, closed: rows.sessionsClosed, expectedOpened, expectedClosed },
      commands: {
        received: t.commandsReceived,
        acked: t.commandsAcked,
        failed: t.commandsFailed,
        redeliveriesSkipped: t.commandsDuplicate,
        ...(issued ? { issued, nudgesPublished: push?.platform.accepted.length ?? 0 } : {}),
      },
      bansRefused: fleet.reduce((n, s) => n + s.bansRefused, 0),
      doors,
      problems,
      setupErrors: setupErrors.map((e) => ({ server: e.server, status: e.status, code: e.code, message: e.message })),
      waitedSeconds: waited,
    };

    if (opts.json) {
      process.stdout.write(`${JSON.stringify(summary)}\n`);
    } else {
      const lines = [
        `game ${summary.gameId} (key svc_live_${prefix}.…), ${summary.servers} servers, ${summary.durationSeconds} s, interval ${summary.intervalSeconds} s`,
        `heartbeats   sent ${t.sent}, ok ${t.ok}  ${JSON.stringify(t.statuses)}`,
        `latency      p50 ${summary.latencyMs.p50} ms, p99 ${summary.latencyMs.p99} ms (${t.latencies.length} samples)`,
        `events       sent ${t.eventsAcked}, rows in Postgres ${rows.events} ${eventsMatch ? '(match)' : '(MISMATCH)'}; tracked ${t.eventsTracked}, unsent ${t.eventsQueued}`,
        `sessions     opened ${rows.sessions}, closed ${rows.sessionsClosed} (rosters imply ${expectedOpened} opened, ${expectedClosed} closed)`,
        `commands     received ${t.commandsReceived}, acked ${t.commandsAcked}, failed ${t.commandsFailed}`,
        ...(issued
          ? [
              `moderation   issued ${issued.issued} (refused ${issued.refused}): acked ${issued.acked}, failed ${issued.failed}, expired ${issued.expired}, open ${issued.open}; ` +
                `issue→ack p50 ${issued.issueToAckMs.p50} ms, p99 ${issued.issueToAckMs.p99} ms; nudges ${push?.platform.accepted.length ?? 'off'}`,
            ]
          : []),
        `bans         ${summary.bansRefused} join(s) refused (banned)`,
        `doors        opened ${doors.opened}: allowed ${doors.allowed}, denied ${doors.denied}; answered by ${JSON.stringify(doors.bySource)}; reasons ${JSON.stringify(doors.byReason)}`,
        `waited ${waited} s for Postgres`,
      ];
      if (Object.keys(problems).length) lines.push(`problems     ${JSON.stringify(problems)}`);
      for (const e of setupErrors) lines.push(`SETUP ERROR  ${e.server}: ${e.status} ${e.code} ${e.message}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (!eventsMatch) log(`events sent (${t.eventsAcked}) and rows in Postgres (${rows.events}) differ after ${waited} s`);
    if (rows.sessions !== expectedOpened || rows.sessionsClosed !== expectedClosed) {
      log(`sessions in Postgres (${rows.sessions} opened, ${rows.sessionsClosed} closed) differ from the accepted rosters (${expectedOpened}, ${expectedClosed})`);
    }
    return eventsMatch && t.eventsQueued === 0 && setupErrors.length === 0 ? 0 : 1;
  } finally {
    await Promise.allSettled([nudgeQueue?.close(), push?.platform.stop()]);
    await Promise.allSettled([redis?.quit(), db.$disconnect()]);
  }
}

async function main(): Promise<number> {
  let opts: Options | null;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!opts) {
    console.log(USAGE);
    return 0;
  }
  try {
    return await run(opts);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    console.error(`simulate failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

void main().then((code) => process.exit(code));
