/** The command key families stay under the game's hash tag (one Cluster slot per game), except the index. */
import { expect } from 'chai';
import type { TestGame } from '../support/harness.js';
import { expireDueCommands } from '../../src/commands/command-expiry.js';
import { admitNudge } from '../../src/commands/nudge-budget.js';
import { beat, deleteCommands, issue, ownPrefixHarness, closeOwnPrefix } from './command-fixtures.js';
import { scanKeys } from '../support/redis-keys.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';

describe('command key families', () => {
  const h = ownPrefixHarness('keys');
  let g: TestGame;
  after(async () => {
    if (g) await deleteCommands(h, [g]);
    await closeOwnPrefix(h);
  });

  it('builds the expiry zset and the nudge log under the game tag, the expiry index globally', () => {
    const k = new KeySpace('p').game('G1');
    for (const name of [k.commandExpiry(), k.nudgeLog()]) expect(name.startsWith('p:{g:G1}:')).to.equal(true, name);
    expect(new KeySpace('p').global.commandExpiryIndex()).to.equal('p:cmd-expiry');
  });

  it('issuing, delivering, expiring and nudging write only keys of the game, plus the expiry index entry', async () => {
    g = await h.game();
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'kick', target: { externalId: 'u1' }, payload: { reason: 'r' }, expiresInSeconds: 5 });
    await issue(h, g, { type: 'freeze', target: { externalId: 'offline' }, expiresInSeconds: 5 });
    await beat(h, g, 'srv-1', ['u1']);
    await admitNudge(h.redis, h.keySpace, g.gameId, Date.now());
    const keys = h.keySpace.game(g.gameId);
    expect(await h.redis.zscore(h.keySpace.global.commandExpiryIndex(), `${g.gameId}:${c.id}`)).to.equal(String(c.expiresAt.getTime()));
    expect(await h.redis.zcard(keys.commandExpiry())).to.equal(2);
    await expireDueCommands(h.redis, h.keySpace, c.expiresAt.getTime() + 1);
    const found = await scanKeys(h.redis, h.keySpace.scanPattern(`*${g.gameId}*`));
    for (const key of found) expect(key.startsWith(`${keys.base}:`)).to.equal(true, key);
    expect(found).to.include.members([keys.command(c.id), keys.nudgeLog(), keys.commandLog()]);
    expect(await h.redis.ttl(keys.command(c.id))).to.be.greaterThan(3600);
  });
});
