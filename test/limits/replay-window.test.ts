/**
 * The compact replay cache keeps its promise (spec: Authentication rule 3; src/store/lua/lib/replay-claim.ts): the
 * same key and signature are refused for at least 600 s of server time after their first use, whatever
 * the bucket boundaries, and other signatures are not; with its signed timestamp ts, for as long as the
 * window accepts ts (to ts + 300 s), and its bucket is not kept much longer (issue #32 item 4); a bucket
 * of many claims is split into intsets without losing one (issue #32 item 2); processes writing the
 * layout before 2026-11-29 (`LEGACY_LAYOUT_WRITES`) and the sets refuse each other's signatures. Server
 * time is passed explicitly: no waiting.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { BanCheckClaim } from '../../src/limits/ban-check-claim.js';
import { ReplayError } from '../../src/errors.js';
import { REPLAY_BUCKET_SECONDS, REPLAY_TTL_SECONDS } from '../../src/store/keys.js';
import { REPLAY_MARGIN_SECONDS } from '../../src/store/keys.js';
import { SIGNATURE_WINDOW_SECONDS } from '../../src/auth/signature.js';
import type { SignedRequest } from '../../src/auth/signed-request.js';

describe('replay cache in bucket sets', () => {
  const h = new Harness();
  after(() => h.close());

  function request(gameId: string, signature: string, timestampSeconds?: number): SignedRequest {
    return { key: { keyId: 'key-1', gameId }, signature, timestampSeconds } as unknown as SignedRequest;
  }

  async function outcome(claims: BanCheckClaim, gameId: string, signature: string, user: string, nowMs: number, timestampSeconds?: number): Promise<'ok' | 'replay'> {
    try {
      await claims.claim(request(gameId, signature, timestampSeconds), user, nowMs);
      return 'ok';
    } catch (err) {
      if (err instanceof ReplayError) return 'replay';
      throw err;
    }
  }

  it('the store keeps claims for twice the signature window (the claim builder derives the window from it)', () => {
    expect(REPLAY_TTL_SECONDS).to.equal(2 * SIGNATURE_WINDOW_SECONDS);
  });

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

  it('with the signed timestamp ts: refused to ts + 300 s wherever the client clock is, the bucket kept to about then, never shortened', async () => {
    const claims = new BanCheckClaim(h.redis, h.keySpace);
    const bucketMs = REPLAY_BUCKET_SECONDS * 1000;
    const start = (Math.floor(Date.now() / bucketMs) - 20) * bucketMs;
    // client clock on time, 300 s ahead, 300 s behind (the window's edges); claimed late in a bucket
    for (const [i, skew] of [0, SIGNATURE_WINDOW_SECONDS, -SIGNATURE_WINDOW_SECONDS].entries()) {
      const gameId = `replay-ts-${process.pid}-${i}`;
      const t1 = start + bucketMs - 1_000;
      const ts = t1 / 1000 + skew;
      expect(await outcome(claims, gameId, 'cc33', `u${i}`, t1, ts)).to.equal('ok');
      // every later server time the window still accepts ts at (up to ts + 300 s, inclusive)
      const windowEndMs = (ts + SIGNATURE_WINDOW_SECONDS) * 1000;
      for (const at of [t1, t1 + 1_000, windowEndMs - 1_000, windowEndMs].filter((t) => t >= t1 && t <= windowEndMs)) {
        expect(await outcome(claims, gameId, 'cc33', `v${at}`, at, ts)).to.equal('replay', `skew ${skew} s, at ts + ${(at - ts * 1000) / 1000} s`);
      }
      // one claim: the bucket's head and its only shard
      const head = h.keySpace.game(gameId).replayClaims(Math.floor(t1 / bucketMs));
      for (const key of [head, `${head}:0`]) {
        const ttl = await h.redis.pttl(key);
        expect(ttl).to.be.greaterThan(windowEndMs - t1);
        // + the 10 s of headroom an expiry is raised with (lib/replay.lua, REPLAY_EXPIRY_HEADROOM_MS)
        expect(ttl).to.be.at.most(windowEndMs - t1 + REPLAY_MARGIN_SECONDS * 1000 + 10_000);
      }
    }
  });

  it('a claim whose window closes sooner does not shorten its bucket', async () => {
    const claims = new BanCheckClaim(h.redis, h.keySpace);
    const bucketMs = REPLAY_BUCKET_SECONDS * 1000;
    const t1 = (Math.floor(Date.now() / bucketMs) - 20) * bucketMs;
    const gameId = `replay-raise-${process.pid}`;
    expect(await outcome(claims, gameId, 'dd44', 'a', t1, t1 / 1000 + SIGNATURE_WINDOW_SECONDS)).to.equal('ok');
    expect(await outcome(claims, gameId, 'ee55', 'b', t1 + 1_000, t1 / 1000 - SIGNATURE_WINDOW_SECONDS + 1)).to.equal('ok');
    const head = h.keySpace.game(gameId).replayClaims(Math.floor(t1 / bucketMs));
    for (const key of [head, `${head}:0`]) expect(await h.redis.pttl(key)).to.be.greaterThan(2 * SIGNATURE_WINDOW_SECONDS * 1000 - 1_000);
    expect(await outcome(claims, gameId, 'dd44', 'c', t1 + 2 * SIGNATURE_WINDOW_SECONDS * 1000, t1 / 1000 + SIGNATURE_WINDOW_SECONDS)).to.equal('replay');
  });

  it('1,000 claims in one bucket: intset shards of at most 512, every claim refused again, nothing of the legacy layout written', async () => {
    const claims = new BanCheckClaim(h.redis, h.keySpace);
    const bucketMs = REPLAY_BUCKET_SECONDS * 1000;
    const t1 = (Math.floor(Date.now() / bucketMs) - 20) * bucketMs;
    const gameId = `replay-split-${process.pid}`;
    const signatures = Array.from({ length: 1000 }, (_, i) => `ff${i.toString(16).padStart(6, '0')}`);
    for (const [i, sig] of signatures.entries()) expect(await outcome(claims, gameId, sig, `u${i}`, t1 + i)).to.equal('ok');
    const keys = h.keySpace.game(gameId);
    const head = keys.replayClaims(Math.floor(t1 / bucketMs));
    // the bucket's counter; its shards follow from it (ceil(1000 / 192) = 6)
    expect(await h.redis.get(head)).to.equal('1000');
    const shards = 6;
    expect(await h.redis.exists(`${head}:${shards}`)).to.equal(0);
    let members = 0;
    for (let b = 0; b < shards; b++) {
      const shard = `${head}:${b}`;
      expect(await h.redis.object('ENCODING', shard), shard).to.equal('intset');
      const size = await h.redis.scard(shard);
      expect(size).to.be.at.most(512);
      members += size;
      // no shard outlives the counter (absolute expiry times): a bucket whose counter is gone is not read
      expect(await h.redis.pttl(shard)).to.be.greaterThan(0);
      expect(Number(await h.redis.call('PEXPIRETIME', shard)), shard).to.be.at.most(Number(await h.redis.call('PEXPIRETIME', head)));
    }
    expect(members).to.equal(1000);
    for (const [i, sig] of signatures.entries()) expect(await outcome(claims, gameId, sig, `v${i}`, t1 + 200_000 + i)).to.equal('replay', sig);
    expect(await h.redis.exists(keys.replayBucket(Math.floor(t1 / bucketMs)))).to.equal(0);
  });

  it('LEGACY_LAYOUT_WRITES: claims in the old layout (the same tags an old process writes) and the sets refuse each other', async () => {
    const legacySpace = new KeySpace(h.config.redisPrefix, { legacyWrites: true });
    const legacy = new BanCheckClaim(h.redis, legacySpace);
    const sets = new BanCheckClaim(h.redis, h.keySpace);
    const bucketMs = REPLAY_BUCKET_SECONDS * 1000;
    const t1 = (Math.floor(Date.now() / bucketMs) - 20) * bucketMs;
    const gameId = `replay-upgrade-${process.pid}`;
    expect(await outcome(legacy, gameId, 'ab01', 'a', t1)).to.equal('ok');
    // what a process before 2026-11-29 wrote: an 8-character tag at a tag boundary of one field of the bucket hash
    const bucket = legacySpace.game(gameId).replayBucket(Math.floor(t1 / bucketMs));
    const fields = await h.redis.hgetall(bucket);
    expect(Object.values(fields)).to.have.length(1);
    expect(Object.values(fields)[0]).to.match(/^[A-Za-z0-9+/]{8}$/);
    expect(await h.redis.exists(h.keySpace.game(gameId).replayClaims(Math.floor(t1 / bucketMs)))).to.equal(0);
    expect(await outcome(sets, gameId, 'ab01', 'b', t1 + 300_000)).to.equal('replay');
    expect(await outcome(sets, gameId, 'cd02', 'c', t1 + 1_000)).to.equal('ok');
    expect(await outcome(legacy, gameId, 'cd02', 'd', t1 + 2_000)).to.equal('replay');
    expect(await outcome(legacy, gameId, 'ef03', 'e', t1 + 3_000)).to.equal('ok');
    expect(Object.values(await h.redis.hgetall(bucket)).join('')).to.have.length(16);
  });
});
