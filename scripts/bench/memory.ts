/**
 * `npm run bench:memory`: Redis memory per live server (issue #15 item 5, budget ≤ 4 KiB for a server of
 * 30 players). Builds a steady-state fleet through the services the API uses (no HTTP, no Postgres),
 * then counts what it caused to exist in Redis: MEMORY USAGE of every key under the run's prefix, by key
 * family, and the INFO used_memory delta. Streams (sessions, events, access log) are reported but not
 * counted: the issue excludes the streams backlog, which the flushers drain.
 *
 * State of one server: the heartbeats whose replay claims are still kept, one every `--interval` s for
 * 300 s + margin (src/store/lua/lib/replay-claim.ts: a claim is kept until its timestamp + 300 s + margin; every
 * request here is signed at server time, a well-clocked client); `--joined` of its players (a share, 0–1) joined recently enough that their
 * join-time ban check and bulk door check are still counted (the counters live one window and 10 s), and
 * every player made `--doors` door checks in the door-cache TTL, each decision cached (the door
 * endpoints' normal path). Every request carries its own signature, so each one leaves a replay entry,
 * and every rate-limit subject is counted. The defaults (`--joined 1 --doors 2`: every player just
 * joined and opened two doors) are a join burst, the worst case; `--joined 0.1 --doors 1` is ongoing play
 * (sessions of ~20 min, one door a minute).
 *
 * Usage: npm run bench:memory -- [--servers 100,1000] [--players 30] [--servers-per-game 100]
 *   [--interval 30] [--joined 1] [--doors 2] [--redis-url URL] [--json]
 * Figures depend on the Redis's encoding limits (hash-max-listpack-*): run it against a Redis with the
 * defaults (e.g. a private `redis-server --port 4101 --save ''`) for comparable figures.
 */
import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { clusterMasters, createRedis, type AppRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { HeartbeatService } from '../../src/presence/heartbeat-service.js';
import { DecisionCache } from '../../src/doors/decision-cache.js';
import { contextKey } from '../../src/doors/context-key.js';
import { BanCheckClaim } from '../../src/limits/ban-check-claim.js';
import type { SignedRequest } from '../../src/auth/signed-request.js';
import { REPLAY_MARGIN_SECONDS } from '../../src/store/keys.js';
import { SIGNATURE_WINDOW_SECONDS } from '../../src/auth/signature.js';

/** Options of one measurement; times in seconds. */
export interface FleetShape {
  servers: number;
  players: number;
  serversPerGame: number;
  intervalSeconds: number;
  /** Share (0–1) of the players whose join-time ban check and bulk door check are still counted. */
  joinedShare: number;
  doorChecksPerPlayer: number;
}

/** Bytes and keys of one key family. */
export interface FamilyUsage {
  keys: number;
  bytes: number;
}

/** What {@link census} found under a prefix. */
export interface Census {
  keys: number;
  /** MEMORY USAGE summed over non-stream keys, bytes. */
  bytes: number;
  byFamily: Record<string, FamilyUsage>;
  /** Stream keys (excluded from `bytes`): the backlog the flushers drain. */
  streams: FamilyUsage;
}

/** The door decision window the bench runs the decision cache with (config default `DOOR_DECISION_WINDOW_SECONDS`), s. */
const DOOR_DECISION_WINDOW_SECONDS = 60;
/** The life of a fresh decision (config default `DOOR_CACHE_TTL_SECONDS`), s. */
const DOOR_CACHE_TTL_SECONDS = 300;

/**
 * The family of a key under `prefix`: its suffix after the hash tag (`{g:…}`, `{w:…}`) up to the first
 * variable part, e.g. `server`, `rl:ban`, `doors:dc`, `rq`. Spelled independently of src/store so the
 * same script measures any version of the key layout.
 */
export function familyOf(key: string, prefix: string): string {
  const rest = key.slice(prefix.length + 1).replace(/^\{[gw]:[^}]*\}:?/, '').split(':');
  const first = rest[0] ?? '?';
  if (['rl', 'doors', 'cmd', 'banw', 'bans'].includes(first) && rest.length > 1 && !/^\d+$/.test(rest[1]!)) return `${first}:${rest[1]}`;
  return first;
}

/**
 * MEMORY USAGE (SAMPLES 0: exact) of every key under `prefix`, by {@link familyOf}; stream keys are
 * counted apart. SCAN-based, so it sees keys written by every process.
 */
