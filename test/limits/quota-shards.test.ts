/**
 * Issue #15 item 5: quota counters spread over listpack-sized shards (`overQuota`, src/store/lua/lib/
 * quota.lua; layout in src/store/keys.ts `rateWindow`). Many subjects in one window: every shard stays
 * within `hash-max-listpack-entries`, every subject is counted exactly once, every shard expires with the
 * window, and a subject's count survives the splits that happen after it was first counted.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { BanCheckClaim } from '../../src/limits/ban-check-claim.js';
import { QuotaExceededError } from '../../src/limits/quota-error.js';
import { BAN_CHECK_QUOTA, MINUTE_WINDOW_SECONDS } from '../../src/limits/quotas.js';
import type { SignedRequest } from '../../src/auth/signed-request.js';
import type { VerifiedKey } from '../../src/auth/key-verifier.js';
import { quotaCounterField } from '../support/quota-counters.js';
import { scanKeys } from '../support/redis-keys.js';
import { QUOTA_MARGIN_SECONDS } from '../../src/store/keys.js';

describe('quota counters: listpack-sized shards', () => {
  const h = new Harness();
  let g: TestGame;
  let keyId: string;
  let seq = 0;

  before(async () => {
    g = await h.game();
    keyId = (await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } })).id;
  });
  after(() => h.close());

  it('500 users in one window: shards of ≤ 128 fields, listpack, each user once, counts kept across splits', async () => {
    const claims = new BanCheckClaim(h.redis, h.keySpace);
    const key = { keyId, gameId: g.gameId } as VerifiedKey;
    const signed = (): SignedRequest => ({ key, signature: `shard-sig-${++seq}`, timestampSeconds: Math.floor(now / 1000), raw: Buffer.alloc(0), form: 'body', body: Buffer.alloc(0) });
    // the middle of a minute, so every claim lands in one window
    const now = (Math.floor(Date.now() / 60_000) + 1) * 60_000 + 30_000;
    const users = Array.from({ length: 500 }, (_, i) => `user-${i}`);
    // user-0 uses its whole quota before the others make the counters split
    for (let i = 0; i < BAN_CHECK_QUOTA; i++) await claims.claim(signed(), users[0]!, now);
    for (const u of users.slice(1)) await claims.claim(signed(), u, now);

    const head = h.keySpace.game(g.gameId).rateWindow('ban', Math.floor(now / (MINUTE_WINDOW_SECONDS * 1000)), keyId);
    const shards = await scanKeys(h.redis, `${head.replace(/[[\]*?\\]/g, '\\$&')}*`);
    expect(shards).to.include(head);
    expect(shards.length).to.be.greaterThan(4);
    const fields = new Map<string, string>();
    for (const shard of shards) {
      const all = await h.redis.hgetall(shard);
      expect(Object.keys(all).length).to.be.at.most(128, shard);
      expect(await h.redis.object('ENCODING', shard)).to.equal('listpack');
      // kept QUOTA_MARGIN_SECONDS past the window's end (30 s after \`now\`), not through the next window
      const ttl = await h.redis.pttl(shard);
      expect(ttl).to.be.greaterThan(0);
      expect(ttl).to.be.at.most(30_000 + QUOTA_MARGIN_SECONDS * 1000);
      for (const [f, v] of Object.entries(all)) {
        if (f === '') continue;
        expect(fields.has(f)).to.equal(false, `${f} in two shards`);
        fields.set(f, v);
      }
    }
    expect(fields.size).to.equal(users.length);
    // the head's state field '' is "<level> <split pointer> <fields>"
    expect((await h.redis.hget(head, ''))?.split(' ')[2]).to.equal(String(users.length));
    expect(fields.get(quotaCounterField(users[0]!))).to.equal(String(BAN_CHECK_QUOTA));
    expect(fields.get(quotaCounterField(users[499]!))).to.equal('1');

    // user-0's count moved with the splits: its next check is over the quota; user-1 still has room
    const err = await claims.claim(signed(), users[0]!, now).then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(QuotaExceededError);
    for (let i = 1; i < BAN_CHECK_QUOTA; i++) await claims.claim(signed(), users[1]!, now);
    const over = await claims.claim(signed(), users[1]!, now).then(() => null, (e: unknown) => e);
    expect(over).to.be.instanceOf(QuotaExceededError);
  });
});
