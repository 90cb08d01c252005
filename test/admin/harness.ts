/**
 * Shared helpers of the operator CLI tests: run `scripts/admin.ts` as a real subprocess against the test
 * database and a random Redis prefix, and clean up what a test created.
 *
 * The CLI runs under the project's Node 24 (`node_modules/.bin/node`), whatever Node runs mocha: the
 * argon2 native module is built for it. For the same reason these tests never import argon2 (or modules
 * that do, such as key-service and game-service) in-process; {@link verifyArgon2} runs in a subprocess.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { createDb, type Db } from '../../src/store/prisma.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { parseRedisUrl } from '../../src/store/redis.js';
import { deleteKeys } from '../support/redis-keys.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/gis_test';
export const TEST_REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const NODE = path.join(ROOT, 'node_modules/.bin/node');
/** A CLI run is a Node process compiling the CLI with tsx: several seconds each on a busy 2-core machine. */
const SPAWN_TIMEOUT_MS = 60_000;

/** Outcome of one CLI run. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A Redis key prefix no other test uses (`gistest-<12 hex>`, fits REDIS_PREFIX's 32 characters). */
export function randomPrefix(): string {
  return `gistest-${randomBytes(6).toString('hex')}`;
}

function run(args: string[], env: Record<string, string>, stdin?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), SPAWN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin ?? '');
  });
}

/**
 * Runs `gis-admin <args>` with the test database and `redisPrefix`, `stdin` piped in (empty when
 * omitted); resolves when the process has exited.
 */
export function runAdmin(args: string[], redisPrefix: string, env: Record<string, string> = {}, stdin?: string): Promise<CliRun> {
  return run(
    ['--import', 'tsx', 'scripts/admin.ts', ...args],
    { DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: redisPrefix, LOG_LEVEL: 'warn', ...env },
    stdin,
  );
}

/** Asserts a successful `--json` run (exit 0, one JSON object and nothing else on stdout) and returns it. */
export function okJson<T>(r: CliRun): T {
  if (r.code !== 0) throw new Error(`admin exited ${r.code}: ${r.stderr.trim()}`);
  const lines = r.stdout.split('\n').filter(Boolean);
  if (lines.length !== 1) throw new Error(`expected one stdout line, got ${lines.length}: ${r.stdout}`);
  const value: unknown = JSON.parse(lines[0]!);
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`stdout is not a JSON object: ${r.stdout}`);
  return value as T;
}

/** True when `hash` is an argon2 hash of `secret` (checked by a Node 24 subprocess). */
export async function verifyArgon2(hash: string, secret: string): Promise<boolean> {
  const script = `import argon2 from 'argon2';
let input = ''; for await (const c of process.stdin) input += c;
const { hash, secret } = JSON.parse(input);
process.stdout.write(String(await argon2.verify(hash, secret)));`;
  const r = await run(['--input-type=module', '-e', script], {}, JSON.stringify({ hash, secret }));
  if (r.code !== 0) throw new Error(`argon2 verify failed: ${r.stderr}`);
  return r.stdout === 'true';
}

/** A Prisma client on the test database. */
export function createTestDb(): Db {
  return createDb(TEST_DATABASE_URL, 2);
}

/** A plain Redis client for seeding and inspecting. */
export function createTestRedis(): Redis {
  return connectTestRedis({ maxRetriesPerRequest: 2 });
}

/** A client of TEST_REDIS_URL with `options`: an ioredis Cluster when it is `redis+cluster://…` (issue #17). */
function connectTestRedis(options: RedisOptions): Redis {
  const target = parseRedisUrl(TEST_REDIS_URL);
  return target.kind === 'cluster' ? (new Cluster(target.nodes, { redisOptions: options }) as unknown as Redis) : new Redis(TEST_REDIS_URL, options);
}

/** Creates a workspace and a game directly in Postgres (no audit rows); returns their ids. */
export async function createWorkspaceAndGame(db: Db, label: string, heartbeatIntervalSeconds = 20): Promise<{ workspaceId: string; gameId: string }> {
  const ws = await db.workspace.create({ data: { name: `${label} ws` } });
  const game = await db.game.create({ data: { workspaceId: ws.id, name: `${label} game`, heartbeatIntervalSeconds } });
  return { workspaceId: ws.id, gameId: game.id };
}

/**
 * Deletes `workspaceIds` (games, keys and servers cascade) and their audit rows (AuditLog has no foreign
 * key, so it does not cascade).
 */
export async function deleteWorkspaces(db: Db, workspaceIds: string[]): Promise<void> {
  if (!workspaceIds.length) return;
  const games = await db.game.findMany({ where: { workspaceId: { in: workspaceIds } }, select: { id: true } });
  await db.auditLog.deleteMany({ where: { OR: [{ workspaceId: { in: workspaceIds } }, { gameId: { in: games.map((g) => g.id) } }] } });
  await db.auditChainHead.deleteMany({ where: { workspaceId: { in: workspaceIds } } });
  await db.workspace.deleteMany({ where: { id: { in: workspaceIds } } });
}

/** Deletes every Redis key under `prefix:`. */
export async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<void> {
  await deleteKeys(redis, `${prefix}:*`);
}

/** Subscribes to the auth invalidation channel of `prefix`; `messages` fills as they arrive. */
export async function listenInvalidations(prefix: string): Promise<{ messages: string[]; waitFor(message: string, timeoutMs?: number): Promise<void>; close(): Promise<void> }> {
  const sub = connectTestRedis({ maxRetriesPerRequest: null });
  const messages: string[] = [];
  sub.on('message', (_ch: string, m: string) => messages.push(m));
  await sub.subscribe(new KeySpace(prefix).global.authChannel());
  return {
    messages,
    async waitFor(message, timeoutMs = 2000) {
      const until = Date.now() + timeoutMs;
      while (!messages.includes(message)) {
        if (Date.now() > until) throw new Error(`no "${message}" on the invalidation channel (got ${JSON.stringify(messages)})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      sub.disconnect();
    },
  };
}
