/** REDIS_URL forms (issue #17, src/store/redis.ts parseRedisUrl; src/config.ts): one Redis or a Redis Cluster. */
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseRedisUrl } from '../../src/store/redis.js';

describe('REDIS_URL: one Redis or a Redis Cluster', () => {
  it('takes redis:// and rediss:// as one Redis, unchanged', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/2')).to.deep.equal({ kind: 'single', url: 'redis://127.0.0.1:6379/2' });
    expect(parseRedisUrl('rediss://u:p@cache.example:6380')).to.deep.equal({ kind: 'single', url: 'rediss://u:p@cache.example:6380' });
  });

  it('takes redis+cluster:// with its seed nodes, default port 6379, and percent-encoded credentials', () => {
    expect(parseRedisUrl('redis+cluster://127.0.0.1:7001,127.0.0.1:7002,[::1]:7003,node-4')).to.deep.equal({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7001 },
        { host: '127.0.0.1', port: 7002 },
        { host: '::1', port: 7003 },
        { host: 'node-4', port: 6379 },
      ],
    });
    expect(parseRedisUrl('redis+cluster://app:s%40cret@10.0.0.1:7000')).to.deep.equal({ kind: 'cluster', nodes: [{ host: '10.0.0.1', port: 7000 }], username: 'app', password: 's@cret' });
  });

  it('refuses a cluster URL without a node or with a node that is not host:port', () => {
    expect(() => parseRedisUrl('redis+cluster://')).to.throw('names no node');
    expect(() => parseRedisUrl('redis+cluster://a:b:c')).to.throw('is not host:port');
  });

  it('is accepted by the typed config; other schemes are not', () => {
    expect(loadConfig({ REDIS_URL: 'redis+cluster://127.0.0.1:7001' }).redisUrl).to.equal('redis+cluster://127.0.0.1:7001');
    expect(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:7001' })).to.throw(ConfigError, 'REDIS_URL');
  });
});
