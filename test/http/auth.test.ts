/** Spec: Authentication rules 1–6, Errors (401/403/409), every response carries serverTime. */
import { expect } from 'chai';
import request from 'supertest';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { createRedis } from '../../src/store/redis.js';
import { revokeKey } from '../../src/auth/key-service.js';
import { subscribeInvalidations } from '../../src/auth/invalidation.js';
import { KeyVerifier, MAX_FAILED_VERIFIES } from '../../src/auth/key-verifier.js';
import { replayClaim } from '../../src/store/lua/lib/replay-claim.js';
import { sign } from '../../src/auth/signature.js';

const HB = '/api/v1/game/heartbeat';

function expectEnvelope(res: request.Response, status: number, code?: string): void {
  expect(res.status).to.equal(status);
  expect(res.body.error).to.be.an('object');
  expect(res.body.error.code).to.be.a('string');
  if (code) expect(res.body.error.code).to.equal(code);
  expect(res.body.error.message).to.be.a('string').and.not.match(/at .*\.ts:\d+/);
  expect(res.body.error.requestId).to.equal(res.headers['x-request-id']);
  expect(new Date(res.body.serverTime).toISOString()).to.equal(res.body.serverTime);
}

describe('authentication', () => {
  const h = new Harness();
  let g: TestGame;

  before(async () => {
    g = await h.game();
  });
  after(() => h.close());

  it('accepts a correctly signed heartbeat', async () => {
    const res = await h.heartbeat(g, heartbeatBody(['p1']));
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['commands', 'config', 'serverTime']);
  });

  it('rejects a request without Authorization (401)', async () => {
    const res = await request(h.app).post(HB).set('Content-Type', 'application/json').send('{}');
    expectEnvelope(res, 401, 'missing_key');
  });

  it('rejects malformed keys (401)', async () => {
    for (const key of ['svc_live_short.x', 'Bearer-less', `svc_test_${g.keyPrefix}.${g.secret}`, `${g.keyPrefix}.${g.secret}`]) {
      const res = await h.signed({ key, secret: g.secret }, 'post', HB, heartbeatBody());
      expectEnvelope(res, 401, 'malformed_key');
    }
    const res = await request(h.app).post(HB).set('Authorization', `Basic ${g.key}`).set('Content-Type', 'application/json').send('{}');
    expectEnvelope(res, 401, 'malformed_key');
  });

  it('rejects an unknown prefix (401)', async () => {
    const key = `svc_live_zzzzzzzzzzzz.${g.secret}`;
    expectEnvelope(await h.signed({ key, secret: g.secret }, 'post', HB, heartbeatBody()), 401, 'unknown_key');
  });

  it('rejects a wrong secret for a known prefix (401), warm or cold', async () => {
    const wrong = 'A'.repeat(43);
    const key = `svc_live_${g.keyPrefix}.${wrong}`;
    // warm: the right secret is cached from the first test
    expectEnvelope(await h.signed({ key, secret: wrong }, 'post', HB, heartbeatBody()), 401, 'bad_key');
    // cold: a fresh verifier must run argon2 and refuse
    const cold = new KeyVerifier(h.db, null);
    let err: unknown;
    await cold.authenticate(`Bearer ${key}`).catch((e: unknown) => (err = e));
    expect((err as { code?: string }).code).to.equal('bad_key');
  });

  it('throttles repeated wrong secrets for one prefix without more argon2 work', async () => {
    const other = await h.key(g.gameId);
    const cold = new KeyVerifier(h.db, null);
    const codes: string[] = [];
    for (let i = 0; i < MAX_FAILED_VERIFIES + 2; i++) {
      const wrong = String(i).padStart(43, 'B');
      await cold.authenticate(`Bearer svc_live_${other.keyPrefix}.${wrong}`).catch((e: { code: string }) => codes.push(e.code));
    }
    expect(codes.slice(0, MAX_FAILED_VERIFIES)).to.deep.equal(Array(MAX_FAILED_VERIFIES).fill('bad_key'));
    expect(codes.slice(MAX_FAILED_VERIFIES)).to.deep.equal(['key_throttled', 'key_throttled']);
  });

  it('rejects a bad signature and a signature over re-serialised bytes (401)', async () => {
    expectEnvelope(await h.signed(g, 'post', HB, heartbeatBody(), { signature: 'f'.repeat(64) }), 401, 'bad_signature');
    expectEnvelope(await h.signed(g, 'post', HB, heartbeatBody(), { signature: 'not-hex' }), 401, 'bad_signature');
    // signed compact JSON, sent pretty-printed: key order and whitespace matter (rule 1)
    const body = heartbeatBody();
    const ts = String(Math.floor(Date.now() / 1000));
    const res = await request(h.app).post(HB)
      .set('Authorization', `Bearer ${g.key}`).set('X-Service-Timestamp', ts)
      .set('X-Service-Signature', sign(g.secret, ts, JSON.stringify(body)))
      .set('Content-Type', 'application/json').send(JSON.stringify(body, null, 2));
    expectEnvelope(res, 401, 'bad_signature');
  });

  it('accepts a signature in uppercase hex', async () => {
    const raw = JSON.stringify(heartbeatBody());
    const ts = String(Math.floor(Date.now() / 1000));
    const res = await h.signed(g, 'post', HB, undefined, { raw, timestamp: Number(ts), signature: sign(g.secret, ts, raw).toUpperCase() });
    expect(res.status).to.equal(200);
  });

  it('rejects unsigned requests: no timestamp or no signature (401)', async () => {
    const res1 = await request(h.app).post(HB).set('Authorization', `Bearer ${g.key}`).set('X-Service-Signature', 'a'.repeat(64)).set('Content-Type', 'application/json').send('{}');
    expectEnvelope(res1, 401, 'missing_timestamp');
    const res2 = await request(h.app).post(HB).set('Authorization', `Bearer ${g.key}`).set('X-Service-Timestamp', String(Math.floor(Date.now() / 1000))).set('Content-Type', 'application/json').send('{}');
    expectEnvelope(res2, 401, 'missing_signature');
    const res3 = await h.signed(g, 'post', HB, heartbeatBody(), { headers: { 'X-Service-Timestamp': '12.5' } });
    expectEnvelope(res3, 401, 'missing_timestamp');
  });

  it('rejects a valid signature outside ±300 s (409), accepts inside', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectEnvelope(await h.heartbeat(g, heartbeatBody(), { timestamp: now - 302 }), 409, 'timestamp_out_of_window');
    expectEnvelope(await h.heartbeat(g, heartbeatBody(), { timestamp: now + 302 }), 409, 'timestamp_out_of_window');
    expect((await h.heartbeat(g, heartbeatBody(['a']), { timestamp: now - 290 })).status).to.equal(200);
    expect((await h.heartbeat(g, heartbeatBody(['b']), { timestamp: now + 290 })).status).to.equal(200);
  });

  it('rejects a replayed signature (409) and keeps the replay entry for the whole window', async () => {
    const raw = JSON.stringify(heartbeatBody(['r1']));
    const ts = Math.floor(Date.now() / 1000);
    const first = await h.signed(g, 'post', HB, undefined, { raw, timestamp: ts });
    expect(first.status).to.equal(200);
    const again = await h.signed(g, 'post', HB, undefined, { raw, timestamp: ts });
    expectEnvelope(again, 409, 'replayed_signature');
    const sig = sign(g.secret, String(ts), raw);
    const keyRow = await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } });
    // the claim is a member of one shard of a bucket's replay sets (a game this small has one shard per
    // bucket), kept at least until ts + 300 s, when the window stops accepting ts (src/store/lua/lib/replay-claim.ts)
    const claim = replayClaim(h.keySpace.game(g.gameId), keyRow.id, sig, Date.now());
    const holders: string[] = [];
    for (const k of claim.keys.slice(0, claim.keys.length / 2)) if (await h.redis.sismember(`${k}:0`, claim.args.rm)) holders.push(k);
    expect(holders).to.have.length(1);
    for (const k of [holders[0]!, `${holders[0]!}:0`]) expect(await h.redis.pttl(k)).to.be.greaterThan((ts + 300) * 1000 - Date.now());
  });

  it('enforces scopes with 403 scope_missing and stores nothing', async () => {
    const onlyEvents = await h.key(g.gameId, ['events', 'commands']);
    expectEnvelope(await h.signed(onlyEvents, 'post', HB, heartbeatBody(['x'], { externalServerId: 'scoped-1' })), 403, 'scope_missing');
    const noEvents = await h.key(g.gameId, ['heartbeat', 'commands']);
    expectEnvelope(await h.signed(noEvents, 'post', HB, heartbeatBody(['x'], { externalServerId: 'scoped-2', events: [event('death')] })), 403, 'scope_missing');
    const noCommands = await h.key(g.gameId, ['heartbeat', 'events']);
    expectEnvelope(await h.signed(noCommands, 'post', HB, heartbeatBody(['x'], { externalServerId: 'scoped-3', acks: ['x'] })), 403, 'scope_missing');
    expectEnvelope(await h.signed(noCommands, 'post', HB, heartbeatBody(['x'], { externalServerId: 'scoped-3', failures: [{ id: 'x', reason: 'r' }] })), 403, 'scope_missing');
    const keys = h.keySpace.game(g.gameId);
    for (const sid of ['scoped-1', 'scoped-2', 'scoped-3']) {
      expect(await h.redis.exists(keys.server(sid), keys.roster(sid))).to.equal(0);
    }
    expect(await h.redis.xlen(keys.eventStream())).to.equal(0);
    // heartbeat + events scope without commands: accepted, but no command delivery
    expect((await h.signed(noCommands, 'post', HB, heartbeatBody([], { externalServerId: 'scoped-4', events: [event('spawn')] }))).status).to.equal(200);
  });

  it('makes a revocation effective on a subscribed API process within 1 s', async () => {
    const victim = await h.key(g.gameId);
    const subscriber = createRedis(h.config.redisUrl, { forWorker: true });
    await subscribeInvalidations(subscriber, h.verifier, h.keySpace);
    try {
      expect((await h.signed(victim, 'post', HB, heartbeatBody([], { externalServerId: 'rv' }))).status).to.equal(200);
      const publisher = createRedis(h.config.redisUrl);
      await revokeKey(h.db, publisher, h.keySpace, victim.keyPrefix);
      await publisher.quit();
      const started = Date.now();
      let status = 200;
      while (Date.now() - started < 1000) {
        status = (await h.signed(victim, 'post', HB, heartbeatBody([], { externalServerId: 'rv' }))).status;
        if (status === 401) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).to.equal(401);
      const res = await h.signed(victim, 'post', HB, heartbeatBody([], { externalServerId: 'rv' }));
      expectEnvelope(res, 401, 'revoked_key');
    } finally {
      await subscriber.quit();
    }
  });

  it('answers unknown routes with 404 and the envelope', async () => {
    expectEnvelope(await h.signed(g, 'post', '/api/v1/game/events', {}), 404, 'unknown_route');
    expectEnvelope(await request(h.app).get('/api/v1/game/nope'), 404, 'unknown_route');
    expectEnvelope(await request(h.app).get('/'), 404);
  });
});
