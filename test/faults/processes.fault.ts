/**
 * Issue 16 "Fault tests in the project's own suite" (`npm run test:faults`; README "Failure behaviour" ›
 * "Dependency outages"): real API and worker processes (test/support/stack.ts) under signed heartbeat
 * load while a process or a dependency fails. Every test counts stored rows against the events of
 * 200-answered heartbeats. Redis runs as this file's own `redis-server` (free port, `--appendonly yes
 * --appendfsync always`, temp dir), so killing it never touches the shared one; the Postgres outage is
 * a TCP proxy in front of the shared Postgres cut for FAULT_PG_OUTAGE_SECONDS (default 30; CI may shorten).
 */
import { expect } from 'chai';
import { ALL_SCOPES, Harness, event, heartbeatBody, type TestGame } from '../support/harness.js';
import { createKey } from '../../src/auth/key-service.js';
import { PrivateRedis } from '../support/private-redis.js';
import { sign } from '../../src/auth/signature.js';
import { DeadLetters } from '../../src/store/dead-letters.js';
import { Stack } from '../support/stack.js';
import { TcpProxy } from '../../scripts/support/tcp-proxy.js';
import { acceptedEventIds, eventually, sendHeartbeat, startHeartbeat, type Sent } from './fault-load.js';

const PG_OUTAGE_SECONDS = Number(process.env.FAULT_PG_OUTAGE_SECONDS ?? 30);

async function storedEventIds(h: Harness, gameId: string): Promise<Set<string>> {
  const rows = await h.db.playerEvent.findMany({ where: { gameId }, select: { eventId: true } });
  return new Set(rows.map((r) => r.eventId));
}

/** Waits until every accepted event is stored; asserts it, and that no row exists that was never sent. */
async function expectAllStored(h: Harness, gameId: string, sent: Sent[]): Promise<void> {
  const accepted = acceptedEventIds(sent);
  expect(accepted.length).to.be.greaterThan(0);
  await eventually(async () => (await storedEventIds(h, gameId)).size >= accepted.length, 60_000);
  const stored = await storedEventIds(h, gameId);
  const missing = accepted.filter((id) => !stored.has(id));
  expect(missing, `${missing.length} of ${accepted.length} accepted events not stored`).to.deep.equal([]);
  const sentIds = new Set(sent.flatMap((s) => s.eventIds));
  expect([...stored].filter((id) => !sentIds.has(id))).to.deep.equal([]);
  expect(await h.db.playerEvent.count({ where: { gameId } })).to.equal(stored.size);
}

/** Sends `n` heartbeats of `events` events, `parallel` at a time, calling `during(i)` before batch i. */
async function load(origin: string, g: TestGame, n: number, events: number, parallel: number, during?: (batch: number) => Promise<void>): Promise<Sent[]> {
  const sent: Sent[] = [];
  for (let b = 0; b * parallel < n; b++) {
    if (during) await during(b);
    sent.push(...(await Promise.all(Array.from({ length: Math.min(parallel, n - b * parallel) }, (_, i) => sendHeartbeat(origin, g, events, `server-${i}`)))));
  }
  return sent;
}

