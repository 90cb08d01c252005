/**
 * Quota counter fields (src/store/lua/lib/quota.lua `countSubject`; issue #32 item 4): a subject's field
 * is 2⁴⁸ + the first 48 bits of its SHA-1 in decimal (an integer in a listpack), and a window's hash that
 * still holds fields of the form written before 2026-11-29 (12 hex digits: a rolling deploy) splits both
 * forms by their own hash without losing a count. Server time is passed explicitly: no waiting.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { BanCheckClaim } from '../../src/limits/ban-check-claim.js';
import { MINUTE_WINDOW_SECONDS } from '../../src/limits/quotas.js';
import type { SignedRequest } from '../../src/auth/signed-request.js';
import { legacyQuotaCounterField, quotaCounterField } from '../support/quota-counters.js';

const BASE = 2n ** 48n;

/** h of a field of either form (the first 32 bits of the subject's SHA-1). */
function fieldHash(f: string): number {
  if (/^\d{15}$/.test(f)) return Number((BigInt(f) - BASE) / 65536n);
  if (/^[0-9a-f]{12}$/.test(f)) return parseInt(f.slice(0, 8), 16);
  throw new Error(`not a quota field: ${f}`);
}

/** Linear hashing's shard of h (src/store/lua/lib/sharded-hash.lua `shardIndex`). */
function shardIndex(level: number, split: number, h: number): number {
  const b = h % 2 ** level;
  return b < split ? h % 2 ** (level + 1) : b;
}

describe('quota counter fields', () => {
  const h = new Harness();
  after(() => h.close());

  it('are 15-digit integers in listpacks; a hash holding 12-hex fields of the old form splits both forms by their hash and keeps every count', async () => {
    const gameId = `quota-fields-${process.pid}`;
    const windowMs = MINUTE_WINDOW_SECONDS * 1000;
    const window = Math.floor(Date.now() / windowMs) - 30;
    const nowMs = window * windowMs + windowMs / 2;
    const head = h.keySpace.game(gameId).rateWindow('ban', window, 'key-1');
    // 30 subjects counted 3 times each by a process of the old form, in the state it leaves
    const old = Array.from({ length: 30 }, (_, i) => legacyQuotaCounterField(`old-${i}`));
    await h.redis.hset(head, ...old.flatMap((f) => [f, '3']), '', '0 0 30');
    await h.redis.pexpire(head, 3 * windowMs);

    const claims = new BanCheckClaim(h.redis, h.keySpace);
    const users = Array.from({ length: 100 }, (_, i) => `new-${i}`);
    for (const [i, user] of users.entries()) {
      const signed = { key: { keyId: 'key-1', gameId }, signature: `sig-${i}`, timestampSeconds: nowMs / 1000 } as unknown as SignedRequest;
      await claims.claim(signed, user, nowMs);
    }

    const [level, split, n] = (await h.redis.hget(head, ''))!.split(' ').map(Number) as [number, number, number];
    expect(n).to.equal(130);
    expect(2 ** level + split).to.be.greaterThan(1);
    const found = new Map<string, string>();
    for (let b = 0; b < 2 ** level + split; b++) {
      const key = b === 0 ? head : `${head}:${b}`;
      expect(await h.redis.object('ENCODING', key)).to.equal('listpack', key);
      for (const [f, count] of Object.entries(await h.redis.hgetall(key))) {
        if (f === '') continue;
        expect(shardIndex(level, split, fieldHash(f)), f).to.equal(b);
        found.set(f, count);
      }
    }
    expect(found.size).to.equal(130);
    for (const f of old) expect(found.get(f)).to.equal('3');
    for (const user of users) {
      expect(quotaCounterField(user)).to.match(/^\d{15}$/);
      expect(found.get(quotaCounterField(user)), user).to.equal('1');
    }
  });
});
