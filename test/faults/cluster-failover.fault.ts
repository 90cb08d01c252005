/**
 * Issue #17 "Failover", on a private Redis Cluster of 3 masters + 3 replicas (scripts/services/cluster.ts,
 * ports 7004–7009 in a temporary directory, stopped and removed afterwards):
 *
 *  1. REDIS_WAIT_REPLICAS on a Cluster (src/store/replica-ack.ts): a heartbeat's 200 comes only once the
 *     replica of the game's master holds it (read on the replica right after the answer); with that
 *     replica stopped the heartbeat answers 503 `unavailable` with Retry-After.
 *  2. BullMQ's connections survive a reset while the cluster is down (src/store/redis.ts, `forWorker`
 *     Cluster clients without ioredis's ready check). When a worker's blocking read outlives its
 *     deadline, BullMQ's watchdog resets that connection: `RedisConnection.disconnect(true)`, then
 *     `reconnect()`, which awaits the Cluster's `connect()` (bullmq `resetBlockedConnection`). During a
 *     failover the cluster reports `cluster_state:fail` until the replica is promoted, and ioredis's
 *     `connect()` never settles when its ready check fails: the worker waited on it forever and its role
 *     (the flush) stopped until the process restarted (scripts/failover-probe.ts --kill flush: 136 of 194
 *     events answered 200 missing from Postgres). The test puts the cluster in `cluster_state:fail` (a
 *     master and its replica killed), replays that reset on the project's BullMQ connection, which must
 *     settle, and then checks that a worker built on it runs a job once the cluster is back. Without the
 *     fix the reset never settles (the test fails at its 15 s bound).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Queue, RedisConnection, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { clusterInfo, ensureCluster, stopCluster } from '../../scripts/services/cluster.js';
import { waitUntil } from '../../scripts/support/child-process.js';
import { createRedis } from '../../src/store/redis.js';
import { Harness, event, heartbeatBody } from '../support/harness.js';

const BASE_PORT = 7004;

/** Shards of the cluster as CLUSTER SLOTS reports them: slot range, master port, replica ports. */
async function shards(port: number): Promise<{ from: number; to: number; master: number; replicas: number[] }[]> {
  const node = new Redis({ host: '127.0.0.1', port });
  try {
    const rows = (await node.call('CLUSTER', 'SLOTS')) as [number, number, ...[string, number][]][];
    return rows.map(([from, to, master, ...replicas]) => ({ from, to, master: master![1], replicas: replicas.map((r) => r[1]) }));
  } finally {
    node.disconnect();
  }
}

