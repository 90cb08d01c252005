/**
 * Per-key quotas (spec: Limits, Errors 429; src/limits/quotas.ts). The services take server time as an
 * argument, so windows are pinned to a chosen instant and nothing depends on when the test runs.
 */
import { expect } from 'chai';
import { GAME_PATHS } from '@gis/client';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { HeartbeatService, type HeartbeatInput } from '../../src/presence/heartbeat-service.js';
import { DecisionCache } from '../../src/doors/decision-cache.js';
import { BanCheckClaim } from '../../src/limits/ban-check-claim.js';
import { QuotaExceededError } from '../../src/limits/quota-error.js';
import { BAN_CHECK_QUOTA, DOOR_BULK_QUOTA, DOOR_CHECK_QUOTA, DOOR_CHECK_USER_ALLOWANCE, heartbeatQuota, MANIFEST_PER_NAMED_SERVER, manifestQuota, NUDGE_ALLOWANCE } from '../../src/limits/quotas.js';
import { nudgesPerMinute } from '../../src/commands/nudge-budget.js';
import { throttleHistory } from '../../src/limits/ingest-health.js';
import type { SignedRequest } from '../../src/auth/signed-request.js';
import type { VerifiedKey } from '../../src/auth/key-verifier.js';
import { quotaCounterField } from '../support/quota-counters.js';

/** The middle of a minute: both 60 s windows and the test's instants stay inside one window. */
function midMinute(): number {
  return (Math.floor(Date.now() / 60_000) + 1) * 60_000 + 30_000;
}

async function expectQuota(p: Promise<unknown>, kind: string, retryAfter: number): Promise<void> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).to.be.instanceOf(QuotaExceededError);
  const q = err as QuotaExceededError;
  expect(q.kind).to.equal('rate_limited');
  expect(q.code).to.equal('rate_limited');
  expect(q.quota).to.equal(kind);
  expect(q.retryAfterSeconds).to.equal(retryAfter);
}