describe('process faults (npm run test:faults)', function () {
  this.timeout(240_000);
  let redis: PrivateRedis;
  let h: Harness;
  let stack: Stack | null = null;

  before(async () => {
    // AOF fsynced on every write (the default of PrivateRedis): the Redis kill -9 test expects no loss.
    redis = await PrivateRedis.create({ appendfsync: 'always' });
    h = new Harness({ REDIS_URL: redis.url }, { patientRedis: true });
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && stack) console.log(stack.logs());
    await stack?.stop();
    stack = null;
  });
  after(async () => {
    await h.close();
    await redis.destroy();
  });

  it('worker kill -9 mid-flush loses and duplicates nothing', async () => {
    stack = await Stack.start({ env: { REDIS_URL: redis.url } });
    const g = await h.game();
    const s = stack;
    const sent = await load(s.url, g, 120, 20, 8, async (batch) => {
      if (batch % 4 === 3) {
        await Stack.stopChild(s.workers, 'SIGKILL');
        await s.startWorkers();
      }
    });
    expect(sent.filter((x) => x.status !== 200)).to.deep.equal([]);
    await expectAllStored(h, g.gameId, sent);
  });

  it('a poison event (refused by a CHECK constraint) is dead-lettered by the worker process; the other servers\' events under load are stored exactly once', async () => {
    const marker = `poison-${Date.now().toString(36)}`;
    const constraint = `test_fault_${marker.replace(/-/g, '_')}`;
    await h.db.$executeRawUnsafe(`ALTER TABLE "PlayerEvent" ADD CONSTRAINT ${constraint} CHECK ("type" IS DISTINCT FROM '${marker}') NOT VALID`);
    try {
      stack = await Stack.start({ env: { REDIS_URL: redis.url } });
      const g = await h.game();
      const s = stack;
      const poison = event(marker);
      const neighbours = [event('kill'), event('kill')];
      const raw = JSON.stringify(heartbeatBody(['p1'], { externalServerId: 'poisoned', events: [neighbours[0]!, poison, neighbours[1]!] }));
      const ts = String(Math.floor(Date.now() / 1000));
      const sent = await load(s.url, g, 80, 10, 8, async (batch) => {
        if (batch !== 3) return;
        const res = await fetch(`${s.url}/api/v1/game/heartbeat`, {
          method: 'POST',
          headers: { authorization: `Bearer ${g.key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(g.secret, ts, raw), 'content-type': 'application/json' },
          body: raw,
        });
        expect(res.status, await res.text()).to.equal(200);
      });
      expect(sent.filter((x) => x.status !== 200)).to.deep.equal([]);
      const dead = new DeadLetters(h.redis, h.keySpace);
      expect(await eventually(async () => (await dead.summary(g.gameId)).bySource.events >= 1, 60_000)).to.equal(true);
      await expectAllStored(h, g.gameId, [...sent, { status: 200, eventIds: neighbours.map((e) => e.eventId) }]);
      expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, eventId: poison.eventId } })).to.equal(0);
      const [letter] = (await dead.summary(g.gameId, 1, 100_000)).latest;
      expect(letter!.reason).to.match(new RegExp(`^23514: .*${constraint}`));
      expect(JSON.parse(letter!.row)).to.include({ e: poison.eventId });
      expect(await eventually(async () => (await h.redis.xlen(h.keySpace.game(g.gameId).eventStream())) === 0, 20_000)).to.equal(true);
      const workerLines = s.output.filter((l) => l.startsWith('[workers] {')).map((l) => JSON.parse(l.slice(10)) as { message: string });
      expect(workerLines.filter((l) => l.message === 'flush failed' || l.message === 'job failed')).to.deep.equal([]);
      expect(workerLines.filter((l) => l.message === 'rows dead-lettered').length).to.be.at.least(1);
    } finally {
      await h.db.$executeRawUnsafe(`ALTER TABLE "PlayerEvent" DROP CONSTRAINT IF EXISTS ${constraint}`);
    }
  });

  it('API SIGTERM answers the requests in flight, refuses new ones, then exits 0', async () => {
    stack = await Stack.start({ env: { REDIS_URL: redis.url } });
    const g = await h.game();
    // Headers and half of each body are at the server when the signal arrives; the rest follows it.
    const inFlight = Array.from({ length: 20 }, (_, i) => startHeartbeat(stack!.url, g, 10, `server-${i}`));
    await new Promise((r) => setTimeout(r, 500));
    const exit = Stack.stopChild(stack.api, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    const late = await sendHeartbeat(stack.url, g, 1);
    for (const req of inFlight) req.finish();
    const sent = await Promise.all(inFlight.map((req) => req.answered));
    expect(await exit).to.equal(0);
    expect(sent.map((x) => x.status)).to.deep.equal(Array(20).fill(200));
    expect(late.status).to.be.oneOf(['refused', 'reset']);
    await expectAllStored(h, g.gameId, sent);
  });

  it('Redis kill -9 and restart on the same AOF loses nothing answered 200; outage answers 503, never 500', async () => {
    stack = await Stack.start({ env: { REDIS_URL: redis.url } });
    const g = await h.game();
    // Workers off: the accepted events sit in Redis streams, so only the AOF can keep them.
    await Stack.stopChild(stack.workers, 'SIGTERM');
    const before = await load(stack.url, g, 40, 10, 8);
    await redis.kill();
    const during = await load(stack.url, g, 8, 1, 8);
    expect(during.map((x) => x.status)).to.deep.equal(Array(8).fill(503));
    for (const x of during) expect(Number(x.retryAfter)).to.be.within(1, 5);
    // The 503s come at once (no offline queue): keep Redis down past a few reconnect attempts, so the
    // clients see the outage they are to log once, not only the dropped connection.
    await new Promise((r) => setTimeout(r, 1500));
    await redis.start();
    const s = stack;
    expect(await eventually(async () => (await sendHeartbeat(s.url, g, 0)).status === 200, 20_000)).to.equal(true);
    const afterRestart = await load(stack.url, g, 16, 10, 8);
    await stack.startWorkers();
    const sent = [...before, ...during, ...afterRestart];
    expect(sent.filter((x) => x.status !== 200 && x.status !== 503)).to.deep.equal([]);
    await expectAllStored(h, g.gameId, sent);
    // One structured line per connection per state change, not one per reconnect attempt; no raw stacks.
    const api = stack.output.filter((l) => l.startsWith('[api] '));
    expect(api.filter((l) => /^\[api\]\s+at /.test(l))).to.deep.equal([]);
    const downs = api.filter((l) => l.includes('redis connection down')).map((l) => JSON.parse(l.slice(6)) as { connection: string });
    expect(downs.map((d) => d.connection)).to.include('api');
    expect(downs.length).to.equal(new Set(downs.map((d) => d.connection)).size);
  });

  it(`Postgres down ${PG_OUTAGE_SECONDS} s: warm heartbeats 200, keys never seen by the process 200 from their Redis records, a key Redis has no record of 503 with Retry-After, everything stored after`, async () => {
    const dbUrl = process.env.DATABASE_URL!;
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(dbUrl).port || 5432));
    await proxy.up();
    try {
      stack = await Stack.start({ env: { REDIS_URL: redis.url, DATABASE_URL: proxy.url(dbUrl), LOG_LEVEL: 'info' } });
      const g = await h.game();
      const cold = await h.key(g.gameId);
      // Created without its Redis records (as if Redis had lost them): only Postgres knows it.
      const bare = await createKey(h.db, g.gameId, ALL_SCOPES);
      const unrecorded = { key: bare.key, secret: bare.key.split('.')[1]! };
      const warmup = await sendHeartbeat(stack.url, g, 1);
      expect(warmup.status).to.equal(200);
      await proxy.down();
      const sent: Sent[] = [warmup];
      const coldAnswers: Sent[] = [];
      const end = Date.now() + PG_OUTAGE_SECONDS * 1000;
      // A new server id each time: one server heartbeating every 200 ms would meet its rate quota.
      for (let i = 0; Date.now() < end; i++) {
        sent.push(await sendHeartbeat(stack.url, g, 5, `outage-server-${i}`));
        sent.push(await sendHeartbeat(stack.url, cold, 1, `outage-cold-${i}`));
        coldAnswers.push(await sendHeartbeat(stack.url, unrecorded, 1));
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(sent.filter((x) => x.status !== 200).map((x) => x.status)).to.deep.equal([]);
      expect(coldAnswers.length).to.be.greaterThan(0);
      for (const x of coldAnswers) {
        expect(x.status).to.equal(503);
        expect(Number(x.retryAfter)).to.be.within(1, 5);
      }
      await proxy.up();
      const s = stack;
      expect(await eventually(async () => (await sendHeartbeat(s.url, unrecorded, 0)).status === 200, 20_000)).to.equal(true);
      await expectAllStored(h, g.gameId, sent);
      // The workers' failing runs are one line per role for the whole outage, not one per attempt.
      const workerLines = s.output.filter((l) => l.startsWith('[workers] {')).map((l) => JSON.parse(l.slice(10)) as { message: string; role?: string });
      expect(workerLines.filter((l) => l.message === 'job failed')).to.deep.equal([]);
      const failing = workerLines.filter((l) => l.message === 'jobs failing: dependency unavailable').map((l) => l.role);
      expect(failing).to.include('flush-events');
      // A role whose runs alternate (a run with nothing to store completes) logs each change once: never
      // two "failing" lines without a "completing again" between them.
      for (const role of new Set(failing)) {
        const changes = workerLines.filter((l) => l.role === role && /^jobs (failing|completing)/.test(l.message)).map((l) => l.message);
        for (let i = 1; i < changes.length; i++) expect(changes[i], `${role}: ${changes.join(' / ')}`).to.not.equal(changes[i - 1]);
      }
    } finally {
      await stack?.stop();
      stack = null;
      await proxy.down();
    }
  });
});
