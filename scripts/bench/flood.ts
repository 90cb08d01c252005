/**
 * scripts/bench/flood.ts — what `npm run bench:auth-flood` and `npm run bench:moderator-flood` share: their
 * flags and set-up (workspace, Redis prefix, API process), the flood sender's loop (scripts/bench/auth-flood-sender.ts, scripts/bench/moderator-flood-sender.ts), the
 * start and stop of a sender process, and the rounds of phases that hold each flooded phase's p99 against
 * the same round's quiet one. Not run directly.
 *
 * The sender protocol: a sender prints `FLOOD START` once it sends (after start-up, so its compilation is
 * not charged to the measured requests) and, on SIGTERM, `FLOOD {"<status>": count, …, "errors": n}`.
 */
import os from 'node:os';
import { percentile } from '@gis/client';
import { loadConfig } from '../../src/config.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { createDb, type Db } from '../../src/store/prisma.js';
import { createWorkspace } from '../../src/games/game-service.js';
import { deleteByPattern } from '../fixtures.js';
import { nodeBinary, startChild, startNodeScript, type ManagedChild } from '../support/child-process.js';
import { parseCli } from '../support/cli-args.js';
import { pacedLoad, type PacedRequest, type PacedResult } from '../support/paced-load.js';

/** A flood bench's flags, its own workspace under its own Redis prefix, and its API process. */
export interface FloodBench {
  /** Seconds measured per phase, measured requests/s, flood requests/s, rounds, unmeasured warm-up seconds. */
  duration: number;
  rate: number;
  floodRate: number;
  rounds: number;
  warmup: number;
  keySpace: KeySpace;
  redis: AppRedis;
  db: Db;
  /** The workspace the bench creates its game in (deleted by {@link FloodBench.close}). */
  workspaceId: string;
  /** Stops the API process if one runs and starts a fresh one (nothing of a key in its cache). */
  restartApi(): Promise<void>;
  /** Stops the API, deletes the workspace and every key under the prefix, closes the connections. */
  close(): Promise<void>;
}

/**
 * Parses the flags both flood benches take (`--duration 20 --rate 50 --flood 200 --rounds 3 --warmup 3
 * --prefix <defaultPrefix>`; usage errors exit 2) and opens the bench: Postgres, Redis under the prefix,
 * a workspace. `apiEnv` gives each API start its environment (ports and the like; REDIS_PREFIX, HOST and
 * LOG_LEVEL are set here), `healthPort` the listener whose /healthz says it is up.
 */
