/**
 * POST /api/v1/game/bans/check with `includeDoors` (spec: Endpoints › bans/check and doors/bulk, request
 * fields not shown; docs/decisions.md "One request per joining player"): the ban check answers the
 * joining user's bulk door check in the same request, under one replay claim, counted against both
 * quotas, and never gives door decisions to a banned user.
 */
import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { createDb } from '../../src/store/prisma.js';
import { sign } from '../../src/auth/signature.js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { setLogLevel } from '../../src/log.js';
import { Harness, type TestGame } from '../support/harness.js';
import { bansCheckResponseSchema } from '../../src/schemas/bans-check.js';
import { BAN_CHECK_QUOTA, DOOR_BULK_QUOTA } from '../../src/limits/quotas.js';
import { banService, CHECK } from './support.js';
import { bulk, doorWith } from '../doors/door-fixtures.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;
const { $id: _id, ...responseSchema } = bansCheckResponseSchema;
const validate = addFormats(new Ajv({ strict: false })).compile(responseSchema);

describe('POST /api/v1/game/bans/check with includeDoors', () => {
  const h = new Harness();
  let g: TestGame;
  let nonce = 0;
  const join = (game: TestGame, externalId: string, extra: Record<string, unknown> = {}) =>
    h.signed(game, 'post', CHECK, { externalId, externalServerId: 'server-1', includeDoors: true, nonce: ++nonce, ...extra });

  before(async () => {
    setLogLevel(h.config.logLevel);
    g = await h.game(['heartbeat', 'doors']);
    await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['vip'] }], { key: 'lounge', kind: 'zone', failMode: 'open' });
    await doorWith(h, g.gameId, [], { key: 'armory', kind: 'locker' });
  });
  after(() => h.close());

  it('answers the ban check and the same decisions as doors/bulk, and access-logs them', async () => {
    const stream = h.keySpace.game(g.gameId).accessStream();
    const before = await h.redis.xlen(stream);
    const res = await join(g, 'vip');
    expect(res.status, res.text).to.equal(200);
    expect(validate(res.body), JSON.stringify(validate.errors)).to.equal(true);
    expect(res.body).to.include({ banned: false, scope: null, expiresAt: null, reason: null });
    const alone = await bulk(h, g, 'vip');
    expect(res.body.doors).to.deep.equal({ externalId: alone.body.externalId, doorsVersion: alone.body.doorsVersion, decisions: alone.body.decisions });
    expect(res.body.doors.decisions.map((d: { doorKey: string; decision: string }) => [d.doorKey, d.decision])).to.deep.equal([
      ['armory', 'deny'],
      ['lounge', 'allow'],
    ]);
    // one access-log entry for the join check, one for the doors/bulk
    expect(await h.redis.xlen(stream)).to.equal(before + 2);
  });

  it('gives a banned user no door decisions', async () => {
    await banService(h).create({ workspaceId: g.workspaceId, externalId: 'cheater', scope: 'game', gameId: g.gameId, reason: 'aimbot', issuedBy: 'test' });
    const res = await join(g, 'cheater');
    expect(res.status, res.text).to.equal(200);
    expect(validate(res.body), JSON.stringify(validate.errors)).to.equal(true);
    expect(res.body).to.include({ banned: true, scope: 'game', reason: 'aimbot', doors: null });
  });

  it('without includeDoors the answer has no doors field', async () => {
    const res = await join(g, 'plain', { includeDoors: false });
    expect(res.status).to.equal(200);
    expect(res.body).to.have.all.keys('banned', 'scope', 'expiresAt', 'reason', 'serverTime');
  });

  it('needs scope doors as well as heartbeat: 403 scope_missing', async () => {
    const heartbeatOnly = await h.game(['heartbeat']);
    const res = await join(heartbeatOnly, 'vip');
    expect(res.status, res.text).to.equal(403);
    expect(res.body.error.code).to.equal('scope_missing');
    const plain = await join(heartbeatOnly, 'vip', { includeDoors: false });
    expect(plain.status).to.equal(200);
  });

  it('claims the signature once: the same request again is a replay (409)', async () => {
    const body = { externalId: 'replayed', externalServerId: 'server-1', includeDoors: true };
    const ts = Math.floor(Date.now() / 1000);
    const first = await h.signed(g, 'post', CHECK, body, { timestamp: ts });
    expect(first.status, first.text).to.equal(200);
    const again = await h.signed(g, 'post', CHECK, body, { timestamp: ts });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('replayed_signature');
  });

  it('counts against the ban-check quota: past it, 429 with Retry-After', async () => {
    for (let i = 0; i < BAN_CHECK_QUOTA; i++) expect((await join(g, 'busy-user')).status).to.equal(200);
    const res = await join(g, 'busy-user');
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('rate_limited');
    expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
  });

  it('without Postgres the ban check is still answered from Redis, with doors null', async () => {
    await join(g, 'warm-blocklist'); // the workspace's blocklist is built in Redis
    const deadDb = createDb('postgresql://postgres@127.0.0.1:1/none', 1);
    const app = createApp({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: deadDb, verifier: h.verifier });
    try {
      const raw = JSON.stringify({ externalId: 'pg-down', externalServerId: 'server-1', includeDoors: true });
      const ts = String(Math.floor(Date.now() / 1000));
      const res = await request(app).post(CHECK).set('Authorization', `Bearer ${g.key}`).set('X-Service-Timestamp', ts)
        .set('X-Service-Signature', sign(g.secret, ts, raw)).set('Content-Type', 'application/json').send(raw);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ banned: false, doors: null });
    } finally {
      await deadDb.$disconnect();
    }
  });

  it('counts against the bulk quota too: past it the ban is still answered, with doors null', async () => {
    for (let i = 0; i < DOOR_BULK_QUOTA; i++) expect((await bulk(h, g, 'bulky')).status).to.equal(200);
    expect((await bulk(h, g, 'bulky')).status).to.equal(429);
    const res = await join(g, 'bulky');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.include({ banned: false, doors: null });
  });
});
