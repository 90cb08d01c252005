/**
 * scripts/bench/replay-claims.ts — what one replay claim costs Redis as a game's claim rate grows
 * (issue #32 item 2; src/store/lua/lib/replay-claim.ts; docs/benchmarks.md; not a test).
 *
 * Usage:  npm run bench:replay -- [--per-bucket 1000,20000,60000] [--claims 20000] [--json]
 *
 * A claim checks the six 120 s buckets a signature could have been claimed in, so its cost depends on
 * how many claims those buckets hold: a game making c signed requests a second holds 120·c per bucket
 * (1,000 servers at ~500 requests a second: 60,000). For each --per-bucket n, against a private Redis
 * (AOF everysec as `services:up` runs it, in a temporary directory):
 *   1. fills the five previous buckets with n claims each and the current one with n/2, through the
 *      real ban-check script (replay claim + quota count: src/limits/ban-check-claim.ts), 5,000 users;
 *   2. makes --claims more claims in the current bucket (50 in flight) between two readings of INFO cpu,
 *      INFO persistence and INFO commandstats;
 *   3. prints per claim: Redis CPU µs (used_cpu_user + used_cpu_sys), EVALSHA µs (commandstats), bytes
 *      appended to the AOF (what replicas receive too; negative when an AOF rewrite ran meanwhile), and
 *      Redis's used_memory after the fill.
 * The private Redis and its directory are removed at the end, also on failure. Timings drift on this
 * machine: compare layouts within one session (docs/benchmarks.md), not across days.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseCli } from '../support/cli-args.js';
import { freePort } from '../support/free-port.js';
import { startLocalRedis, stopLocalRedis } from '../services/redis.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { BanCheckClaim } from '../../src/limits/ban-check-claim.js';
import type { SignedRequest } from '../../src/auth/signed-request.js';
import { REPLAY_BUCKET_SECONDS, REPLAY_BUCKETS_CHECKED } from '../../src/store/keys.js';

const USAGE = 'usage: npm run bench:replay -- [--per-bucket 1000,20000,60000] [--claims 20000] [--json]';
const cli = parseCli(USAGE, {
  options: { 'per-bucket': { type: 'string', default: '1000,20000,60000' }, claims: { type: 'string' }, json: { type: 'boolean', default: false } },
});
const perBucket = cli.values['per-bucket'].split(',').map((s) => Number(s.trim()));
if (!perBucket.length || perBucket.some((n) => !Number.isInteger(n) || n < 2)) cli.fail('--per-bucket must be comma-separated counts ≥ 2');
const claims = cli.number('claims', 20_000, 100, 1_000_000, { integer: true });

/** One --per-bucket step's figures, per claim. */
interface Step {
  perBucket: number;
  redisCpuUs: number;
  evalshaUs: number;
  aofBytes: number;
  usedMemoryMB: number;
}

const BUCKET_MS = REPLAY_BUCKET_SECONDS * 1000;
const USERS = 5000;

async function info(redis: AppRedis): Promise<{ cpuSeconds: number; aofBytes: number; evalshaUsec: number; usedMemory: number }> {
  const text = [await redis.info('cpu'), await redis.info('persistence'), await redis.info('commandstats'), await redis.info('memory')].join('\n');
  const field = (name: string): number => Number(new RegExp(`${name}[:=]([\\d.]+)`).exec(text)?.[1] ?? 0);
  return { cpuSeconds: field('used_cpu_user') + field('used_cpu_sys'), aofBytes: field('aof_current_size'), evalshaUsec: Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(text)?.[1] ?? 0), usedMemory: field('used_memory') };
}

/** Claims `count` fresh signatures at server times from `fromMs` on (1 ms apart), `inFlight` at a time. */
async function claimMany(claim: BanCheckClaim, next: () => SignedRequest, count: number, fromMs: number, inFlight: number): Promise<void> {
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    pending.push(claim.claim(next(), `u${i % USERS}`, fromMs + i).catch(() => {}));
    if (pending.length === inFlight) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
}

async function step(redis: AppRedis, n: number): Promise<Step> {
  await redis.flushall();
  const claim = new BanCheckClaim(redis, new KeySpace('bench-replay'));
  let signature = 0;
  const next = () => ({ key: { keyId: 'key-1', gameId: 'game-1' }, signature: (signature++).toString(16).padStart(64, '0') }) as unknown as SignedRequest;
  // the current bucket's middle; one quota window per minute, so 5,000 users stay within their quota
  const nowMs = Math.floor(Date.now() / BUCKET_MS) * BUCKET_MS + BUCKET_MS / 2;
  for (let b = REPLAY_BUCKETS_CHECKED - 1; b >= 0; b--) {
    await claimMany(claim, next, b === 0 ? n / 2 : n, nowMs - b * BUCKET_MS - BUCKET_MS / 2 + 1, 500);
  }
  const before = await info(redis);
  await claimMany(claim, next, claims, nowMs, 50);
  const after = await info(redis);
  return {
    perBucket: n,
    redisCpuUs: Math.round(((after.cpuSeconds - before.cpuSeconds) * 1e6) / claims * 10) / 10,
    evalshaUs: Math.round(((after.evalshaUsec - before.evalshaUsec) / claims) * 10) / 10,
    aofBytes: Math.round((after.aofBytes - before.aofBytes) / claims),
    usedMemoryMB: Math.round(before.usedMemory / 1e5) / 10,
  };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-bench-replay-'));
  let started = false;
  try {
    const port = await freePort();
    await startLocalRedis({ host: '127.0.0.1', port, dir });
    started = true;
    const redis = createRedis(`redis://127.0.0.1:${port}`);
    const steps: Step[] = [];
    try {
      for (const n of perBucket) steps.push(await step(redis, n));
    } finally {
      redis.disconnect();
    }
    if (cli.values.json) {
      console.log(JSON.stringify({ claims, steps }));
      return;
    }
    console.log(`${claims} claims per step, after ${REPLAY_BUCKETS_CHECKED - 1}.5 buckets of claims; per claim:`);
    console.log('| claims per 120 s bucket | Redis CPU µs | EVALSHA µs | AOF bytes | used_memory after the fill, MB |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const s of steps) console.log(`| ${s.perBucket} | ${s.redisCpuUs} | ${s.evalshaUs} | ${s.aofBytes} | ${s.usedMemoryMB} |`);
  } finally {
    if (started) await stopLocalRedis(dir).catch((err: unknown) => console.error(String(err)));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
