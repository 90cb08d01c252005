/**
 * Issue 29 (`npm run test:faults`; README "Failure behaviour", docs/operations.md "Dependency outages"):
 * real API and worker processes (test/support/stack.ts) on this file's own `redis-server`
 * (test/support/private-redis.ts) and a TCP proxy in front of the shared Postgres that is cut and restored
 * (scripts/support/tcp-proxy.ts), so neither shared service is ever stopped.
 *
 * - An API restarted during a Postgres outage verifies known keys from their Redis records: 200, nothing
 *   lost; a revoked key stays 401; a key Redis does not know is 503, not 401.
 * - /readyz of the game listener stays 200 (`degraded`) through the Postgres outage, restart included.
 * - A Redis stopped for 5 s under load: every request, game and console listener alike, is answered
 *   within 2 s (the bound on the worst request), 503 with Retry-After while it is down, 200 after.
 * - The worker process's /metrics shows the events backlog and flush lag growing while Postgres is down
 *   and falling to 0 once it is back, and counts the flush jobs completed and failed.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { PrivateRedis } from '../support/private-redis.js';
import { Stack } from '../support/stack.js';
import { TcpProxy } from '../../scripts/support/tcp-proxy.js';
import { revokeKey } from '../../src/auth/key-service.js';
import { acceptedEventIds, eventually, mixedLoad, sendHeartbeat, timedGet, type Sent } from './fault-load.js';

async function expectAllStored(h: Harness, gameId: string, sent: Sent[]): Promise<void> {
  const accepted = acceptedEventIds(sent);
  expect(accepted.length).to.be.greaterThan(0);
  const count = () => h.db.playerEvent.count({ where: { gameId, eventId: { in: accepted } } });
  await eventually(async () => (await count()) >= accepted.length, 60_000);
  expect(await count(), `of ${accepted.length} accepted events`).to.equal(accepted.length);
  // Exactly once: no row beyond the ones sent.
  const sentIds = new Set(sent.flatMap((s) => s.eventIds));
  const rows = await h.db.playerEvent.findMany({ where: { gameId }, select: { eventId: true } });
  expect(rows.filter((r) => !sentIds.has(r.eventId))).to.deep.equal([]);
  expect(rows.length).to.equal(new Set(rows.map((r) => r.eventId)).size);
}

/** The value of the sample `name{labels}` in a Prometheus text exposition (labels as written, e.g. `stream="events"`), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const head = labels ? `${name}{${labels}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(head));
  return line === undefined ? undefined : Number(line.slice(head.length));
}

describe('outages across restarts, fail-fast Redis, readiness (issue 29)', function () {
  this.timeout(240_000);
  let redis: PrivateRedis;
  let h: Harness;
  let stack: Stack | null = null;

  before(async () => {
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

  it('an API restarted during a Postgres outage answers 200 to known keys, nothing lost; /readyz stays 200 throughout', async () => {
    const dbUrl = process.env.DATABASE_URL!;
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(dbUrl).port || 5432));
    await proxy.up();
    const readiness: (number | 'refused' | 'reset')[] = [];
    let polling = true;
    try {
      stack = await Stack.start({ env: { REDIS_URL: redis.url, DATABASE_URL: proxy.url(dbUrl), LOG_LEVEL: 'info' } });
      const s = stack;
      const g = await h.game();
      // Known before the outage but never used by any API process: only its Redis record can vouch for it.
      const unused = await h.key(g.gameId);
      const revoked = await h.key(g.gameId);
      await revokeKey(h.db, h.redis, h.keySpace, revoked.keyPrefix);
      const sent: Sent[] = [await sendHeartbeat(s.url, g, 2, 'before')];
      expect(sent[0]!.status).to.equal(200);

      await proxy.down();
      const poll = (async () => {
        while (polling) {
          readiness.push((await timedGet(`${s.url}/readyz`)).status);
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      for (let i = 0; i < 5; i++) sent.push(await sendHeartbeat(s.url, g, 2, `during-${i}`));
      // A deploy or a crash halfway through the outage: the new process has an empty memory.
      expect(await Stack.stopChild(s.api, 'SIGTERM')).to.equal(0);
      await s.startApi(); // waits for /readyz 200: ready although Postgres is down
      const afterRestart: Sent[] = [];
      for (let i = 0; i < 20; i++) {
        afterRestart.push(await sendHeartbeat(s.url, g, 2, `after-${i}`));
        afterRestart.push(await sendHeartbeat(s.url, { key: unused.key, secret: unused.secret }, 2, `after-unused-${i}`));
      }
      expect(afterRestart.map((x) => x.status)).to.deep.equal(Array(afterRestart.length).fill(200));
      sent.push(...afterRestart);
      expect((await sendHeartbeat(s.url, revoked, 0)).status).to.equal(401);
      const stranger = { key: `svc_live_${'q'.repeat(12)}.${'B'.repeat(43)}`, secret: 'B'.repeat(43) };
      const unknown = await sendHeartbeat(s.url, stranger, 0);
      expect(unknown.status).to.equal(503);
      expect(Number(unknown.retryAfter)).to.be.within(1, 5);

      const ready = await timedGet(`${s.url}/readyz`);
      expect(ready.status).to.equal(200);
      expect(JSON.parse(ready.body)).to.deep.include({ status: 'degraded', dependencies: { redis: 'up', postgres: 'down', keyRecords: 'synced' } });
      expect((await timedGet(`${s.url}/readyz?full=1`)).status).to.equal(503);
      // On an idle machine the heartbeats above take well under a second: let the poll see a few answers
      // of the restarted process before it stops (a 503 among them still fails the check below).
      const pollUntil = Date.now() + 10_000;
      while (readiness.filter((x) => x === 200).length <= 3 && Date.now() < pollUntil) await new Promise((r) => setTimeout(r, 100));
      polling = false;
      await poll;
      // Every answer of a running process was 200; only the restart's own gap refused connections.
      expect(readiness.filter((x) => x !== 200 && x !== 'refused' && x !== 'reset')).to.deep.equal([]);
      expect(readiness.filter((x) => x === 200).length).to.be.greaterThan(3);

      await proxy.up();
      expect(sent.every((x) => x.status === 200)).to.equal(true);
      await expectAllStored(h, g.gameId, sent);
      const apiLines = s.output.filter((l) => l.startsWith('[api] {')).map((l) => JSON.parse(l.slice(6)) as { message: string });
      expect(apiLines.map((l) => l.message)).to.include('postgres unreachable: verifying keys from their redis records');
    } catch (err) {
      if (stack) console.log(stack.logs(200));
      throw err;
    } finally {
      polling = false;
      await stack?.stop();
      stack = null;
      await proxy.down();
    }
  });

  it('a Redis stopped for 5 s under load: no request on either listener takes 2 s; 503 with Retry-After meanwhile, 200 after', async () => {
    stack = await Stack.start({ env: { REDIS_URL: redis.url } });
    const s = stack;
    const g = await h.game();
    const warmup = await sendHeartbeat(s.url, g, 1);
    expect(warmup.status).to.equal(200);
    // 8 heartbeat senders and 1 console reader, each one request at a time on fresh connections.
    const { results, t0, stop } = mixedLoad(s, g, { senders: 8, pauseMs: 40 });
    await new Promise((r) => setTimeout(r, 1500));
    const downAt = Date.now() - t0;
    await redis.stop();
    await new Promise((r) => setTimeout(r, 5000));
    await redis.start();
    const upAt = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 4000));
    await stop();

    const worst = results.reduce((a, b) => (b.ms > a.ms ? b : a));
    const during = results.filter((x) => x.at > downAt + 1000 && x.at < upAt);
    const firstOk = results.filter((x) => x.kind === 'heartbeat' && x.status === 200 && x.at - x.ms > upAt).reduce((a, b) => Math.min(a, b.at), Infinity);
    console.log(`      ${results.length} requests; worst ${Math.round(worst.ms)} ms (${worst.kind} ${worst.status}); ${results.filter((x) => x.status === 503).length} × 503; ${during.length} answered during the stop; first heartbeat 200 ${Math.round(firstOk - upAt)} ms after Redis answered again`);
    expect(results.filter((x) => x.ms >= 2000).map((x) => `${x.kind} ${x.status} ${Math.round(x.ms)} ms`)).to.deep.equal([]);
    expect(results.filter((x) => typeof x.status !== 'number' || ![200, 503].includes(x.status)).map((x) => `${x.kind} ${x.status}`)).to.deep.equal([]);
    const refused = results.filter((x) => x.kind === 'heartbeat' && x.status === 503);
    expect(refused.length).to.be.greaterThan(10);
    for (const x of refused) expect(Number(x.retryAfter)).to.be.within(1, 5);
    // Recovery: the last second of load is all 200 again.
    const last = results.filter((x) => x.at > upAt + 3000);
    expect(last.length).to.be.greaterThan(5);
    expect(last.filter((x) => x.status !== 200).map((x) => `${x.kind} ${x.status}`)).to.deep.equal([]);
    await expectAllStored(h, g.gameId, [warmup, ...results.filter((x) => x.kind === 'heartbeat').map((x) => ({ status: x.status, eventIds: x.eventIds ?? [] }))]);
  });

  it("the workers' /metrics shows the flush lag and the backlog moving through a Postgres outage", async () => {
    const dbUrl = process.env.DATABASE_URL!;
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(dbUrl).port || 5432));
    await proxy.up();
    try {
      stack = await Stack.start({ env: { REDIS_URL: redis.url, DATABASE_URL: proxy.url(dbUrl) } });
      const s = stack;
      const scrape = async () => {
        const res = await timedGet(`${s.workersMetricsUrl}/metrics`);
        expect(res.status).to.equal(200);
        return res.body;
      };
      const events = (text: string) => ({ backlog: sample(text, 'gis_stream_backlog_entries', 'stream="events"'), lag: sample(text, 'gis_flush_lag_seconds', 'stream="events"') });
      const g = await h.game();
      const sent: Sent[] = [];
      for (let i = 0; i < 5; i++) sent.push(await sendHeartbeat(s.url, g, 3, `m-${i}`));
      expect(await eventually(async () => (sample(await scrape(), 'gis_worker_jobs_processed_total', 'queue="{flush-events}"') ?? 0) > 0, 20_000)).to.equal(true);
      expect(await eventually(async () => events(await scrape()).backlog === 0, 20_000)).to.equal(true);
      const health = await timedGet(`${s.workersMetricsUrl}/healthz`);
      expect(health.status).to.equal(200);
      expect(JSON.parse(health.body)).to.include({ status: 'ok' });

      await proxy.down();
      for (let i = 0; i < 10; i++) {
        sent.push(await sendHeartbeat(s.url, g, 3, `m-down-${i}`));
        await new Promise((r) => setTimeout(r, 200));
      }
      const first = events(await scrape());
      await new Promise((r) => setTimeout(r, 2000));
      const second = events(await scrape());
      expect(first.backlog).to.be.at.least(10);
      expect(second.lag).to.be.greaterThan(first.lag! + 1);
      expect(second.lag).to.be.greaterThan(2);

      await proxy.up();
      expect(await eventually(async () => {
        const now = events(await scrape());
        return now.backlog === 0 && now.lag === 0;
      }, 30_000)).to.equal(true);
      expect(sample(await scrape(), 'gis_worker_jobs_failed_total', 'queue="{flush-events}"')).to.be.greaterThan(0);
      expect(sample(await scrape(), 'gis_dead_letters_total', 'stream="events"')).to.equal(0);
      expect(sent.every((x) => x.status === 200)).to.equal(true);
      await expectAllStored(h, g.gameId, sent);
    } finally {
      await stack?.stop();
      stack = null;
      await proxy.down();
    }
  });
});
