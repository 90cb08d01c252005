/**
 * The reference client (@gis/client) is standalone: it carries its own HMAC helper and wire types instead
 * of importing the service's (src/auth/signature.ts, src/schemas/heartbeat.ts). These tests keep the two
 * copies in agreement: the client's signatures are the service's, its limits are the service's, its
 * request types and the service's are assignable both ways (checked by `npm run typecheck`), and the
 * heartbeats it actually sends pass the service's own request schema.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as client from '@gis/client';
import { NONCE_PARAM, sign, verifyRequestSignature } from '../../src/auth/signature.js';
import * as service from '../../src/schemas/heartbeat.js';
import { COMMAND_TARGETS, COMMAND_TYPES, validateCommandPayload } from '../../src/schemas/commands.js';
import { compileValidator } from '../../src/schemas/validator.js';
import { scaledClock, StubServer, TEST_KEY, type RecordedRequest } from '../support/stub-server.js';

/** `true` when A and B are assignable to each other, else `false` (a compile error where `true` is required). */
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The declared member names of T, without its index signature. */
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

const shapesAgree: {
  request: MutuallyAssignable<client.HeartbeatRequest, service.HeartbeatRequest>;
  player: MutuallyAssignable<client.PlayerEntry, service.PlayerEntry>;
  event: MutuallyAssignable<client.EventEntry, service.EventEntry>;
} = { request: true, player: true, event: true };

