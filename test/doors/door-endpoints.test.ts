/**
 * Spec: Endpoints › doors/check, doors/bulk, doors/manifest (scope `doors`), Errors; issue #5 "Endpoints"
 * and the access log. Response bodies are checked against the schemas the OpenAPI document uses.
 */
import { expect } from 'chai';
import request from 'supertest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { createApp } from '../../src/app.js';
import { createDb } from '../../src/store/prisma.js';
import { StreamConsumer } from '../../src/store/streams.js';
import { sign } from '../../src/auth/signature.js';
import { flushAccessLog } from '../../src/doors/access-log-flusher.js';
import { addPolicy, forceDoor } from '../../src/doors/door-admin-service.js';
import { doorBulkResponseSchema, doorCheckResponseSchema, doorManifestResponseSchema } from '../../src/schemas/doors.js';
import { errorEnvelopeSchema, heartbeatResponseSchema } from '../../src/schemas/heartbeat.js';
import { bulk, check, doorWith, manifest } from './door-fixtures.js';
import { scanKeys } from '../support/redis-keys.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false }));
const conforms = (schema: object, body: unknown) => {
  const validate = ajv.compile(schema);
  expect(validate(body), JSON.stringify(validate.errors)).to.equal(true);
};
const { $id: _c, ...checkSchema } = doorCheckResponseSchema;
const { $id: _b, ...bulkSchema } = doorBulkResponseSchema;
const { $id: _m, ...manifestSchema } = doorManifestResponseSchema;
const { $id: _e, ...envelopeSchema } = errorEnvelopeSchema;
const { $id: _h, ...hbSchema } = heartbeatResponseSchema;

function expectError(res: request.Response, status: number, code: string): void {
  expect(res.status, res.text).to.equal(status);
  conforms(envelopeSchema, res.body);
  expect(res.body.error.code).to.equal(code);
}

