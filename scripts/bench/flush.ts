/**
 * scripts/bench/flush.ts — flush throughput from a pre-filled stream, no API running (issue #20; not a test).
 *
 * Usage:  npm run bench:flush -- [--heartbeats 4000] [--servers 500] [--players 30] [--events 5]
 *                                [--batches 100,500,2000] [--prefix gisbenchflush] [--json]
 *
 * For each batch size B of `--batches`:
 *   1. Pre-fills the game's event and session streams with `--heartbeats` heartbeats through the API's own
 *      Redis code (src/presence/heartbeat-service.ts, the `heartbeat` Lua script): `--servers` servers, each
 *      heartbeat with a `--players` roster of which 3 players leave and 3 join from one heartbeat to the
 *      next (session opens and closes) and `--events` events with unique ids; and the access-log stream
 *      with one bulk decision entry (5 doors) per heartbeat, in the shape src/doors/decision-cache.ts writes.
 *   2. Drains each stream in-process with its flusher (events, sessions, access log) at batch size B, one
 *      after the other, and measures per flusher: rows stored per second of wall time, this process's CPU
 *      per row (process.cpuUsage: the flusher's JSON, COPY encoding and driver work) and the Postgres
 *      backends' CPU per row (utime+stime from /proc/<pid>/stat of the connections whose application_name
 *      is this bench's, found in pg_stat_activity). Postgres's background writers (WAL writer,
 *      checkpointer) are not counted.
 * Prints one line per (flusher, batch) and, with --json, the same as one JSON document on stdout.
 *
 * Uses DATABASE_URL (default: the dev database) and REDIS_URL under a dedicated prefix; the fixture workspace
 * (scripts/fixtures.ts) and every key under the prefix are removed afterwards, also on failure. The
 * machine may be shared: figures are only comparable with those taken in the same conditions.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { cleanFixtures, deleteByPattern, playerOf, seedBody, seedFixtures, type SeededGame } from '../fixtures.js';
import { loadConfig } from '../../src/config.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { createDb, type Db } from '../../src/store/prisma.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { StreamConsumer } from '../../src/store/streams.js';
import { HeartbeatService } from '../../src/presence/heartbeat-service.js';
import { flushEvents } from '../../src/events/event-flusher.js';
import { flushSessions } from '../../src/presence/session-flusher.js';
import { flushAccessLog } from '../../src/doors/access-log-flusher.js';
import type { EventEntry } from '../../src/schemas/heartbeat.js';

const { values: args } = parseArgs({
  options: {
    heartbeats: { type: 'string', default: '4000' },
    servers: { type: 'string', default: '500' },
    players: { type: 'string', default: '30' },
    events: { type: 'string', default: '5' },
    batches: { type: 'string', default: '100,500,2000' },
    prefix: { type: 'string', default: 'gisbenchflush' },
    json: { type: 'boolean', default: false },
  },
});
const HEARTBEATS = Number(args.heartbeats);
const SERVERS = Number(args.servers);
const PLAYERS = Number(args.players);
const EVENTS = Number(args.events);
const BATCHES = args.batches.split(',').map(Number);
const APP_NAME = 'gis-bench-flush';
/** Players that leave (and as many that join) from one heartbeat of a server to its next. */
const CHURN = 3;
const DOORS = ['door-a', 'door-b', 'door-c', 'door-d', 'door-e'];

/** One flusher's drain at one batch size. */
interface Measurement {
  flusher: 'events' | 'sessions' | 'access_log';
  batch: number;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /** This process's CPU per row stored, µs. */
  workerCpuUsPerRow: number;
  /** The bench connections' Postgres backends' CPU per row, µs (0 when /proc is not readable). */
  postgresCpuUsPerRow: number;
}

const log = (line: string) => (args.json ? process.stderr : process.stdout).write(`${line}\n`);