describe('per-key quotas', () => {
  const h = new Harness();
  let g: TestGame;
  let keyId: string;
  let seq = 0;
  const service = () => new HeartbeatService(h.redis, h.keySpace);
  const input = (sid: string, nowMs: number, extra: Partial<HeartbeatInput['body']> = {}): HeartbeatInput => ({
    gameId: g.gameId,
    keyId,
    signature: `sig-${++seq}`,
    heartbeatIntervalSeconds: 20,
    deliverCommands: true,
    body: heartbeatBody([], { externalServerId: sid, ...extra }),
    nowMs,
  });

  before(async () => {
    g = await h.game();
    keyId = (await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } })).id;
  });
  after(() => h.close());

  describe('formulas', () => {
    it('heartbeat quota = 2·⌈60 / interval⌉ + nudge allowance + 10 per server per minute', () => {
      expect(NUDGE_ALLOWANCE).to.equal(nudgesPerMinute(1));
      expect(heartbeatQuota(15)).to.equal(8 + NUDGE_ALLOWANCE + 10);
      expect(heartbeatQuota(20)).to.equal(124);
      expect(heartbeatQuota(60)).to.equal(120);
      for (let s = 1; s <= 200; s++) expect(nudgesPerMinute(s)).to.be.at.most(NUDGE_ALLOWANCE);
      expect(manifestQuota(0)).to.equal(12);
      expect(manifestQuota(25)).to.equal(60);
    });
  });

  describe('heartbeat', () => {
    it('a client at the returned interval, nudged at the full nudge budget and retrying, is never throttled', async () => {
      const hb = service();
      const interval = 15;
      const start = midMinute();
      const sid = 'compliant';
      // Ten minutes: scheduled heartbeats every interval (1 s late at random), every nudge the budget
      // allows (each one early heartbeat), and each scheduled heartbeat re-sent once (409/413).
      const sends: number[] = [];
      for (let t = 0; t < 600_000; t += interval * 1000) sends.push(t + Math.floor(Math.random() * 1000), t + 1500);
      const perMinute = nudgesPerMinute(1);
      for (let m = 0; m < 10; m++) for (let i = 0; i < perMinute; i++) sends.push(m * 60_000 + Math.floor((i * 60_000) / perMinute));
      sends.sort((a, b) => a - b);
      for (const at of sends) await hb.record({ ...input(sid, start - 30_000 + at), heartbeatIntervalSeconds: interval });
    });

    it('beyond the quota: 429 with Retry-After to the end of the window, per (key, server), nothing stored', async () => {
      const hb = service();
      const now = midMinute();
      const quota = heartbeatQuota(20);
      for (let i = 0; i < quota; i++) await hb.record(input('busy', now));
      const keys = h.keySpace.game(g.gameId);
      const before = await h.redis.xlen(keys.eventStream());
      await expectQuota(hb.record(input('busy', now, { events: [event('join')] })), 'heartbeat', 30);
      expect(await h.redis.xlen(keys.eventStream())).to.equal(before);
      // another server of the same key is unaffected; the next window starts afresh
      await hb.record(input('other', now));
      await hb.record(input('busy', now + 30_000));
      const history = await throttleHistory(h.redis, h.keySpace, g.gameId, now);
      expect(history.at(-1)!.by).to.deep.equal({ 'hb:busy': 1 });
      expect(await h.redis.zscore(h.keySpace.global.throttledGames(), g.gameId)).to.not.equal(null);
    });

    it('over HTTP: 429 rate_limited with the envelope and an integer Retry-After', async () => {
      const window = Math.floor(Date.now() / 60_000);
      const keys = h.keySpace.game(g.gameId);
      // Fill this window and the next, so the answer does not depend on the moment the request lands.
      for (const w of [window, window + 1]) await h.redis.multi().hset(keys.rateWindow('hb', w, keyId), quotaCounterField('http-busy'), String(heartbeatQuota(20))).expire(keys.rateWindow('hb', w, keyId), 180).exec();
      const res = await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'http-busy', events: [event('join')] }));
      expect(res.status).to.equal(429);
      expect(res.body.error.code).to.equal('rate_limited');
      expect(res.body.error.requestId).to.be.a('string');
      expect(res.body.serverTime).to.be.a('string');
      expect(res.headers['retry-after']).to.match(/^\d+$/);
      expect(Number(res.headers['retry-after'])).to.be.within(1, 120);
      expect(await h.redis.exists(keys.server('http-busy'))).to.equal(0);
    });
  });

  describe('doors and bans', () => {
    const cache = () => new DecisionCache(h.redis, h.keySpace, h.config.doorDecisionWindowSeconds);
    const ttl = () => h.config.doorDecisionWindowSeconds;
    /** The middle of a door-TTL window. */
    const midTtl = () => (Math.floor(Date.now() / (ttl() * 1000)) + 1) * ttl() * 1000 + (ttl() * 1000) / 2;
    const lookup = (mode: 'one' | 'all' | 'version', nowMs: number, user = 'u1', doorKey = 'gate') =>
      cache().lookup({ gameId: g.gameId, keyId, signature: `sig-${++seq}`, mode, externalId: user, doorKey, nowMs });

    it(`door check: ${DOOR_CHECK_QUOTA} per (user, door) per door decision window past the user's first ${DOOR_CHECK_USER_ALLOWANCE}; other doors, users and versions count apart`, async () => {
      const now = midTtl();
      for (let i = 0; i < DOOR_CHECK_USER_ALLOWANCE + DOOR_CHECK_QUOTA; i++) await lookup('one', now);
      await expectQuota(lookup('one', now), 'door_check', ttl() / 2);
      await lookup('one', now, 'u1', 'other-door');
      await lookup('one', now, 'u2', 'gate');
      // a doors version change invalidates cached decisions: the client's re-checks count afresh
      await h.redis.incr(h.keySpace.game(g.gameId).doorsVersion());
      await lookup('one', now);
    });

    it('door check: the allowance is per user across doors; past it each door counts from its next check', async () => {
      // a later window than the other tests use: its counter hash holds this test's subjects only
      const now = midTtl() + 10 * ttl() * 1000;
      for (let d = 0; d < DOOR_CHECK_USER_ALLOWANCE; d++) await lookup('one', now, 'roamer', `door-${d}`);
      const head = h.keySpace.game(g.gameId).rateWindow('door', Math.floor(now / (ttl() * 1000)), keyId);
      // one counter for the user (and the shard state field ''), none per door
      expect(await h.redis.hlen(head)).to.equal(2);
      // door-0 was checked within the allowance: its own count starts now
      for (let i = 0; i < DOOR_CHECK_QUOTA; i++) await lookup('one', now, 'roamer', 'door-0');
      await expectQuota(lookup('one', now, 'roamer', 'door-0'), 'door_check', ttl() / 2);
      await lookup('one', now, 'roamer', 'door-1');
      // another user has an allowance of their own
      await lookup('one', now, 'other-roamer', 'door-0');
    });

    it('door check: a client checking each of its doors twice per TTL (a window edge) plus retries is never throttled', async () => {
      const now = midTtl() + 20 * ttl() * 1000;
      // five doors, each twice, then the tenth door check re-sent DOOR_CHECK_QUOTA times (re-signs, 5xx)
      for (let d = 0; d < 5; d++) for (let i = 0; i < 2; i++) await lookup('one', now, 'compliant', `door-${d}`);
      for (let i = 0; i < DOOR_CHECK_QUOTA; i++) await lookup('one', now, 'compliant', 'door-4');
    });

    it(`door bulk: ${DOOR_BULK_QUOTA} per user per door TTL`, async () => {
      const now = midTtl();
      for (let i = 0; i < DOOR_BULK_QUOTA; i++) await lookup('all', now, 'bulk-user');
      await expectQuota(lookup('all', now, 'bulk-user'), 'door_bulk', ttl() / 2);
    });

    it('manifest: 2 per live server + 10 per key per minute', async () => {
      const game = await h.game();
      const gameKeyId = (await h.db.apiKey.findUniqueOrThrow({ where: { prefix: game.keyPrefix } })).id;
      const now = midMinute();
      const manifest = () => cache().lookup({ gameId: game.gameId, keyId: gameKeyId, signature: `sig-${++seq}`, mode: 'version', nowMs: now });
      for (let i = 0; i < manifestQuota(0); i++) await manifest();
      await expectQuota(manifest(), 'manifest', 30);
      await h.redis.zadd(h.keySpace.game(game.gameId).servers(), now, 's1', now, 's2');
      // refused requests count too (counter at quota + 1): two more servers leave room for one more fetch
      for (let i = manifestQuota(0) + 1; i < manifestQuota(2); i++) await manifest();
      await expectQuota(manifest(), 'manifest', 30);
    });

    it(`manifest naming its server (?externalServerId=): ${MANIFEST_PER_NAMED_SERVER} per server per minute, whatever the live servers; a fleet booting before its first heartbeats is not refused (issue #32)`, async () => {
      const game = await h.game();
      const gameKeyId = (await h.db.apiKey.findUniqueOrThrow({ where: { prefix: game.keyPrefix } })).id;
      const now = midMinute();
      const manifest = (externalServerId: string | null) => cache().lookup({ gameId: game.gameId, keyId: gameKeyId, signature: `sig-${++seq}`, mode: 'version', externalServerId, nowMs: now });
      // 30 servers boot, none live yet: the key's quota (2·0 + 10) would refuse the 13th
      for (let s = 0; s < 30; s++) await manifest(`boot-${s}`);
      for (let i = 1; i < MANIFEST_PER_NAMED_SERVER; i++) await manifest('boot-0');
      await expectQuota(manifest('boot-0'), 'manifest', 30);
      // a request that does not name its server still counts against the key's quota
      for (let i = 0; i < manifestQuota(0); i++) await manifest(null);
      await expectQuota(manifest(null), 'manifest', 30);
      await manifest('boot-1');
    });

    it('manifest over HTTP: externalServerId given twice or over 128 characters is 400 invalid_request with the envelope; once is 200', async () => {
      // bodiless and signed in the spec's form: distinct timestamps keep the signatures apart (rule 3)
      const ts = Math.floor(Date.now() / 1000);
      const ok = await h.signed(g, 'get', `${GAME_PATHS.doorsManifest}?externalServerId=srv-a`, undefined, { timestamp: ts });
      expect(ok.status).to.equal(200);
      for (const [i, query] of ['externalServerId=a&externalServerId=b', `externalServerId=${'x'.repeat(129)}`].entries()) {
        const res = await h.signed(g, 'get', `${GAME_PATHS.doorsManifest}?${query}`, undefined, { timestamp: ts - 1 - i });
        expect(res.status, query).to.equal(400);
        expect(res.body.error).to.include({ code: 'invalid_request' });
        expect(res.body.error.requestId).to.be.a('string');
        expect(res.body.serverTime).to.be.a('string');
      }
    });

    it(`ban check: ${BAN_CHECK_QUOTA} per user per minute`, async () => {
      const claims = new BanCheckClaim(h.redis, h.keySpace);
      const key = { keyId, gameId: g.gameId } as VerifiedKey;
      const signed = (): SignedRequest => ({ key, signature: `sig-${++seq}`, timestampSeconds: Math.floor(now / 1000), raw: Buffer.alloc(0), form: 'body', body: Buffer.alloc(0) });
      const now = midMinute();
      for (let i = 0; i < BAN_CHECK_QUOTA; i++) await claims.claim(signed(), 'connecting', now);
      await expectQuota(claims.claim(signed(), 'connecting', now), 'ban_check', 30);
      await claims.claim(signed(), 'someone-else', now);
      const replayed = signed();
      await claims.claim(replayed, 'third', now);
      const err = await claims.claim(replayed, 'third', now).then(() => null, (e: unknown) => e);
      expect((err as { kind: string }).kind).to.equal('conflict');
    });
  });
});
