/** The quota and throttle key families stay under the game's hash tag (src/store/keys.ts), TTLs beside them. */
import { expect } from 'chai';
import { THROTTLE_COUNT_TTL_SECONDS, THROTTLE_HISTORY_MINUTES } from '../../src/store/keys.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';

describe('quota and throttle keys', () => {
  it('per-game families share the {g:<gameId>} tag; the throttled-games index is global', () => {
    const k = new KeySpace('p').game('G1');
    for (const name of [k.rateWindow('hb', 123, 'kid:srv'), k.rateWindow('door', 9, 'kid:u:d:1:0.0'), k.throttledInMinute(456)]) {
      expect(name.startsWith('p:{g:G1}:rl:')).to.equal(true, name);
    }
    expect(k.throttledInMinute(456)).to.equal('p:{g:G1}:rl:429:456');
    expect(new KeySpace('p').global.throttledGames()).to.equal('p:throttled-games');
  });

  it('throttle counts outlive the history the health check reads', () => {
    expect(THROTTLE_COUNT_TTL_SECONDS).to.be.greaterThan(THROTTLE_HISTORY_MINUTES * 60);
  });
});