export async function census(redis: AppRedis, prefix: string): Promise<Census> {
  const out: Census = { keys: 0, bytes: 0, byFamily: {}, streams: { keys: 0, bytes: 0 } };
  // SCAN walks one node: on a Cluster every master is walked (each holds the slots of some families).
  for (const node of clusterMasters(redis)) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${prefix.replace(/[[\]*?\\]/g, '\\$&')}:*`, 'COUNT', 1000);
      cursor = next;
      if (!batch.length) continue;
      const pipe = redis.pipeline();
      for (const k of batch) pipe.type(k).memory('USAGE', k, 'SAMPLES', '0');
      const replies = (await pipe.exec()) ?? [];
      batch.forEach((key, i) => {
        const type = replies[2 * i]?.[1];
        const bytes = Number(replies[2 * i + 1]?.[1] ?? 0);
        out.keys++;
        if (type === 'stream') {
          out.streams.keys++;
          out.streams.bytes += bytes;
          return;
        }
        const f = (out.byFamily[familyOf(key, prefix)] ??= { keys: 0, bytes: 0 });
        f.keys++;
        f.bytes += bytes;
        out.bytes += bytes;
      });
    } while (cursor !== '0');
  }
  return out;
}

function signature(): string {
  return randomBytes(32).toString('hex');
}

function signed(gameId: string, keyId: string): SignedRequest {
  // Only what the replay claim reads: the key's ids, the signature and its timestamp.
  return { key: { keyId, gameId }, signature: signature(), timestampSeconds: Math.floor(Date.now() / 1000) } as unknown as SignedRequest;
}

/**
 * Builds the steady state of `shape` in `keySpace` through the API's own services (see the header).
 * Game ids are `bench-<n>`; one key per game. Runs requests a game at a time, 200 in flight.
 */
export async function buildFleet(redis: AppRedis, keySpace: KeySpace, shape: FleetShape): Promise<void> {
  const heartbeats = new HeartbeatService(redis, keySpace);
  const doors = new DecisionCache(redis, keySpace, DOOR_DECISION_WINDOW_SECONDS);
  const bans = new BanCheckClaim(redis, keySpace);
  const beats = Math.max(1, Math.round((SIGNATURE_WINDOW_SECONDS + REPLAY_MARGIN_SECONDS) / shape.intervalSeconds));
  const pending: Promise<unknown>[] = [];
  const run = async (p: Promise<unknown>) => {
    pending.push(p);
    if (pending.length >= 200) await Promise.all(pending.splice(0));
  };
  for (let s = 0; s < shape.servers; s++) {
    const gameId = `bench-${Math.floor(s / shape.serversPerGame)}`;
    const keyId = `key-${createHash('sha256').update(gameId).digest('hex').slice(0, 21)}`;
    const externalServerId = `srv-${s}`;
    const players = Array.from({ length: shape.players }, (_, i) => ({ externalId: String(1_000_000_000 + s * shape.players + i), username: `player_${s}_${i}`, team: null }));
    const body = { externalServerId, playerCount: players.length, maxPlayers: 40, sdkVersion: 'bench', uptimeSeconds: 600, region: 'eu', players, events: [], acks: [], failures: [] };
    for (let b = 0; b < beats; b++) {
      await run(heartbeats.record({ gameId, keyId, signature: signature(), signedAtSeconds: Math.floor(Date.now() / 1000), heartbeatIntervalSeconds: shape.intervalSeconds, deliverCommands: true, body, nowMs: Date.now() }));
    }
    const joined = Math.round(players.length * shape.joinedShare);
    for (const [i, p] of players.entries()) {
      if (i < joined) {
        await run(bans.claim(signed(gameId, keyId), p.externalId, Date.now()));
        await run(lookupAndStore(doors, { gameId, keyId, mode: 'all', externalId: p.externalId, externalServerId }, []));
      }
      for (let d = 0; d < shape.doorChecksPerPlayer; d++) {
        await run(lookupAndStore(doors, { gameId, keyId, mode: 'one', externalId: p.externalId, doorKey: `door-${d}`, externalServerId }, [`door-${d}`]));
      }
    }
  }
  await Promise.all(pending);
}

/** The context key of a non-member no policy names (src/doors/context-key.ts): the same for every such user. */
const GUEST_CONTEXT_KEY = contextKey(
  { externalId: 'guest', isMember: false, joinedAtMs: null, positionIds: new Set(), directUnitIds: new Set(), unitIds: new Set(), organizationIds: new Set(), clockedIn: false, records: [], operations: [] },
  new Set(),
);

/** One door request as the door service makes it: the lookup, then the fresh decisions cached. */
async function lookupAndStore(doors: DecisionCache, q: { gameId: string; keyId: string; mode: 'one' | 'all'; externalId: string; doorKey?: string; externalServerId: string }, doorKeys: string[]): Promise<void> {
  const nowMs = Date.now();
  const found = await doors.lookup({ ...q, signature: signature(), signedAtSeconds: Math.floor(nowMs / 1000), nowMs });
  // the public decision JSON as door-access-service.ts makes it: a door's default allow
  const json = (doorKey: string) => JSON.stringify({ doorKey, decision: 'allow', reason: 'default_allow', policyId: null, failMode: 'closed', forcedState: 'auto' });
  const fresh = doorKeys.map((doorKey) => ({ doorKey, decision: { expiresAtMs: nowMs + DOOR_CACHE_TTL_SECONDS * 1000, decision: 'allow' as const, json: json(doorKey) } }));
  // every player is a non-member no policy names, as in the simulated fleet: one subject context
  // (src/doors/context-key.ts) shared by all of them
  await doors.store({ gameId: q.gameId, doorsVersion: found.doorsVersion ?? 1, subjectVersion: found.subjectVersion || '0.0', externalId: q.externalId, contextKey: GUEST_CONTEXT_KEY, externalServerId: q.externalServerId, nowMs, fresh, logged: [] });
}

async function usedMemory(redis: AppRedis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? Number.NaN);
}

async function deletePrefix(redis: AppRedis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/[[\]*?\\]/g, '\\$&')}:*`, 'COUNT', 1000);
    cursor = next;
    if (batch.length) await redis.unlink(...batch);
  } while (cursor !== '0');
}

