/**
 * Issue 16 "Outage semantics", README "Failure behaviour" › "Dependency outages": with Redis or Postgres
 * unreachable, every request that needs it gets 503 `unavailable` with the error envelope and a
 * Retry-After of 1–5 s (never 500, never a hang); heartbeats with a verified key keep 200 while Postgres
 * is down and what they carried is stored once it returns; /readyz names the dependency that is down;
 * the app recovers alone. The outage is a TCP proxy in front of the shared service (test/support/tcp-proxy.ts)
 * cut and restored, so the shared Redis/Postgres are never stopped. Time-to-503 figures come from
 * scripts/outage-probe.ts, not from assertions here.
 */
import { expect } from 'chai';
import request from 'supertest';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { singleRedisProxy } from '../support/redis-proxy.js';
import { TcpProxy } from '../../scripts/support/tcp-proxy.js';
import { revokeKey } from '../../src/auth/key-service.js';

const HB = '/api/v1/game/heartbeat';

function expectUnavailable(res: request.Response): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(503);
  expect(res.body.error.code).to.equal('unavailable');
  expect(res.body.error.message).to.be.a('string').and.not.match(/at .*\.ts:\d+/);
  expect(res.body.error.requestId).to.equal(res.headers['x-request-id']);
  expect(new Date(res.body.serverTime).toISOString()).to.equal(res.body.serverTime);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).to.be.within(1, 5);
  expect(Number.isInteger(retryAfter)).to.equal(true);
}

/** Repeats `send` until it answers `status` (the client would, honouring Retry-After); gives up after `tries`. */
async function until(send: () => Promise<request.Response>, status: number, tries = 100): Promise<request.Response> {
  let res = await send();
  for (let i = 1; i < tries && res.status !== status; i++) {
    await new Promise((r) => setTimeout(r, 100));
    res = await send();
  }
  return res;
}

describe('dependency outages (fault)', () => {
  describe('Redis unreachable', function () {
    const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    // One proxy stands for one Redis. A Cluster client follows the node addresses the cluster announces
    // (CLUSTER SLOTS), not the proxy's, so this half runs on a single Redis only; a Cluster's outage is
    // test/faults/cluster-failover.fault.ts (a master killed on a private cluster).
    const { single, proxy } = singleRedisProxy(redisUrl);
    let h: Harness;
    let g: TestGame;

    before(async function () {
      if (!single) this.skip();
      await proxy.up();
      h = new Harness({ REDIS_URL: proxy.url(redisUrl) });
      g = await h.game();
      expect((await h.heartbeat(g, heartbeatBody(['p1']))).status).to.equal(200);
    });
    after(async () => {
      if (!single) return;
      await proxy.up().catch(() => undefined);
      await h.close();
      await proxy.down();
    });

    it('answers every game endpoint 503 unavailable with Retry-After, and /readyz names redis', async () => {
      await proxy.down();
      expectUnavailable(await h.heartbeat(g, heartbeatBody(['p1'])));
      expectUnavailable(await h.signed(g, 'post', '/api/v1/game/doors/check', { doorKey: 'lounge', externalId: 'p1' }));
      expectUnavailable(await h.signed(g, 'post', '/api/v1/game/bans/check', { externalId: 'p1', externalServerId: 'server-1' }));
      const ready = await request(h.app).get('/readyz');
      expectUnavailable(ready);
      expect(ready.body).to.deep.include({ status: 'unavailable', dependencies: { redis: 'down', postgres: 'up' } });
    });

    it('recovers alone when Redis returns', async () => {
      await proxy.up();
      const res = await until(() => h.heartbeat(g, heartbeatBody(['p1'])), 200);
      expect(res.status).to.equal(200);
      const ready = await request(h.app).get('/readyz');
      expect(ready.body).to.deep.include({ status: 'ready', dependencies: { redis: 'up', postgres: 'up' } });
    });
  });

  describe('Postgres unreachable', () => {
    const dbUrl = process.env.DATABASE_URL!;
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(dbUrl).port || 5432));
    let h: Harness;
    let warm: TestGame;
    let cold: { key: string; secret: string };
    let revoked: { key: string; secret: string; keyPrefix: string };
    const during: ReturnType<typeof event>[] = [];

    before(async () => {
      await proxy.up();
      h = new Harness({ DATABASE_URL: proxy.url(dbUrl) });
      warm = await h.game();
      cold = await h.key(warm.gameId);
      revoked = await h.key(warm.gameId);
      await revokeKey(h.db, h.redis, h.keySpace, revoked.keyPrefix);
      // Verifies and caches the warm key; the cold one has never been seen by this process.
      expect((await h.heartbeat(warm, heartbeatBody(['p1']))).status).to.equal(200);
    });
    after(async () => {
      await proxy.up().catch(() => undefined);
      await h.close();
      await proxy.down();
    });

    it('keeps heartbeats of a verified key at 200, verifies a key never seen here from its Redis record, answers an unknown key 503', async () => {
      await proxy.down();
      for (let i = 0; i < 5; i++) {
        const ev = event('kill', { externalId: 'p1' });
        const res = await h.heartbeat(warm, heartbeatBody(['p1'], { events: [ev] }));
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        during.push(ev);
      }
      // Never verified by this process: its Redis record (written when it was created) stands in for Postgres.
      const res = await h.signed(cold, 'post', HB, heartbeatBody(['p2']));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.config.heartbeatIntervalSeconds).to.equal(20);
      // Revoked before the outage and never seen here: its record says so.
      const refused = await h.signed(revoked, 'post', HB, heartbeatBody(['p3']));
      expect(refused.status, JSON.stringify(refused.body)).to.equal(401);
      expect(refused.body.error.code).to.equal('revoked_key');
      // A prefix Redis has no record of may be a key created a moment ago: 503, not 401.
      const unknown = { key: `svc_live_${'z'.repeat(12)}.${'A'.repeat(43)}`, secret: 'A'.repeat(43) };
      expectUnavailable(await h.signed(unknown, 'post', HB, heartbeatBody(['p2'])));
      const ready = await request(h.app).get('/readyz');
      expect(ready.status).to.equal(200);
      expect(ready.body).to.deep.include({ status: 'degraded', dependencies: { redis: 'up', postgres: 'down' } });
      const full = await request(h.app).get('/readyz?full=1');
      expectUnavailable(full);
      expect(full.body).to.deep.include({ status: 'unavailable', dependencies: { redis: 'up', postgres: 'down' } });
    });

    it('recovers alone and stores everything answered 200 during the outage', async () => {
      await proxy.up();
      const res = await until(() => h.signed(cold, 'post', HB, heartbeatBody(['p2'])), 200);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      await h.flush(warm.gameId);
      const stored = await h.db.playerEvent.findMany({ where: { gameId: warm.gameId, eventId: { in: during.map((e) => e.eventId) } } });
      expect(stored.map((r) => r.eventId).sort()).to.deep.equal(during.map((e) => e.eventId).sort());
    });
  });
});