describe('door endpoints', () => {
  const h = new Harness();
  let g: TestGame;
  let lounge: { key: string; ids: string[] };
  const deps = () => ({ db: h.db, redis: h.redis, keySpace: h.keySpace });

  before(async () => {
    g = await h.game(['doors', 'heartbeat']);
    lounge = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['vip'] }], { key: 'lounge', kind: 'zone', failMode: 'open' });
    await doorWith(h, g.gameId, [], { key: 'armory', kind: 'locker' });
  });
  after(() => h.close());

  it('check answers one decision with its reason, failMode and TTL', async () => {
    const res = await check(h, g, 'lounge', 'vip');
    expect(res.status).to.equal(200);
    conforms(checkSchema, res.body);
    expect(res.body).to.deep.include({
      doorKey: 'lounge', externalId: 'vip', decision: 'allow', reason: `policy_allow:${lounge.ids[0]}`, policyId: lounge.ids[0],
      failMode: 'open', forcedState: 'auto', ttlSeconds: h.config.doorCacheTtlSeconds, cached: false,
    });
    const cached = await check(h, g, 'lounge', 'vip');
    conforms(checkSchema, cached.body);
    expect(cached.body).to.include({ cached: true, decision: 'allow' });
  });

  it('bulk answers every door of the game for one user, in door-key order', async () => {
    const res = await bulk(h, g, 'vip');
    expect(res.status).to.equal(200);
    conforms(bulkSchema, res.body);
    expect(res.body.externalId).to.equal('vip');
    expect(res.body.decisions.map((d: { doorKey: string; decision: string; reason: string }) => [d.doorKey, d.decision, d.reason])).to.deep.equal([
      ['armory', 'deny', 'default_deny'],
      ['lounge', 'allow', `policy_allow:${lounge.ids[0]}`],
    ]);
    const empty = await h.game(['doors']);
    const none = await bulk(h, empty, 'vip');
    expect(none.status).to.equal(200);
    expect(none.body.decisions).to.deep.equal([]);
  });

  it('manifest lists definitions and forced states with a version that moves on every change', async () => {
    const first = await manifest(h, g);
    expect(first.status).to.equal(200);
    conforms(manifestSchema, first.body);
    expect(first.headers.etag).to.equal(`"${first.body.version}"`);
    expect(first.body.doorCacheTtlSeconds).to.equal(h.config.doorCacheTtlSeconds);
    expect(first.body.doors).to.deep.equal([
      { key: 'armory', name: 'Door armory', kind: 'locker', defaultEffect: 'deny', failMode: 'closed', forcedState: 'auto' },
      { key: 'lounge', name: 'Door lounge', kind: 'zone', defaultEffect: 'deny', failMode: 'open', forcedState: 'auto' },
    ]);
    expect((await manifest(h, g)).body.version).to.equal(first.body.version);

    const afterPolicy = (await addPolicy(deps(), { gameId: g.gameId, doorKey: 'armory', effect: 'allow', subjectType: 'users', subjectIds: ['guard'] }, 'test')).doorsVersion;
    expect(afterPolicy).to.be.greaterThan(first.body.version);
    expect((await manifest(h, g)).body.version).to.equal(afterPolicy);

    const forced = await forceDoor(deps(), g.gameId, 'armory', 'locked', 'test');
    const locked = await manifest(h, g);
    expect(locked.status, locked.text).to.equal(200);
    expect(locked.body.version).to.equal(forced.doorsVersion).and.greaterThan(afterPolicy);
    expect(locked.body.doors[0]).to.include({ key: 'armory', forcedState: 'locked' });
    await forceDoor(deps(), g.gameId, 'armory', 'auto', 'test');
  });

  it('manifest stays a 200 with a body and serverTime when If-None-Match matches', async () => {
    const first = await manifest(h, g);
    const again = await h.signed(g, 'get', '/api/v1/game/doors/manifest', undefined, { headers: { 'If-None-Match': first.headers.etag! }, timestamp: Math.floor(Date.now() / 1000) - 299 });
    expect(again.status).to.equal(200);
    conforms(manifestSchema, again.body);
    expect(again.headers.etag).to.equal(first.headers.etag);
  });

  it('heartbeat config carries the door cache TTL and the manifest version', async () => {
    const hb = await h.heartbeat(g, heartbeatBody());
    expect(hb.status).to.equal(200);
    conforms(hbSchema, hb.body);
    const m = await manifest(h, g);
    expect(hb.body.config).to.include({ doorCacheTtlSeconds: h.config.doorCacheTtlSeconds, doorsVersion: m.body.version });
    const changed = await addPolicy(deps(), { gameId: g.gameId, doorKey: 'lounge', effect: 'deny', subjectType: 'users', subjectIds: ['troll'] }, 'test');
    expect((await h.heartbeat(g, heartbeatBody())).body.config.doorsVersion).to.equal(changed.doorsVersion);
  });

  it('heartbeat config knows the version of a game whose doors never changed since Redis was emptied', async () => {
    const fresh = await h.game(['heartbeat', 'doors']);
    await h.redis.del(h.keySpace.game(fresh.gameId).doorsVersion());
    const hb = await h.heartbeat(fresh, heartbeatBody());
    expect(hb.body.config.doorsVersion).to.equal(1);
    expect(await h.redis.get(h.keySpace.game(fresh.gameId).doorsVersion())).to.equal('1');
    expect((await manifest(h, fresh)).body.version).to.equal(1);
  });

  it('unknown door key → 404 unknown_door', async () => {
    expectError(await check(h, g, 'no-such-door', 'vip'), 404, 'unknown_door');
  });

  it('unknown game (deleted while its key is still cached) → 404 unknown_game', async () => {
    const doomed = await h.game(['heartbeat', 'doors']);
    expect((await h.heartbeat(doomed, heartbeatBody())).status).to.equal(200); // key now cached by this process
    await h.redis.del(h.keySpace.game(doomed.gameId).doorsVersion());
    await h.db.game.delete({ where: { id: doomed.gameId } });
    expectError(await manifest(h, doomed), 404, 'unknown_game');
    expectError(await check(h, doomed, 'lounge', 'vip'), 404, 'unknown_game');
  });

  it('a key without the doors scope gets 403 scope_missing on all three', async () => {
    const k = { ...g, ...(await h.key(g.gameId, ['heartbeat', 'events', 'commands'])) };
    expectError(await check(h, k, 'lounge', 'vip'), 403, 'scope_missing');
    expectError(await bulk(h, k, 'vip'), 403, 'scope_missing');
    expectError(await manifest(h, k), 403, 'scope_missing');
  });

  it('a replayed signature → 409; the same bytes re-signed a second later are fine', async () => {
    const body = JSON.stringify({ doorKey: 'lounge', externalId: 'replayer' });
    const ts = String(Math.floor(Date.now() / 1000));
    const send = (t: string) =>
      request(h.app).post('/api/v1/game/doors/check').set('Authorization', `Bearer ${g.key}`).set('X-Service-Timestamp', t)
        .set('X-Service-Signature', sign(g.secret, t, body)).set('Content-Type', 'application/json').send(body);
    expect((await send(ts)).status).to.equal(200);
    expectError(await send(ts), 409, 'replayed_signature');
    expect((await send(String(Number(ts) - 1))).status).to.equal(200);
  });

  it('bad bodies → 400 with the envelope', async () => {
    expectError(await h.signed(g, 'post', '/api/v1/game/doors/check', { externalId: 'x' }), 400, 'invalid_request');
    expectError(await h.signed(g, 'post', '/api/v1/game/doors/check', undefined, { raw: '{"doorKey":' }), 400, 'invalid_json');
    expectError(await h.signed(g, 'post', '/api/v1/game/doors/check', { doorKey: 'lounge', externalId: 'x'.repeat(129) }), 400, 'invalid_request');
    expectError(await h.signed(g, 'post', '/api/v1/game/doors/bulk', { externalId: 5 }), 400, 'invalid_request');
  });

  it('without Postgres: cached decisions are still served, uncached ones get 503 (the client applies failMode)', async () => {
    const warm = await check(h, g, 'lounge', 'pg-down');
    expect(warm.body.cached).to.equal(false);
    const deadDb = createDb('postgresql://postgres@127.0.0.1:1/none', 1);
    const app = createApp({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: deadDb, verifier: h.verifier });
    try {
      const call = (user: string) => {
        const raw = JSON.stringify({ doorKey: 'lounge', externalId: user, n: Math.random() });
        const ts = String(Math.floor(Date.now() / 1000));
        return request(app).post('/api/v1/game/doors/check').set('Authorization', `Bearer ${g.key}`).set('X-Service-Timestamp', ts)
          .set('X-Service-Signature', sign(g.secret, ts, raw)).set('Content-Type', 'application/json').send(raw);
      };
      expect((await call('pg-down')).body).to.include({ cached: true, decision: 'deny', failMode: 'open' });
      expectError(await call('never-seen'), 503, 'unavailable');
    } finally {
      await deadDb.$disconnect();
    }
  });

  it('writes every answered decision to the access log through the flusher', async () => {
    const other = await h.game(['doors']);
    const gate = await doorWith(h, other.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['ann'] }], { key: 'gate' });
    await doorWith(h, other.gameId, [], { key: 'vault' });
    const since = new Date(Date.now() - 1000);
    await check(h, other, 'gate', 'ann'); // evaluated
    await check(h, other, 'gate', 'ann'); // served from the cache
    await check(h, other, 'vault', 'ann', { externalServerId: null });
    await bulk(h, other, 'bo');
    expect(await h.db.accessLog.count({ where: { gameId: other.gameId } })).to.equal(0); // nothing written inline
    await h.flush(other.gameId);
    const rows = await h.db.accessLog.findMany({ where: { gameId: other.gameId }, orderBy: [{ id: 'asc' }] });
    expect(rows.map((r) => [r.externalServerId, r.doorKey, r.externalId, r.decision, r.reason, r.policyId])).to.deep.equal([
      ['server-1', 'gate', 'ann', 'allow', `policy_allow:${gate.ids[0]}`, gate.ids[0]],
      ['server-1', 'gate', 'ann', 'allow', `policy_allow:${gate.ids[0]}`, gate.ids[0]],
      [null, 'vault', 'ann', 'deny', 'default_deny', null],
      ['server-1', 'gate', 'bo', 'deny', 'default_deny', null],
      ['server-1', 'vault', 'bo', 'deny', 'default_deny', null],
    ]);
    for (const r of rows) expect(r.at.getTime()).to.be.within(since.getTime(), Date.now());
  });

  it('the access-log flusher loses and duplicates nothing when killed between insert and acknowledge', async () => {
    const other = await h.game(['doors']);
    await doorWith(h, other.gameId, [], { key: 'hatch' });
    for (const u of ['a', 'b', 'c']) await check(h, other, 'hatch', u);
    const doomed = new StreamConsumer(h.redis, 'flush-access-log', 'doomed');
    const crash = await flushAccessLog(h.db, doomed, h.keySpace, other.gameId, 2, { afterInsert: () => { throw new Error('SIGKILL'); } }).catch((e: unknown) => e);
    expect(String(crash)).to.include('SIGKILL');
    const restarted = new StreamConsumer(h.redis, 'flush-access-log', 'restarted', 0);
    while ((await flushAccessLog(h.db, restarted, h.keySpace, other.gameId)).entries) { /* drain */ }
    expect((await h.db.accessLog.findMany({ where: { gameId: other.gameId } })).map((r) => r.externalId).sort()).to.deep.equal(['a', 'b', 'c']);
    expect(await h.redis.xlen(h.keySpace.game(other.gameId).accessStream())).to.equal(0);
  });

  it('every key the door paths write is under the game hash tag', async () => {
    const other = await h.game(['doors', 'heartbeat']);
    await doorWith(h, other.gameId, [], { key: 'k' });
    await check(h, other, 'k', 'u');
    await bulk(h, other, 'u');
    await manifest(h, other);
    await h.heartbeat(other, heartbeatBody());
    const found = await scanKeys(h.redis, h.keySpace.scanPattern(`*${other.gameId}*`));
    const base = h.keySpace.game(other.gameId).base;
    expect(found.some((k) => k.includes(':doors:dc:'))).to.equal(true);
    for (const key of found) expect(key.startsWith(`${base}:`)).to.equal(true, key);
  });
});
