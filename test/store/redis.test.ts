/**
 * The API's Redis client batches a busy turn's commands into one write (src/store/redis.ts coalesceWrites).
 * A single Redis only: a Cluster client's node sockets are internal to ioredis, so coalescing is off there
 * and these tests are skipped when REDIS_URL names a Cluster.
 */
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { createRedis, MAX_COALESCED_COMMANDS, parseRedisUrl, type AppRedis } from '../../src/store/redis.js';

describe('redis client write coalescing', () => {
  const config = loadConfig();
  let client: AppRedis;
  const key = `${config.redisPrefix}:coalesce-test:${process.pid}`;
  before(async function () {
    if (parseRedisUrl(config.redisUrl).kind === 'cluster') this.skip();
    client = createRedis(config.redisUrl, { name: 'test-coalesce', coalesceWrites: true });
    await client.ping();
  });
  after(async () => {
    if (!client) return;
    await client.del(key);
    await client.quit();
  });

  it('writes a command at once while nothing is in flight', async () => {
    const reply = client.incr(key);
    expect((client.stream).writableCorked).to.equal(0);
    expect(await reply).to.equal(1);
  });

  it('corks the commands sent behind one in flight until the turn ends, and answers each in order', async () => {
    await client.del(key);
    const first = client.incr(key);
    const rest = Array.from({ length: MAX_COALESCED_COMMANDS - 1 }, () => client.incr(key));
    expect((client.stream).writableCorked).to.equal(1);
    await new Promise((r) => setImmediate(r));
    expect((client.stream).writableCorked).to.equal(0);
    expect(await Promise.all([first, ...rest])).to.deep.equal(Array.from({ length: MAX_COALESCED_COMMANDS }, (_, i) => i + 1));
  });

  it(`writes a batch as soon as it holds ${MAX_COALESCED_COMMANDS} commands, and corks the next one anew`, async () => {
    await client.del(key);
    const replies = [client.incr(key)];
    for (let i = 0; i < MAX_COALESCED_COMMANDS; i++) replies.push(client.incr(key));
    expect((client.stream).writableCorked).to.equal(0);
    replies.push(client.incr(key));
    expect((client.stream).writableCorked).to.equal(1);
    replies.push(...Array.from({ length: 300 }, () => client.incr(key)));
    expect(await Promise.all(replies)).to.deep.equal(Array.from({ length: replies.length }, (_, i) => i + 1));
    expect((client.stream).writableCorked).to.equal(0);
  });

  it('leaves other clients alone', async () => {
    const plain = createRedis(config.redisUrl, { name: 'test-plain' });
    try {
      await plain.ping();
      void plain.get(key);
      void plain.get(key);
      expect((plain.stream).writableCorked).to.equal(0);
      await plain.ping();
    } finally {
      await plain.quit();
    }
  });
});
