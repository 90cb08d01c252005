/**
 * Issue #17, `npm run services:up -- --cluster` (scripts/services/cluster.ts): a local 3-master Redis
 * Cluster from Debian's redis-server, idempotent, with AOF, and stopped by `down`. Runs a private cluster
 * on ports 7004–7006 in a temporary directory, so it never touches the project's .data/redis-cluster
 * (7001–7003).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { clusterInfo, clusterPorts, ensureCluster, stopCluster } from '../../scripts/services/cluster.js';
import { createRedis } from '../../src/store/redis.js';

const BASE_PORT = 7004;

describe('services:up --cluster (issue #17)', function () {
  this.timeout(120_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-cluster-'));
  const spec = { replicas: 0, basePort: BASE_PORT, dir };
  const ports = clusterPorts(spec);

  after(async () => {
    await stopCluster(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates a 3-master cluster with AOF and prints its redis+cluster:// setting', async () => {
    const { url, message } = await ensureCluster(spec);
    expect(url).to.equal('redis+cluster://127.0.0.1:7004,127.0.0.1:7005,127.0.0.1:7006');
    expect(message).to.include('created, 3 masters').and.to.include(`REDIS_URL=${url}`);
    for (const port of ports) {
      const info = await clusterInfo(port);
      expect(info.cluster_state, `node ${port}`).to.equal('ok');
      expect(info.cluster_known_nodes).to.equal('3');
      const node = new Redis({ host: '127.0.0.1', port });
      expect(await node.config('GET', 'appendonly')).to.deep.equal(['appendonly', 'yes']);
      await node.quit();
    }
  });

  it('is idempotent: a second run keeps the running nodes and creates nothing', async () => {
    const { message } = await ensureCluster(spec);
    expect(message).to.include('ready, 3 masters').and.to.include('nodes 3 running');
  });

  it('serves the service client: keys of different games land on different masters', async () => {
    const client = createRedis((await ensureCluster(spec)).url, { name: 'cluster-test' });
    await new Promise((r) => client.once('ready', r));
    const keys = Array.from({ length: 12 }, (_, i) => `gistest-cluster:{g:${i}}:k`);
    for (const k of keys) await client.set(k, '1', 'EX', 60);
    const perNode = await Promise.all(ports.map(async (port) => {
      const node = new Redis({ host: '127.0.0.1', port });
      const n = (await node.keys('gistest-cluster:*')).length;
      await node.quit();
      return n;
    }));
    expect(perNode.filter((n) => n > 0).length, `keys per node ${perNode.join(', ')}`).to.be.greaterThan(1);
    for (const k of keys) await client.del(k);
    await client.quit();
  });

  it('is stopped by down, and comes back from its nodes.conf on the next up', async () => {
    const stopped = await stopCluster(dir);
    expect(stopped.split('\n')).to.have.length(3);
    expect(stopped).to.include('redis cluster node 7004: stopped local instance');
    const { message } = await ensureCluster(spec);
    expect(message).to.include('nodes 3 restarted');
  });
});