describe('Redis Cluster failover (issue #17)', function () {
  this.timeout(120_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-cluster-failover-'));
  const spec = { replicas: 1, basePort: BASE_PORT, dir };
  let url: string;
  const pidOf = (port: number) => Number(fs.readFileSync(path.join(dir, String(port), 'redis.pid'), 'utf8').trim());

  before(async () => {
    url = (await ensureCluster(spec)).url;
  });

  after(async () => {
    await stopCluster(dir).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('REDIS_WAIT_REPLICAS=1: 200 only with the write on the replica of the game\'s master; 503 with that replica stopped', async () => {
    const h = new Harness({ REDIS_URL: url, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '300' });
    try {
      const g = await h.game();
      const stream = h.keySpace.game(g.gameId).eventStream();
      const slot = calculateSlot(stream);
      // The replica of the game's master, once CLUSTER SLOTS lists it (gossip may lag the sync a moment).
      let replicaPort: number | undefined;
      await waitUntil(async () => {
        replicaPort = (await shards(BASE_PORT)).find((s) => slot >= s.from && slot <= s.to)?.replicas[0];
        return replicaPort !== undefined;
      }, 20_000, 250);
      if (replicaPort === undefined) throw new Error(`CLUSTER SLOTS lists no replica for slot ${slot}`);
      const onReplica = async (): Promise<string> => {
        const replica = new Redis({ host: '127.0.0.1', port: replicaPort });
        try {
          await replica.call('READONLY');
          return JSON.stringify(await replica.xrange(stream, '-', '+'));
        } finally {
          replica.disconnect();
        }
      };

      for (let i = 0; i < 3; i++) {
        const e = event('probe');
        const res = await h.heartbeat(g, heartbeatBody(['p1'], { events: [e] }));
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(await onReplica()).to.include(e.eventId);
      }

      const pid = pidOf(replicaPort);
      process.kill(pid, 'SIGSTOP');
      try {
        const refused = await h.heartbeat(g, heartbeatBody(['p1'], { events: [event('probe')] }));
        expect(refused.status).to.equal(503);
        expect(refused.body.error.code).to.equal('unavailable');
        expect(Number(refused.headers['retry-after'])).to.be.within(1, 5);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      const e = event('probe');
      const again = await h.heartbeat(g, heartbeatBody(['p1'], { events: [e] }));
      expect(again.status, JSON.stringify(again.body)).to.equal(200);
      expect(await onReplica()).to.include(e.eventId);
    } finally {
      await h.close();
    }
  });

  it('a BullMQ connection reset while the cluster is down settles, and its worker runs jobs once the cluster is back', async () => {
    const bull = createRedis(url, { name: 'test-bull', forWorker: true });
    bull.on('error', () => undefined);
    const prefix = `gisfailovertest${process.pid}`;
    const queueName = '{failover-test}';
    const queue = new Queue(queueName, { connection: bull, prefix });
    queue.on('error', () => undefined);
    const done: string[] = [];
    const worker = new Worker(queueName, async (job) => void done.push(String(job.id)), { connection: bull, prefix });
    worker.on('error', () => undefined);
    const blocking = new RedisConnection(bull.duplicate(), { shared: false, blocking: true });
    blocking.on('error', () => undefined);
    try {
      await queue.add('before', {}, { jobId: 'before' });
      expect(await waitUntil(() => done.includes('before'), 20_000)).to.equal(true);

      // cluster_state:fail: the shard that does not hold the queue loses its master and its replica.
      const queueSlot = calculateSlot(queueName);
      let victim: Awaited<ReturnType<typeof shards>>[number] | undefined;
      await waitUntil(async () => {
        victim = (await shards(BASE_PORT)).find((s) => (queueSlot < s.from || queueSlot > s.to) && s.replicas.length > 0);
        return victim !== undefined;
      }, 20_000, 250);
      if (!victim) throw new Error('CLUSTER SLOTS lists no shard with a replica apart from the queue\'s');
      const killed = [victim.master, ...victim.replicas];
      const survivor = [BASE_PORT, BASE_PORT + 1, BASE_PORT + 2, BASE_PORT + 3, BASE_PORT + 4, BASE_PORT + 5].find((p) => !killed.includes(p))!;
      for (const port of killed) process.kill(pidOf(port), 'SIGKILL');
      expect(await waitUntil(async () => (await clusterInfo(survivor)).cluster_state === 'fail', 30_000, 250), 'cluster_state:fail').to.equal(true);

      // What BullMQ's watchdog does to a worker's blocking connection (resetBlockedConnection).
      await blocking.client;
      await blocking.disconnect(true);
      const reconnect = blocking.reconnect().then(
        () => 'resolved',
        () => 'rejected',
      );
      const outcome = await Promise.race([reconnect, new Promise((r) => setTimeout(r, 15_000, 'still pending after 15 s'))]);
      expect(outcome).to.be.oneOf(['resolved', 'rejected']);

      await ensureCluster(spec); // restarts the killed nodes; returns once the cluster is ok and in sync
      await queue.add('after', {}, { jobId: 'after' });
      expect(await waitUntil(() => done.includes('after'), 30_000), 'the job added after the outage ran').to.equal(true);
    } finally {
      await Promise.race([worker.close(true), new Promise((r) => setTimeout(r, 5000))]);
      await Promise.race([queue.close(), new Promise((r) => setTimeout(r, 5000))]);
      await Promise.race([blocking.close(true), new Promise((r) => setTimeout(r, 5000))]);
      bull.disconnect();
    }
  });
});
