/**
 * Each versioning rule the code can guard (spec: Versioning 1-6; issue #7 "a test guards each versioning
 * rule that code can guard"). Rule 3 (breaking changes need a new major path) is guarded by the OpenAPI
 * drift test plus the required-field check below: removing, renaming or narrowing a field changes the
 * generated document, and a new required request field fails here.
 */
import { expect } from 'chai';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { heartbeatRequestSchema, heartbeatResponseSchema } from '../../src/schemas/heartbeat.js';
import { doorBulkRequestSchema, doorCheckRequestSchema } from '../../src/schemas/doors.js';
import { bansCheckRequestSchema } from '../../src/schemas/bans-check.js';
import { createDoor } from '../../src/doors/door-admin-service.js';
import { issueCommand } from '../../src/commands/command-service.js';

describe('versioning rules', () => {
  const h = new Harness();
  let g: TestGame;
  before(async () => {
    g = await h.game();
    await createDoor({ db: h.db, redis: h.redis, keySpace: h.keySpace }, { gameId: g.gameId, key: 'vault', name: 'Vault' }, 'test');
  });
  after(() => h.close());

  it('rule 1: the version is the path segment; only /api/v1/ exists', async () => {
    const body = heartbeatBody(['p1'], { externalServerId: 'v1-path' });
    expect((await h.heartbeat(g, body)).status).to.equal(200);
    for (const p of ['/api/v2/game/heartbeat', '/api/game/heartbeat', '/api/v1/game/heartbeat/v2']) {
      const res = await h.signed(g, 'post', p, heartbeatBody([], { externalServerId: 'v1-path' }));
      expect(res.status, p).to.equal(404);
      expect(res.body.error.code, p).to.equal('unknown_route');
    }
  });

  it('rule 2: unknown request fields are ignored on every endpoint, at every depth', async () => {
    const hb = await h.signed(g, 'post', '/api/v1/game/heartbeat', {
      ...heartbeatBody(['p1'], { externalServerId: 'v-unknown', events: [{ eventId: `e-${Date.now()}`, type: 'join', occurredAt: new Date().toISOString(), futureEventField: 1 }] as never }),
      futureTopLevel: { nested: true },
      players: [{ externalId: 'p1', username: 'a', futurePlayerField: 'x' }],
    });
    expect(hb.status).to.equal(200);
    const check = await h.signed(g, 'post', '/api/v1/game/doors/check', { doorKey: 'vault', externalId: 'p1', futureField: 1 });
    expect(check.status).to.equal(200);
    const bulk = await h.signed(g, 'post', '/api/v1/game/doors/bulk', { externalId: 'p1', futureField: [1, 2] });
    expect(bulk.status).to.equal(200);
    const ban = await h.signed(g, 'post', '/api/v1/game/bans/check', { externalId: 'p1', externalServerId: 'v-unknown', futureField: 'x' });
    expect(ban.status).to.equal(200);
    expect(ban.body.banned).to.equal(false);
  });

  it('rule 2: request schemas never refuse additional properties', () => {
    const walk = (s: unknown, where: string): void => {
      if (!s || typeof s !== 'object') return;
      expect((s as Record<string, unknown>).additionalProperties, where).to.not.equal(false);
      for (const [k, v] of Object.entries(s)) walk(v, `${where}.${k}`);
    };
    for (const [name, schema] of Object.entries({ heartbeatRequestSchema, doorCheckRequestSchema, doorBulkRequestSchema, bansCheckRequestSchema })) walk(schema, name);
  });

  it('rule 3: the heartbeat requires exactly the fields the spec marks required (a new required field is breaking)', () => {
    expect([...heartbeatRequestSchema.required].sort()).to.deep.equal(['acks', 'events', 'externalServerId', 'maxPlayers', 'players', 'playerCount', 'sdkVersion', 'uptimeSeconds'].sort());
    expect([...doorCheckRequestSchema.required].sort()).to.deep.equal(['doorKey', 'externalId']);
    expect([...doorBulkRequestSchema.required]).to.deep.equal(['externalId']);
  });

  it('rule 5: the heartbeat response is exactly { commands, config, serverTime }, with or without commands', async () => {
    const sid = 'v-exact';
    expect(heartbeatResponseSchema.additionalProperties).to.equal(false);
    await h.heartbeat(g, heartbeatBody(['p9'], { externalServerId: sid }));
    await issueCommand({ db: h.db, redis: h.redis, keySpace: h.keySpace }, { gameId: g.gameId, type: 'kick', payload: { reason: 'x' }, target: { externalId: 'p9' }, issuedBy: 'test' });
    const res = await h.heartbeat(g, heartbeatBody(['p9'], { externalServerId: sid }));
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal(['commands', 'config', 'serverTime']);
    expect(res.body.commands).to.have.length(1);
    expect(res.body).to.not.have.property('warning');
  });

  it('rule 6: every error keeps the envelope { error: { code, message, requestId }, serverTime }', async () => {
    const bad = [
      await h.signed(g, 'post', '/api/v1/game/heartbeat', undefined, { raw: '{' }),
      await h.signed({ key: 'svc_live_nope.nope', secret: 'x' }, 'post', '/api/v1/game/heartbeat', heartbeatBody()),
      await h.signed(g, 'post', '/api/v1/game/doors/check', { doorKey: 'no-such-door', externalId: 'p1' }),
      await h.signed(g, 'post', '/api/v1/game/heartbeat', heartbeatBody(), { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
    ];
    expect(bad.map((r) => r.status)).to.deep.equal([400, 401, 404, 409]);
    for (const r of bad) {
      expect(Object.keys(r.body).sort()).to.deep.equal(['error', 'serverTime']);
      expect(Object.keys(r.body.error).sort()).to.deep.equal(['code', 'message', 'requestId']);
    }
  });
});