/** CPU seconds (user+system) of `pid` from /proc; 0 when it cannot be read (not Linux, other user). */
function procCpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name; clock ticks of 1/100 s.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds so far of every Postgres backend serving this bench's connections, by pid. */
async function backendCpu(db: Db): Promise<Map<number, number>> {
  const rows = await db.$queryRaw<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = ${APP_NAME}`;
  return new Map(rows.map((r) => [r.pid, procCpuSeconds(r.pid)]));
}

function backendCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let s = 0;
  for (const [pid, cpu] of after) s += cpu - (before.get(pid) ?? 0);
  return s;
}

/** Fills the three streams with `HEARTBEATS` heartbeats' worth of entries (see the file header). */
async function prefill(redis: AppRedis, keySpace: KeySpace, game: SeededGame, runTag: string): Promise<void> {
  const heartbeats = new HeartbeatService(redis, keySpace);
  const keys = keySpace.game(game.gameId);
  const rounds = Math.ceil(HEARTBEATS / SERVERS);
  const startMs = Date.now() - rounds * 1000;
  let sent = 0;
  for (let r = 0; r < rounds && sent < HEARTBEATS; r++) {
    const n = Math.min(SERVERS, HEARTBEATS - sent);
    await Promise.all(
      Array.from({ length: n }, async (_, s) => {
        const serverId = `${runTag}-s${s}`;
        const players = Array.from({ length: PLAYERS }, (_, i) => playerOf(serverId, r * CHURN + i));
        const events: EventEntry[] = Array.from({ length: EVENTS }, (_, e) => ({
          eventId: `${runTag}-${r}-${s}-${e}`,
          type: e % 2 ? 'custom_purchase' : 'player_chat',
          externalId: players[e % players.length]!.externalId,
          occurredAt: new Date(startMs + r * 1000).toISOString(),
          payload: { round: r, server: s, text: 'bench event payload' },
        }));
        const nowMs = startMs + r * 1000;
        await heartbeats.record({
          gameId: game.gameId,
          // A key id per round: the per-(key, server) heartbeat quota would refuse a server's 10th heartbeat
          // in a minute, and the bench sends them within seconds.
          keyId: `${game.keyId}-r${r}`,
          signature: randomBytes(16).toString('hex'),
          heartbeatIntervalSeconds: game.heartbeatIntervalSeconds,
          deliverCommands: false,
          body: { ...seedBody(serverId, players), events },
          nowMs,
        });
        const decisions = DOORS.map((doorKey, d) => JSON.stringify({ doorKey, decision: d % 2 ? 'deny' : 'grant', reason: d % 2 ? 'no_policy' : 'policy', policyId: null }));
        await redis.xadd(keys.accessStream(), '*', 'u', players[0]!.externalId, 's', serverId, 'at', String(nowMs), 'v', `[${decisions.join(',')}]`);
      }),
    );
    sent += n;
  }
}

async function drain(db: Db, flusher: Measurement['flusher'], batch: number, run: () => Promise<{ entries: number; rows: number }>): Promise<Measurement> {
  const pgBefore = await backendCpu(db);
  const cpuBefore = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let rows = 0;
  for (;;) {
    const r = await run();
    if (!r.entries) break;
    rows += r.rows;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const pgSeconds = backendCpuSpent(pgBefore, await backendCpu(db));
  const per = (us: number) => (rows ? Math.round((us / rows) * 10) / 10 : 0);
  return { flusher, batch, rows, seconds: Math.round(seconds * 100) / 100, rowsPerSecond: Math.round(rows / seconds), workerCpuUsPerRow: per(cpu.user + cpu.system), postgresCpuUsPerRow: per(pgSeconds * 1e6) };
}

async function main(): Promise<void> {
  const env = { ...process.env, REDIS_PREFIX: args.prefix };
  const config = loadConfig(env);
  const keySpace = new KeySpace(config.redisPrefix);
  const url = new URL(config.databaseUrl);
  url.searchParams.set('application_name', APP_NAME);
  await cleanFixtures({ prefix: args.prefix, env });
  const fx = await seedFixtures({ prefix: args.prefix, servers: 0, env });
  const game = fx.games[0]!;
  const redis = createRedis(config.redisUrl, { name: 'bench-flush' });
  const db = createDb(url.toString(), 2);
  const results: Measurement[] = [];
  const stop = () => void cleanup().finally(() => process.exit(130));
  let cleaned = false;
  async function cleanup(): Promise<void> {
    if (cleaned) return;
    cleaned = true;
    await cleanFixtures({ prefix: args.prefix, workspaceId: fx.workspaceId, env }).catch((err: unknown) => log(`cleanup: ${String(err)}`));
    await deleteByPattern(redis, keySpace.scanPattern()).catch(() => 0);
    await Promise.allSettled([redis.quit(), db.$disconnect()]);
  }
  process.once('SIGINT', stop);
  try {
    log(`bench:flush heartbeats=${HEARTBEATS} servers=${SERVERS} players=${PLAYERS} events=${EVENTS} batches=${BATCHES.join(',')}`);
    for (const batch of BATCHES) {
      const tag = `b${batch}-${randomBytes(3).toString('hex')}`;
      const t0 = Date.now();
      await prefill(redis, keySpace, game, tag);
      log(`prefilled ${HEARTBEATS} heartbeats in ${((Date.now() - t0) / 1000).toFixed(1)} s (batch ${batch})`);
      const consumer = (group: string) => new StreamConsumer(redis, group, 'bench');
      const ev = consumer('flush-events');
      const se = consumer('flush-sessions');
      const ac = consumer('flush-access-log');
      const measured = [
        await drain(db, 'events', batch, async () => {
          const r = await flushEvents(db, ev, keySpace, game.gameId, batch);
          return { entries: r.entries, rows: r.events };
        }),
        await drain(db, 'sessions', batch, async () => {
          const r = await flushSessions(db, se, keySpace, game.gameId, batch);
          return { entries: r.entries, rows: r.opened + r.closed };
        }),
        await drain(db, 'access_log', batch, () => flushAccessLog(db, ac, keySpace, game.gameId, batch)),
      ];
      for (const m of measured) {
        log(`${m.flusher.padEnd(10)} batch=${String(m.batch).padStart(5)} rows=${String(m.rows).padStart(7)} ${String(m.rowsPerSecond).padStart(7)} rows/s  worker ${m.workerCpuUsPerRow} µs/row  postgres ${m.postgresCpuUsPerRow} µs/row  (${m.seconds} s; busy machine)`);
      }
      results.push(...measured);
    }
    if (args.json) process.stdout.write(`${JSON.stringify({ heartbeats: HEARTBEATS, servers: SERVERS, players: PLAYERS, events: EVENTS, results }, null, 2)}\n`);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
