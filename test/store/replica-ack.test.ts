/**
 * Issue #17 "Failover", REDIS_WAIT_REPLICAS (src/store/replica-ack.ts): with the setting on, a heartbeat
 * answers 200 only once a replica has its write; with the replica gone it answers 503 `unavailable` with
 * Retry-After (never a 200 that is not replicated), and the client's resend is stored once. Runs a private
 * master and replica (test/support/private-redis.ts) through the real app with auto-pipelining, as the API
 * runs them; the shared Redis is not touched.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Harness, event, heartbeatBody, type TestGame } from '../support/harness.js';
import { PrivateRedis } from '../support/private-redis.js';

/** Waits until the replica on `port` reports its link to the master up (its first sync done). */
async function linkUp(port: number): Promise<void> {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });
  try {
    for (let i = 0; i < 400; i++) {
      if ((await client.info('replication')).includes('master_link_status:up')) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`replica on ${port} did not sync within 20 s`);
  } finally {
    client.disconnect();
  }
}

describe('WAIT-backed acknowledgement: REDIS_WAIT_REPLICAS (issue #17)', function () {
  this.timeout(60_000);
  let master: PrivateRedis;
  let replica: PrivateRedis;
  let h: Harness;
  let g: TestGame;

  before(async () => {
    master = await PrivateRedis.create({ appendonly: false });
    replica = await PrivateRedis.create({ appendonly: false, extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
    await linkUp(replica.port);
    h = new Harness({ REDIS_URL: master.url, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '300' });
    g = await h.game();
  });

  after(async () => {
    await h?.close();
    await replica?.destroy();
    await master?.destroy();
  });

  /** The raw entries of the game's event stream as the replica holds them, right now. */
  async function onReplica(): Promise<string> {
    const client = new Redis({ host: '127.0.0.1', port: replica.port });
    try {
      return JSON.stringify(await client.xrange(h.keySpace.game(g.gameId).eventStream(), '-', '+'));
    } finally {
      client.disconnect();
    }
  }

  it('answers 200 only once the replica holds the heartbeat', async () => {
    for (let i = 0; i < 5; i++) {
      const e = event('probe');
      const res = await h.heartbeat(g, heartbeatBody(['p1'], { events: [e] }));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      // Read on the replica at once, without waiting: WAIT already had it confirm the write.
      expect(await onReplica()).to.include(e.eventId);
    }
  });

  it('answers 503 unavailable with Retry-After while the replica is down, and stores the resend once', async () => {
    await replica.kill();
    const e = event('probe');
    const refused = await h.heartbeat(g, heartbeatBody(['p1'], { events: [e] }));
    expect(refused.status).to.equal(503);
    expect(refused.body.error.code).to.equal('unavailable');
    expect(Number(refused.headers['retry-after'])).to.be.within(1, 5);

    await replica.start();
    await linkUp(replica.port);
    // The client kept the event and sends it again (re-signed): now replicated, so 200.
    const resent = await h.heartbeat(g, heartbeatBody(['p1'], { events: [e] }));
    expect(resent.status, JSON.stringify(resent.body)).to.equal(200);
    expect(await onReplica()).to.include(e.eventId);
    // The master ran both scripts (the 503 was about the replica, not the write): the eventId makes the
    // second copy a no-op in Postgres.
    await h.flush(g.gameId);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, eventId: e.eventId } })).to.equal(1);
  });

  it('answers 503 while the replica lags behind (its process stopped), 200 once it has caught up', async () => {
    const pid = replica.pid!;
    process.kill(pid, 'SIGSTOP'); // connected, but confirms nothing
    const e = event('probe');
    try {
      const refused = await h.heartbeat(g, heartbeatBody(['p1'], { events: [e] }));
      expect(refused.status).to.equal(503);
      expect(refused.body.error.code).to.equal('unavailable');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const resent = await h.heartbeat(g, heartbeatBody(['p1'], { events: [e] }));
    expect(resent.status, JSON.stringify(resent.body)).to.equal(200);
    expect(await onReplica()).to.include(e.eventId);
  });

  it('does not wait for a heartbeat that stored nothing (a replay is refused 409 at once)', async () => {
    await replica.kill();
    try {
      const body = heartbeatBody(['p1']);
      const ts = Math.floor(Date.now() / 1000);
      const first = await h.heartbeat(g, body, { timestamp: ts });
      expect(first.status).to.equal(503); // stored on the master, not confirmed
      const replay = await h.heartbeat(g, body, { timestamp: ts });
      expect(replay.status).to.equal(409);
    } finally {
      await replica.start();
      await linkUp(replica.port);
    }
  });
});
