/**
 * `createRedis(url, { autoPipelining: true })` batches a tick's commands with ioredis's public
 * auto-pipelining (src/store/redis.ts; the WAIT client of src/store/replica-ack.ts uses it). On a Redis
 * Cluster the option is left off by design (`createCluster`: ioredis builds it on `pipeline()`, which the
 * service's Cluster clients replace), so there the test checks that it is off and replies keep their order.
 */
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { createRedis, parseRedisUrl, type AppRedis } from '../../src/store/redis.js';

describe('redis client auto-pipelining', () => {
  const config = loadConfig();
  let client: AppRedis;
  const key = `${config.redisPrefix}:autopipeline-test:${process.pid}`;
  before(async () => {
    client = createRedis(config.redisUrl, { name: 'test-autopipeline', autoPipelining: true });
    await client.ping();
  });
  after(async () => {
    if (!client) return;
    await client.del(key);
    await client.quit();
  });

  const cluster = parseRedisUrl(config.redisUrl).kind === 'cluster';
  it(cluster ? 'is off on a Cluster client, whose replies still come in order' : 'queues the commands of one tick into one pipeline and answers each in order', async () => {
    await client.del(key);
    const replies = Array.from({ length: 20 }, () => client.incr(key));
    expect(client.autoPipelineQueueSize).to.equal(cluster ? 0 : 20);
    expect(await Promise.all(replies)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('leaves other clients alone', async () => {
    const plain = createRedis(config.redisUrl, { name: 'test-plain' });
    try {
      await plain.ping();
      void plain.get(key);
      expect(plain.autoPipelineQueueSize).to.equal(0);
      await plain.ping();
    } finally {
      await plain.quit();
    }
  });
});