/** One measured fleet: the census and the used_memory delta, per live server. */
export interface Measurement {
  shape: FleetShape;
  census: Census;
  usedMemoryDelta: number;
  perServer: { bytes: number; usedMemory: number; byFamily: Record<string, number> };
}

/** Builds `shape` under a fresh prefix, measures it and deletes it again. */
export async function measure(redis: AppRedis, shape: FleetShape): Promise<Measurement> {
  const prefix = `benchmem-${randomBytes(4).toString('hex')}`;
  const before = await usedMemory(redis);
  try {
    await buildFleet(redis, new KeySpace(prefix), shape);
    const after = await usedMemory(redis);
    const c = await census(redis, prefix);
    const byFamily = Object.fromEntries(Object.entries(c.byFamily).sort((a, b) => b[1].bytes - a[1].bytes).map(([f, u]) => [f, Math.round(u.bytes / shape.servers)]));
    return { shape, census: c, usedMemoryDelta: after - before, perServer: { bytes: Math.round(c.bytes / shape.servers), usedMemory: Math.round((after - before) / shape.servers), byFamily } };
  } finally {
    await deletePrefix(redis, prefix);
  }
}

function report(m: Measurement): string {
  const s = m.shape;
  const lines = [
    `${s.servers} servers × ${s.players} players (${s.serversPerGame} servers per game, heartbeat every ${s.intervalSeconds} s, ${s.joinedShare * 100} % joined recently, ${s.doorChecksPerPlayer} door checks per player)`,
    `  per live server: ${m.perServer.bytes} B by MEMORY USAGE (${m.census.keys - m.census.streams.keys} keys in all), ${m.perServer.usedMemory} B by used_memory delta (includes streams)`,
    `  streams (excluded): ${m.census.streams.keys} keys, ${m.census.streams.bytes} B`,
    '  family                 keys    bytes/server',
  ];
  for (const [f, perServer] of Object.entries(m.perServer.byFamily)) lines.push(`  ${f.padEnd(20)} ${String(m.census.byFamily[f]!.keys).padStart(7)} ${String(perServer).padStart(12)}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      servers: { type: 'string', default: '100,1000' },
      players: { type: 'string', default: '30' },
      'servers-per-game': { type: 'string', default: '100' },
      interval: { type: 'string', default: '30' },
      joined: { type: 'string', default: '1' },
      doors: { type: 'string', default: '2' },
      'redis-url': { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
      json: { type: 'boolean', default: false },
    },
  });
  // no command timeout: MEMORY USAGE of thousands of keys may take longer than the API's 800 ms on a busy machine
  const redis = createRedis(values['redis-url'], { name: 'bench-memory', forWorker: true });
  try {
    const results: Measurement[] = [];
    for (const servers of values.servers.split(',').map(Number)) {
      const shape: FleetShape = { servers, players: Number(values.players), serversPerGame: Number(values['servers-per-game']), intervalSeconds: Number(values.interval), joinedShare: Number(values.joined), doorChecksPerPlayer: Number(values.doors) };
      const m = await measure(redis, shape);
      results.push(m);
      if (!values.json) console.log(report(m));
    }
    if (values.json) console.log(JSON.stringify(results, null, 2));
  } finally {
    redis.disconnect();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
