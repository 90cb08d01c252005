/**
 * Issue #15 item 5: the memory census of `npm run bench:memory` on a small fleet. Asserts what exists,
 * not sizes: per-game hashes instead of per-player keys for rate limits, decisions and replay entries,
 * and, past one shard's worth of subjects, listpack-sized shards counted in their family.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { buildFleet, census, familyOf } from '../../scripts/bench/memory.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { scanKeys } from '../support/redis-keys.js';

describe('bench:memory census', () => {
  const h = new Harness();
  after(() => h.close());

  it('names key families after the hash tag', () => {
    expect(familyOf('p:{g:G1}:server:s1', 'p')).to.equal('server');
    expect(familyOf('p:{g:G1}:rl:ban:123:k', 'p')).to.equal('rl:ban');
    expect(familyOf('p:{g:G1}:doors:dc:1:99', 'p')).to.equal('doors:dc');
    expect(familyOf('p:{g:G1}:rl:door:9:k:3', 'p')).to.equal('rl:door');
    expect(familyOf('p:active-games', 'p')).to.equal('active-games');
  });

  it('counts a fleet of 3 servers × 4 players: no key per player', async () => {
    const prefix = `${h.config.redisPrefix}:census`;
    await buildFleet(h.redis, new KeySpace(prefix), { servers: 3, players: 4, serversPerGame: 3, intervalSeconds: 60, joinedShare: 1, doorChecksPerPlayer: 2 });
    const c = await census(h.redis, prefix);
    expect(c.byFamily.server?.keys).to.equal(3);
    expect(c.byFamily.roster?.keys).to.equal(3);
    // one counter hash per (kind, window, key), whatever the number of players; a window may turn mid-run
    for (const f of ['rl:ban', 'rl:bulk', 'rl:door', 'rl:hb']) expect(c.byFamily[f]?.keys).to.be.within(1, 2, f);
    expect(c.byFamily['doors:dc']?.keys).to.be.within(1, 2);
    // a bucket's claim counter and its one shard; a bucket may turn mid-run
    expect(c.byFamily.rq?.keys).to.be.within(2, 4);
    expect(c.bytes).to.equal(Object.values(c.byFamily).reduce((n, f) => n + f.bytes, 0));
    expect(c.streams.keys).to.be.greaterThan(0);
  });

  it('counts shard keys in their family, every counter, decision, user-location and server-ordinal hash stays a listpack, every replay claim set an intset', async () => {
    const prefix = `${h.config.redisPrefix}:census-shards`;
    // 2 servers × 30 players × 2 doors: 60 users, each one door-quota counter (a check counts per user
    // first: src/limits/quotas.ts), one decision pointer and one location, more than one shard holds (40)
    await buildFleet(h.redis, new KeySpace(prefix), { servers: 2, players: 30, serversPerGame: 2, intervalSeconds: 60, joinedShare: 1, doorChecksPerPlayer: 2 });
    const c = await census(h.redis, prefix);
    expect(c.byFamily['rl:door']?.keys).to.be.at.least(2);
    expect(c.byFamily['doors:dc']?.keys).to.be.at.least(2);
    expect(c.byFamily.loc?.keys).to.be.at.least(2);
    expect(Object.keys(c.byFamily).sort()).to.deep.equal(['active-games', 'doors:ctx', 'doors:dc', 'keys-used', 'loc', 'rl:ban', 'rl:bulk', 'rl:door', 'rl:hb', 'roster', 'rq', 'server', 'servers', 'srvn']);
    for (const key of await scanKeys(h.redis, `${prefix}:*`)) {
      const family = familyOf(key, prefix);
      if (family.startsWith('rl:') || family.startsWith('doors:') || family === 'loc') expect(await h.redis.object('ENCODING', key)).to.equal('listpack', key);
      if (family === 'srvn' && (await h.redis.type(key)) === 'hash') expect(await h.redis.object('ENCODING', key)).to.equal('listpack', key);
      if (family === 'rq' && (await h.redis.type(key)) === 'set') expect(await h.redis.object('ENCODING', key)).to.equal('intset', key);
    }
  });
});
