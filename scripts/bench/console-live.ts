/**
 * scripts/bench/console-live.ts — how fast the console's live feed shows a change, and what it costs per
 * open console (not a test).
 *
 * Usage:  npm run bench:console-live -- [--consoles 20] [--changes 50] [--prefix gisbench-live]
 *
 * Starts the console app with its LiveHub in this process (real Redis and Postgres, a dedicated Redis
 * prefix), opens `--consoles` Server-Sent Event streams of one game, then issues `--changes` commands one
 * after another through the commands service (the Lua script appends the issue to the cmdlog stream) and
 * measures, for each, the time from the start of the issue call to the moment every stream has received
 * a `commands` event with it. Prints p50 / p99 / max of that latency, the commands views built per change
 * (1 means N consoles cost the reads of one) and the reader's XREAD calls. Removes its workspace and keys.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config.js';
import { createRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { createDb } from '../../src/store/prisma.js';
import { createGame, createWorkspace } from '../../src/games/game-service.js';
import { issueCommand } from '../../src/commands/command-service.js';
import { createConsoleApp } from '../../src/adapters/console/console-app.js';
import { createConsoleServices } from '../../src/adapters/console/console-services.js';
import { LiveHub } from '../../src/adapters/console/live/live-hub.js';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { deleteByPattern } from '../fixtures.js';
import { parseCli } from '../support/cli-args.js';

const cli = parseCli('usage: npm run bench:console-live -- [--consoles 20] [--changes 50] [--prefix gisbench-live]', { options: { consoles: { type: 'string' }, changes: { type: 'string' }, prefix: { type: 'string', default: 'gisbench-live' } } });
const consoles = cli.number('consoles', 20, 1, 10_000, { integer: true });
const changes = cli.number('changes', 50, 1, 1_000_000, { integer: true });
const prefix = cli.values.prefix;
if (prefix === 'gis') throw new Error('use a dedicated --prefix: its keys are deleted afterwards');

const TOKEN = 'bench-live-operator-token-0123456789';
const config = loadConfig({ ...process.env, REDIS_PREFIX: prefix });
const keySpace = new KeySpace(config.redisPrefix);
const redis = createRedis(config.redisUrl, { name: 'bench' });
const db = createDb(config.databaseUrl, 4);
const ws = await createWorkspace(db, `bench live ${new Date().toISOString()}`);
const game = await createGame(db, { workspaceId: ws.id, name: 'bench live' });
const services = createConsoleServices({ db, redis, keySpace });
const hub = new LiveHub({ db, redis, keySpace, createReader: () => createRedis(config.redisUrl, { name: 'bench-live', forWorker: true }), refreshMs: 3_600_000 });
const app = createConsoleApp({ services, token: TOKEN, metrics: new Registry(), openapi: buildOpenApiDocument(), live: hub });
const server = await new Promise<http.Server>((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const port = (server.address() as AddressInfo).port;

/** Per stream: command id → when its first `commands` event carrying it arrived (performance.now()). */
const seen: Map<string, number>[] = [];
let onEvent: () => void = () => undefined;
const requests: http.ClientRequest[] = [];
await Promise.all(
  Array.from({ length: consoles }, () => {
    const mine = new Map<string, number>();
    seen.push(mine);
    return new Promise<void>((ready) => {
      const req = http.get({ port, path: `/console/api/games/${game.id}/live/stream`, headers: { Authorization: `Bearer ${TOKEN}` } }, (res) => {
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = performance.now();
          buffer += chunk;
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            if (!block.includes('event: commands')) continue;
            ready();
            const data = block.split('\n').find((l) => l.startsWith('data: '))!.slice(6);
            for (const c of (JSON.parse(data) as { commands: { id: string }[] }).commands) if (!mine.has(c.id)) mine.set(c.id, at);
            onEvent();
          }
        });
      });
      requests.push(req);
    });
  }),
);

const latencies: number[] = [];
const issueMs: number[] = [];
const buildsBefore = hub.stats().builds.commands;
const readsBefore = hub.stats().reads;
for (let n = 0; n < changes; n++) {
  const t0 = performance.now();
  const c = await issueCommand({ db, redis, keySpace }, { gameId: game.id, type: 'kick', payload: { reason: `bench ${n}` }, target: { externalId: `user-${n}` }, issuedBy: 'bench' });
  issueMs.push(performance.now() - t0);
  await new Promise<void>((resolve) => {
    const check = () => {
      if (seen.every((m) => m.has(c.id))) resolve();
    };
    onEvent = check;
    check();
  });
  latencies.push(Math.max(...seen.map((m) => m.get(c.id)!)) - t0);
}
const builds = hub.stats().builds.commands - buildsBefore;
const reads = hub.stats().reads - readsBefore;
latencies.sort((a, b) => a - b);
issueMs.sort((a, b) => a - b);
const q = (p: number, xs = latencies) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(1);
console.log(`consoles ${consoles}, changes ${changes}: start of the issue call → every console has it p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${latencies.at(-1)!.toFixed(1)} ms (the issue call itself: p50 ${q(0.5, issueMs)} ms)`);
console.log(`commands views built ${builds} (${(builds / changes).toFixed(2)} per change, whatever the number of consoles); XREAD calls ${reads}`);
console.log(`BENCH console-live consoles=${consoles} changes=${changes} p50_ms=${q(0.5)} p99_ms=${q(0.99)} builds_per_change=${(builds / changes).toFixed(2)}`);

for (const r of requests) r.destroy();
await hub.close();
await new Promise((r) => server.close(r));
await services.close();
await db.command.deleteMany({ where: { gameId: game.id } });
await db.auditLog.deleteMany({ where: { workspaceId: ws.id } });
await db.auditChainHead.deleteMany({ where: { workspaceId: ws.id } });
await db.workspace.delete({ where: { id: ws.id } });
await deleteByPattern(redis, keySpace.scanPattern());
await redis.quit();
await db.$disconnect();
