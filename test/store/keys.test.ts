/** Every key of one game shares the `{g:<gameId>}` hash tag (Redis Cluster readiness). */
import { expect } from 'chai';
import { Harness, heartbeatBody, event } from '../support/harness.js';
import { scanKeys } from '../support/redis-keys.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';

describe('redis key families', () => {
  const h = new Harness();
  after(() => h.close());

  it('builds every per-game key under the game hash tag', () => {
    const k = new KeySpace('p').game('G1');
    const names = [k.replayClaims(1), k.replayBucket(1), k.server('s'), k.servers(), k.roster('s'), k.where(), k.eventStream(), k.sessionStream(), k.commandLog(), k.command('c'), k.pendingCommands('s'), k.dispatchedCommands('s'), k.userCommands('u'), k.keysUsed(), k.deadLetters(), k.deadLetterCounts()];
    for (const n of names) expect(n.startsWith('p:{g:G1}:')).to.equal(true, n);
    expect(new Set(names).size).to.equal(names.length);
    expect(new KeySpace('p').global.activeGames()).to.equal('p:active-games');
  });

  it('the heartbeat script writes only keys under the game tag', async () => {
    const g = await h.game();
    await h.heartbeat(g, heartbeatBody(['a', 'b'], { events: [event('join')] }));
    await h.heartbeat(g, heartbeatBody(['a']));
    const found = await scanKeys(h.redis, h.keySpace.scanPattern(`*${g.gameId}*`));
    const base = h.keySpace.game(g.gameId).base;
    expect(found.length).to.be.greaterThan(5);
    for (const key of found) expect(key.startsWith(`${base}:`)).to.equal(true, key);
  });
});
