/** Spec: Heartbeat request body, Errors 400/413, Versioning rule 2 (unknown fields ignored), Limits. */
import { expect } from 'chai';
import request from 'supertest';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { MAX_ROSTER } from '../../src/schemas/heartbeat.js';

const HB = '/api/v1/game/heartbeat';

describe('heartbeat validation and limits', () => {
  const h = new Harness({ MAX_ENVELOPE_BYTES: '4096' });
  let g: TestGame;
  before(async () => {
    g = await h.game();
  });
  after(() => h.close());

  it('400 for a body that is not JSON, with the envelope', async () => {
    const res = await h.signed(g, 'post', HB, undefined, { raw: '{"externalServerId": ' });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('invalid_json');
    expect(res.body.serverTime).to.be.a('string');
  });

  // [name, patch, the message names the field, error.pointer (JSON Pointer of the first failing member)]
  const cases: [string, Record<string, unknown>, RegExp, string][] = [
    ['missing externalServerId', { externalServerId: undefined }, /externalServerId/, '/externalServerId'],
    ['missing players', { players: undefined }, /players/, '/players'],
    ['missing acks', { acks: undefined }, /acks/, '/acks'],
    ['playerCount not a number', { playerCount: 'ten' }, /playerCount/, '/playerCount'],
    ['negative uptime', { uptimeSeconds: -1 }, /uptimeSeconds/, '/uptimeSeconds'],
    ['player without externalId', { players: [{ username: 'x' }] }, /players\.0/, '/players/0/externalId'],
    ['event with a bad occurredAt', { events: [{ eventId: 'e', type: 'join', occurredAt: 'yesterday' }] }, /events\.0\.occurredAt/, '/events/0/occurredAt'],
    ['event without eventId', { events: [{ type: 'join', occurredAt: new Date().toISOString() }] }, /events\.0/, '/events/0/eventId'],
    ['ack that is not a string', { acks: [42] }, /acks\.0/, '/acks/0'],
    ['body is an array', { __array: true }, /body/, ''],
  ];
  for (const [name, patch, field, pointer] of cases) {
    it(`400 naming the field: ${name}`, async () => {
      const body: Record<string, unknown> = { ...heartbeatBody(['p1'], { externalServerId: `v-${name}` }), ...patch };
      const res = await h.signed(g, 'post', HB, patch.__array ? [body] : body);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_request');
      expect(res.body.error.message).to.match(field);
      expect(res.body.error.requestId).to.be.a('string');
      expect(res.body.error.pointer).to.equal(pointer);
    });
  }

  it('error.pointer names the one bad event among good ones (a 65-character type), so a client can drop just it', async () => {
    const events = [event('join'), event('x'.repeat(65)), event('y'.repeat(65))];
    const res = await h.signed(g, 'post', HB, heartbeatBody(['p1'], { externalServerId: 'pointer', events }));
    expect(res.status).to.equal(400);
    expect(res.body.error).to.include({ code: 'invalid_request', pointer: '/events/1/type' });
    expect(res.body.error.message).to.equal('events.1.type must NOT have more than 64 characters');
    expect(Object.keys(res.body).sort()).to.deep.equal(['error', 'serverTime']);
    expect(await h.redis.exists(h.keySpace.game(g.gameId).eventStream())).to.equal(0);
    // A 400 that names no member (not JSON) carries no pointer: the field is additive, not always there.
    const notJson = await h.signed(g, 'post', HB, undefined, { raw: '{"externalServerId": ' });
    expect(notJson.body.error).to.not.have.property('pointer');
  });

  it('400 for strings PostgreSQL cannot store (lone surrogate, NUL), so no event can poison the flusher', async () => {
    for (const bad of ['"\\ud800"', '"a\\u0000b"']) {
      const raw = JSON.stringify(heartbeatBody([], { externalServerId: 'poison', events: [event('x')] })).replace('"type":"x"', `"type":${bad}`);
      const res = await h.signed(g, 'post', HB, undefined, { raw });
      expect(res.status, raw).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_request');
    }
    // a well-formed pair of surrogate escapes (an emoji) is fine
    const ok = JSON.stringify(heartbeatBody([], { externalServerId: 'poison' })).replace('"sdkVersion":"1.0.0"', '"sdkVersion":"1.0 \\ud83d\\ude00"');
    expect((await h.signed(g, 'post', HB, undefined, { raw: ok })).status).to.equal(200);
    expect(await h.redis.exists(h.keySpace.game(g.gameId).eventStream())).to.equal(0);
  });

  it('ignores unknown request fields (additive changes are not breaking)', async () => {
    const res = await h.signed(g, 'post', HB, { ...heartbeatBody(['p1']), futureField: { x: 1 }, players: [{ externalId: 'p1', username: 'a', newThing: true }] });
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['commands', 'config', 'serverTime']);
    expect(res.body.commands).to.deep.equal([]);
    expect(res.body.config.heartbeatIntervalSeconds).to.equal(20);
  });

  it('413 before parsing when the envelope is over the limit, and stores nothing', async () => {
    const players = Array.from({ length: 80 }, (_, i) => `player-${i}`);
    const body = heartbeatBody(players, { externalServerId: 'too-big' });
    expect(JSON.stringify(body).length).to.be.greaterThan(4096);
    const res = await h.heartbeat(g, body);
    expect(res.status).to.equal(413);
    expect(res.body.error.code).to.equal('envelope_too_large');
    expect(await h.redis.exists(h.keySpace.game(g.gameId).server('too-big'))).to.equal(0);
    // also when unauthenticated: size is checked first
    const anon = await request(h.app).post(HB).set('Content-Type', 'application/json').send('x'.repeat(5000));
    expect(anon.status).to.equal(413);
  });

  it(`400 for a roster over ${MAX_ROSTER} players`, async () => {
    const big = new Harness();
    try {
      const g2 = await big.game();
      const res = await big.heartbeat(g2, heartbeatBody(Array.from({ length: MAX_ROSTER + 1 }, (_, i) => `${i}`)));
      expect(res.status).to.equal(400);
      expect(res.body.error.message).to.match(/players/);
    } finally {
      await big.close();
    }
  });

  it('returns the interval of the game (15–60 s)', async () => {
    const slow = await h.game(undefined, 45);
    const res = await h.heartbeat(slow, heartbeatBody());
    expect(res.body.config.heartbeatIntervalSeconds).to.equal(45);
  });

  it('serves /healthz and /readyz with serverTime', async () => {
    const health = await request(h.app).get('/healthz');
    expect(health.status).to.equal(200);
    expect(health.body.serverTime).to.be.a('string');
    const ready = await request(h.app).get('/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.include({ status: 'ready', dependencies: { redis: 'up', postgres: 'up' } });
  });
});