describe('client: wire compatibility of the standalone package with the service', () => {
  it('signs exactly as the service verifies: spec form and request-nonce form, text and binary bodies', () => {
    expect(client.NONCE_PARAM).to.equal(NONCE_PARAM);
    const secret = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I';
    const bodies: (string | Buffer)[] = ['', '{"a":1}', '{"name":"Zoë ✓ 🚪"}', randomBytes(257)];
    for (const body of bodies) {
      for (const query of [undefined, `${NONCE_PARAM}=${randomBytes(16).toString('base64url')}`, `x=1&${NONCE_PARAM}=abc`]) {
        const ts = String(1_800_000_000 + bodies.indexOf(body));
        const signature = client.signRequest(secret, ts, body, query);
        expect(signature, `body ${bodies.indexOf(body)}, query ${query}`).to.match(/^[0-9a-f]{64}$/).and.to.equal(sign(secret, ts, body, query));
        const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
        expect(verifyRequestSignature(secret, ts, bytes, query ?? null, signature)).to.equal(query ? 'body+query' : 'body');
      }
    }
    // A different secret or timestamp gives a different signature.
    expect(client.signRequest('other', '1', '{}')).to.not.equal(client.signRequest(secret, '1', '{}'));
    expect(client.signRequest(secret, '2', '{}')).to.not.equal(client.signRequest(secret, '1', '{}'));
  });

  it('uses the service limits and the same request shapes', () => {
    expect(client.MAX_EVENTS).to.equal(service.MAX_EVENTS);
    expect(client.MAX_ACKS).to.equal(service.MAX_ACKS);
    // The real check is the type annotation of `shapesAgree` (a compile error when the shapes drift apart).
    expect(shapesAgree).to.deep.equal({ request: true, player: true, event: true });
  });

  it('types every command type the service issues, with payloads the service accepts and targets it routes', () => {
    expect([...client.COMMAND_TYPES]).to.deep.equal([...COMMAND_TYPES]);
    // One payload per member of the client's union, typed by it: a compile error if a type or field is missing.
    const payloads: { [T in client.CommandType]: client.CommandPayloads[T][] } = {
      kick: [{ reason: 'spam' }],
      mute: [{ durationSeconds: 60 }, { durationSeconds: 600, reason: 'caps' }],
      unmute: [{}, { reason: 'ok' }],
      freeze: [{}],
      teleport: [{ position: { x: 1, y: 2.5, z: -3 } }, { place: 'arena' }],
      message: [{ text: 'hello' }],
      door_set_state: [{ doorKey: 'armory', state: 'locked' }, { doorKey: 'armory', state: 'unlocked' }, { doorKey: 'armory', state: 'auto' }],
      refresh_permissions: [{}],
      shutdown: [{}, { reason: 'update' }],
      custom: [{ anything: [1, 'two'] }],
    };
    for (const type of client.COMMAND_TYPES) {
      for (const payload of payloads[type]) expect(validateCommandPayload(type, payload).payload, type).to.deep.equal(payload);
    }
    // Targets: the client's user/server split (checked against its CommandTargets at compile time) is the service's.
    const userTarget: { [T in client.CommandType]: client.UserTarget extends client.CommandTargets[T] ? true : false } = { kick: true, mute: true, unmute: true, freeze: true, teleport: true, message: true, door_set_state: false, refresh_permissions: true, shutdown: false, custom: true };
    for (const type of COMMAND_TYPES) expect(userTarget[type], type).to.equal(COMMAND_TARGETS[type] !== 'server');
  });

  it('names every heartbeat config field the service documents', () => {
    const known: Record<NamedKeys<client.HeartbeatConfig>, true> = { heartbeatIntervalSeconds: true, doorCacheTtlSeconds: true, doorsVersion: true };
    expect(Object.keys(known).sort()).to.deep.equal(service.HEARTBEAT_CONFIG_FIELDS.map((f) => f.name).sort());
  });

  it('reports its package version as the default sdkVersion', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../packages/client/package.json', import.meta.url), 'utf8')) as { name: string; version: string };
    expect(pkg.name).to.equal('@gis/client');
    expect(client.DEFAULT_SDK_VERSION).to.equal(`gis-ts-reference/${pkg.version}`);
  });

  it('sends heartbeats (roster, events, acks, failures) that pass the service request schema', async function () {
    this.timeout(10_000);
    const validate = compileValidator<service.HeartbeatRequest>(service.heartbeatRequestSchema);
    const clock = scaledClock(40);
    const stub = await StubServer.start({ clock, intervalSeconds: 15 });
    const now = Date.now();
    const command = (type: string) => ({
      id: randomUUID(),
      type,
      payload: {},
      target: { externalServerId: 'srv-compat', externalId: 'u1' },
      issuedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 3600_000).toISOString(),
    });
    const kick = command('kick');
    const mute = command('mute');
    stub.enqueue(stub.ok({ commands: [kick, mute] }));
    const c = new client.GameClient({
      baseUrl: stub.url,
      apiKey: TEST_KEY,
      externalServerId: 'srv-compat',
      externalScopeId: 'map-1',
      region: 'eu',
      maxPlayers: 16,
      clock,
      bootJitterSeconds: 0,
      onCommand: (cmd) => Promise.resolve(cmd.type === 'kick' ? { ok: true } : { ok: false, reason: 'player not on this server' }),
    });
    try {
      c.setRoster([
        { externalId: 'u1', username: 'Ann', team: 'red', joinedAt: new Date(now).toISOString() },
        { externalId: 'u2', username: 'Bob', team: null },
      ]);
      c.track({ type: 'join', externalId: 'u1' });
      c.track({ type: 'custom_score', externalId: 'u2', payload: { points: 3, tags: ['a'] } });
      c.start();
      const withResults = (r: RecordedRequest): boolean => {
        const body = r.json as { acks?: unknown[]; failures?: unknown[] } | undefined;
        return (body?.acks?.length ?? 0) > 0 && (body?.failures?.length ?? 0) > 0;
      };
      const until = Date.now() + 8000;
      while (!stub.heartbeats().some(withResults)) {
        if (Date.now() > until) throw new Error('no heartbeat carried both an ack and a failure');
        await client.realSleep(5);
      }
      const heartbeats = stub.heartbeats();
      expect(heartbeats[0]!.json.events).to.have.length(2);
      for (const hb of heartbeats) expect(() => validate(hb.json), `heartbeat ${hb.index}`).to.not.throw();
      const last = heartbeats.find(withResults)!.json as service.HeartbeatRequest;
      expect(last.acks).to.deep.equal([kick.id]);
      expect(last.failures).to.deep.equal([{ id: mute.id, reason: 'player not on this server' }]);
    } finally {
      await c.stop({ flush: false });
      await stub.close();
    }
  });
});