export async function openFloodBench(opts: { script: string; defaultPrefix: string; apiEnv: () => Promise<Record<string, string>>; healthPort: number }): Promise<FloodBench> {
  const cli = parseCli(`usage: npm run ${opts.script} -- [--duration 20] [--rate 50] [--flood 200] [--rounds 3] [--warmup 3] [--prefix ${opts.defaultPrefix}]`, {
    options: {
      duration: { type: 'string' },
      rate: { type: 'string' },
      flood: { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      prefix: { type: 'string', default: opts.defaultPrefix },
    },
  });
  const flags = {
    duration: cli.number('duration', 20, 1, 3600),
    rate: cli.number('rate', 50, 0.1, 100_000),
    floodRate: cli.number('flood', 200, 0.1, 100_000),
    rounds: cli.number('rounds', 3, 1, 100),
    warmup: cli.number('warmup', 3, 0, 600),
  };
  const prefix = cli.values.prefix;
  if (prefix === 'gis') cli.fail('use a dedicated --prefix: its keys are deleted afterwards');
  const config = loadConfig({ ...process.env, REDIS_PREFIX: prefix });
  const keySpace = new KeySpace(config.redisPrefix);
  const redis = createRedis(config.redisUrl, { name: 'bench' });
  const db = createDb(config.databaseUrl, 2);
  const ws = await createWorkspace(db, `${opts.script} ${new Date().toISOString()}`);
  let api: ManagedChild | null = null;
  return {
    ...flags,
    keySpace,
    redis,
    db,
    workspaceId: ws.id,
    async restartApi() {
      await api?.stop();
      api = startNodeScript('api', 'src/server.ts', { env: { ...(await opts.apiEnv()), REDIS_PREFIX: prefix, HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, echo: 'all' });
      await api.waitForUrl(`http://127.0.0.1:${opts.healthPort}/healthz`);
    },
    async close() {
      await api?.stop();
      await db.workspace.delete({ where: { id: ws.id } }).catch(() => undefined);
      await deleteByPattern(redis, keySpace.scanPattern());
      await redis.quit();
      await db.$disconnect();
    },
  };
}

/**
 * The sender process's loop: sends `next()` requests at `rate`/s (open loop, 32 connections) to
 * 127.0.0.1:`port` until SIGTERM, in 1 s slices with fresh connections each, so the flood carries on across
 * a restart of the API (requests sent while it is down count as `errors`); then prints the totals by
 * status and exits the process (code 0).
 */
export async function runFloodSender(port: number, rate: number, next: () => PacedRequest): Promise<never> {
  let stop = false;
  process.once('SIGTERM', () => (stop = true));
  const totals: Record<string, number> = {};
  console.log('FLOOD START');
  while (!stop) {
    const slice = await pacedLoad({ port, rate, duration: 1, connections: 32, stopped: () => stop, next });
    for (const [status, n] of Object.entries(slice.statuses)) totals[status] = (totals[status] ?? 0) + n;
    if (slice.errors) totals.errors = (totals.errors ?? 0) + slice.errors;
  }
  console.log(`FLOOD ${JSON.stringify(totals)}`);
  process.exit(0);
}

/**
 * Starts a sender script (`tsx <script> <args>`) at the lowest CPU priority (nice 19: an attacker's signing
 * and sending runs on the attacker's machine, not the service's, and on a 2-core box an equally ranked
 * sender takes CPU the API needs); resolves once it prints `FLOOD START`.
 */
export async function startFlood(script: string, args: readonly string[]): Promise<ManagedChild> {
  const sender = startChild({ name: 'flood', command: nodeBinary(), args: ['--import', 'tsx', script, ...args], echo: 'none' });
  os.setPriority(sender.proc.pid!, 19);
  await sender.waitForLine(/^FLOOD START$/);
  return sender;
}

/** Stops a sender and returns the statuses its requests got; throws with its output's tail if it printed none. */
export async function stopFlood(sender: ManagedChild): Promise<Record<string, number>> {
  await sender.stop();
  const line = /^FLOOD (\{.*\})$/m.exec(sender.output());
  if (!line) throw new Error(`flood sender failed: ${sender.output().slice(-500)}`);
  return JSON.parse(line[1]!) as Record<string, number>;
}

/** One measured phase: statuses and latency percentiles in ms. */
export interface LatencyLine {
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
}

/** A paced load's statuses and p50/p99/max (ms). */
export function latencyLine(r: PacedResult): LatencyLine {
  const l = r.latenciesMs;
  return { statuses: r.statuses, p50: percentile(l, 50), p99: percentile(l, 99), max: l[l.length - 1] ?? 0 };
}

/** What one phase measured: the measured requests' result, and the flood's statuses (null in the quiet phase). */
export interface PhaseOutcome {
  measured: PacedResult;
  flood: Record<string, number> | null;
}

/** Per phase, its p99 (ms) of each round; per flooded phase, each round's p99 divided by that round's quiet p99. */
export interface FloodRounds<P extends string> {
  p99s: Record<P, number[]>;
  ratios: Record<P, number[]>;
}

/**
 * Runs `rounds` rounds of `phases` (the first is the quiet one every other is held against): interleaving
 * the phases pairs each flooded phase with a quiet one measured minutes apart, not a quarter of an hour
 * (the machine's speed drifts up to 2x). Prints a line per phase and round, naming the measured requests
 * `measuredName` and the flood `floodName`.
 */
export async function runFloodRounds<P extends string>(opts: {
  rounds: number;
  phases: readonly [P, ...P[]];
  measuredName: string;
  floodName: string;
  run: (phase: P) => Promise<PhaseOutcome>;
}): Promise<FloodRounds<P>> {
  const [quiet] = opts.phases;
  const p99s = Object.fromEntries(opts.phases.map((p) => [p, []])) as unknown as Record<P, number[]>;
  const ratios = Object.fromEntries(opts.phases.map((p) => [p, []])) as unknown as Record<P, number[]>;
  for (let round = 1; round <= opts.rounds; round++) {
    for (const phase of opts.phases) {
      const outcome = await opts.run(phase);
      const line = latencyLine(outcome.measured);
      p99s[phase].push(line.p99);
      if (phase !== quiet) ratios[phase].push(line.p99 / (p99s[quiet][round - 1] || 1));
      const flood = outcome.flood ? `; ${opts.floodName} ${JSON.stringify(outcome.flood)}` : '';
      console.log(`round ${round} ${phase}: ${opts.measuredName} ${JSON.stringify(line)}${flood}`);
    }
  }
  return { p99s, ratios };
}

/** The median of `xs` (the lower middle of an even count). */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
}

/** `xs` with two decimals, comma-separated (the per-round ratios of a summary line). */
export function showRatios(xs: readonly number[]): string {
  return xs.map((x) => x.toFixed(2)).join(', ');
}
