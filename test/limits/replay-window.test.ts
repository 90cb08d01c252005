/**
 * The compact replay cache keeps its promise (spec: Authentication rule 3; src/store/lua/lib/replay-claim.ts): the
 * same key and signature are refused for at least 600 s of server time after their first use, whatever
 * the bucket boundaries, and other signatures are not. Server time is passed explicitly: no waiting.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { BanCheckClaim } from '../../src/limits/ban-check-claim.js';
import { ReplayError } from '../../src/errors.js';
import { REPLAY_BUCKET_SECONDS } from '../../src/store/keys.js';
import type { SignedRequest } from '../../src/auth/signed-request.js';

describe('replay cache in bucket hashes', () => {
  const h = new Harness();
  after(() => h.close());

  function request(gameId: string, signature: string): SignedRequest {
    return { key: { keyId: 'key-1', gameId }, signature } as unknown as SignedRequest;
  }

  async function outcome(claims: BanCheckClaim, gameId: string, signature: string, user: string, nowMs: number): Promise<'ok' | 'replay'> {
    try {
      await claims.claim(request(gameId, signature), user, nowMs);
      return 'ok';
    } catch (err) {
      if (err instanceof ReplayError) return 'replay';
      throw err;
    }
  }

  it('refuses a signature again up to 600 s later from any point of a bucket, and accepts fresh ones', async () => {
    const claims = new BanCheckClaim(h.redis, h.keySpace);
    const bucketMs = REPLAY_BUCKET_SECONDS * 1000;
    // a moment in the past so the buckets written here are not the live ones; one game per case
    const start = (Math.floor(Date.now() / bucketMs) - 20) * bucketMs;
    for (const [i, offset] of [0, 1, bucketMs / 2, bucketMs - 1].entries()) {
      const gameId = `replay-${process.pid}-${i}`;
      const t1 = start + offset;
      expect(await outcome(claims, gameId, 'aa11', `u${i}`, t1)).to.equal('ok');
      for (const later of [0, 1_000, 299_000, 599_999, 600_000]) expect(await outcome(claims, gameId, 'aa11', `v${later}`, t1 + later)).to.equal('replay', `+${later} ms`);
      expect(await outcome(claims, gameId, 'bb22', 'w', t1 + 1)).to.equal('ok');
      expect(await outcome(claims, gameId, 'aa11', 'x', t1 + 600_000 + 2 * bucketMs)).to.equal('ok');
    }
  });
});
