/**
 * Issue #17, many processes: two API processes and two worker processes (`workers/index.ts --processes
 * 2`, src/runtime/process-fork.ts) on one Redis (run it with REDIS_URL=redis+cluster://… for the Redis
 * Cluster, `npm run services:up -- --cluster`). What is per process must hold across them:
 *   - a key revoked through one process's Redis is refused by the other API process within the
 *     revocation budget (1 s, polled with that deadline: the pub/sub invalidation, not the cache TTL);
 *   - events accepted by either API process are flushed by the two worker processes (one consumer group,
 *     two consumers) into Postgres exactly once: every event sent is a row, and no row more.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { revokeKey } from '../../src/auth/key-service.js';
import { sign } from '../../src/auth/signature.js';
import { freePort } from '../../scripts/support/free-port.js';
import { nodeBinary, startChild, startNodeScript, type ManagedChild } from '../../scripts/support/child-process.js';
import { heartbeatBody, Harness, type TestGame } from '../support/harness.js';

/** Revocation and cache invalidation must reach every process within this (issue #17), in milliseconds. */
const REVOCATION_BUDGET_MS = 1_000;

/** A signed heartbeat from `server` with `events` to the API at `url`; resolves to the status. */
async function heartbeat(url: string, g: TestGame, server: string, events: { eventId: string; type: string; occurredAt: string }[] = []): Promise<number> {
  const raw = JSON.stringify(heartbeatBody([], { externalServerId: server, events }));
  const ts = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${url}/api/v1/game/heartbeat`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${g.key}`, 'X-Service-Timestamp': ts, 'X-Service-Signature': sign(g.secret, ts, raw), 'Content-Type': 'application/json' },
    body: raw,
  });
  await res.arrayBuffer();
  return res.status;
}

describe('many processes: two API processes, two worker processes (issue #17)', function () {
  this.timeout(180_000);
  let h: Harness;
  const apis: { child: ManagedChild; url: string }[] = [];
  let workers: ManagedChild;
  let workersMetrics: string;

  before(async () => {
    h = new Harness();
    const env = { LOG_LEVEL: 'warn', DB_POOL_SIZE: '3', HOST: '127.0.0.1', CONSOLE_PORT: '0' };
    for (const name of ['api-a', 'api-b']) {
      const port = await freePort();
      apis.push({ child: startNodeScript(name, 'src/server.ts', { env: { ...env, PORT: String(port) }, echo: 'none' }), url: `http://127.0.0.1:${port}` });
    }
    const metricsPort = await freePort();
    workersMetrics = `http://127.0.0.1:${metricsPort}`;
    workers = startChild({ name: 'workers', command: nodeBinary(), args: ['--import', 'tsx', 'workers/index.ts', '--processes', '2'], env: { ...env, WORKERS_METRICS_PORT: String(metricsPort) }, echo: 'none' });
    await Promise.all(apis.map((a) => a.child.waitForUrl(`${a.url}/readyz`, 90_000)));
  });

  after(async () => {
    await Promise.all([...apis.map((a) => a.child.stop()), workers?.stop(30_000)]);
    await h?.close();
  });

  it('refuses a key revoked elsewhere in every API process within the revocation budget', async () => {
    const g = await h.game();
    // Both processes verify the key once and then hold it in their in-process caches.
    for (const [i, a] of apis.entries()) expect(await heartbeat(a.url, g, `rev-${i}`)).to.equal(200, a.child.output());
    await revokeKey(h.db, h.redis, h.keySpace, g.keyPrefix);
    const deadline = Date.now() + REVOCATION_BUDGET_MS;
    const refusedBy = new Set<number>();
    for (let n = 0; refusedBy.size < apis.length && Date.now() < deadline; n++) {
      for (const [i, a] of apis.entries()) if (!refusedBy.has(i) && (await heartbeat(a.url, g, `rev-${i}-${n}`)) === 401) refusedBy.add(i);
    }
    expect([...refusedBy].sort(), 'API processes that refused the revoked key before the deadline').to.deep.equal([0, 1]);
  });

  it('stores every event accepted by either API process exactly once, flushed by two worker processes', async () => {
    const g = await h.game();
    const sent: string[] = [];
    for (let n = 0; n < 40; n++) {
      const events = Array.from({ length: 5 }, () => ({ eventId: randomUUID(), type: 'load', occurredAt: new Date().toISOString() }));
      const a = apis[n % apis.length]!;
      expect(await heartbeat(a.url, g, `srv-${n % 4}`, events)).to.equal(200, a.child.output());
      sent.push(...events.map((e) => e.eventId));
    }
    // The workers flush on their schedule: wait until the rows are there (or the test times out).
    let rows: { eventId: string }[] = [];
    while (rows.length < sent.length) {
      rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId }, select: { eventId: true } });
      if (workers.hasStopped) throw new Error(`the worker processes exited:\n${workers.output()}`);
      if (rows.length < sent.length) await new Promise((r) => setTimeout(r, 250));
    }
    expect(rows.map((r) => r.eventId).sort()).to.deep.equal([...sent].sort());
  });

  it('the primary of the two worker processes serves one /metrics aggregating both, and /healthz', async () => {
    const health = (await (await fetch(`${workersMetrics}/healthz`)).json()) as { status: string; processes: number };
    expect(health).to.include({ status: 'ok', processes: 2 });
    const text = await (await fetch(`${workersMetrics}/metrics`)).text();
    const processed = /^gis_worker_jobs_processed_total\{queue="\{flush-events\}"\} (\d+)$/m.exec(text);
    expect(processed, text.slice(0, 2000)).to.not.equal(null);
    expect(Number(processed![1])).to.be.greaterThan(0);
    // Read alike by both processes: aggregated as the maximum, one series per stream, not a sum of two.
    expect(text).to.match(/^gis_stream_backlog_entries\{stream="events"\} \d+$/m);
    expect(text).to.match(/^gis_redis_persistence\{mode="(none|aof-everysec|aof-always|aof-no|rdb|unknown)"\} 1$/m);
  });
});
