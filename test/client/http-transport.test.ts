import { expect } from 'chai';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { Harness, heartbeatBody, event } from '../support/harness.js';
import { sign } from '../../src/auth/signature.js';
import { SignedTransport, TransportError, KeyFormatError, GAME_PATHS, type Clock } from '@gis/client';
import { scaledClock, StubServer, TEST_KEY, TEST_SECRET } from '../support/stub-server.js';

const SPEED = 100;

/** A clock that stands still except when someone sleeps: every sleep moves it forward by its length. */
function steppedClock(startMs: number): Clock {
  let now = startMs;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('client: signed transport', function () {
  this.timeout(10_000);

  let stub: StubServer;
  let clock: Clock;

  beforeEach(async () => {
    clock = scaledClock(SPEED);
    stub = await StubServer.start({ clock });
  });
  afterEach(async () => {
    await stub.close();
  });

  it('signs the exact bytes it sends and sets every header of the spec', async () => {
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    const body = { externalServerId: 'srv-1', note: 'Zoë 🎮 – ünïcode', nested: { b: 1, a: [1, 2] } };
    const res = await t.request('POST', GAME_PATHS.heartbeat, body);
    expect(res.status).to.equal(200);
    const [req] = stub.requests;
    expect(req!.signatureValid).to.equal(true);
    expect(req!.raw.equals(Buffer.from(JSON.stringify(body), 'utf8'))).to.equal(true);
    expect(req!.raw.equals(res.body)).to.equal(true);
    expect(req!.headers.authorization).to.equal(`Bearer ${TEST_KEY}`);
    expect(req!.headers['content-type']).to.equal('application/json');
    expect(req!.timestamp).to.match(/^\d+$/);
    expect(Math.abs(Number(req!.timestamp) - req!.receivedAt / 1000)).to.be.below(30);
    expect(req!.signature).to.match(/^[0-9a-f]{64}$/);
    expect(req!.query).to.match(/^nonce=[A-Za-z0-9_-]{22}$/);
    expect(req!.signature).to.equal(sign(TEST_SECRET, req!.timestamp, req!.raw, req!.query!));
  });

  it('with requestNonce false signs the spec form alone (timestamp + body) and sends no query', async () => {
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock, requestNonce: false });
    await t.request('POST', GAME_PATHS.heartbeat, { a: 1 });
    const [req] = stub.requests;
    expect(req!.query).to.equal(null);
    expect(req!.signature).to.equal(sign(TEST_SECRET, req!.timestamp, req!.raw));
    expect(req!.signatureValid).to.equal(true);
  });

  it('sends a pre-serialised body verbatim (key order and whitespace are part of the signature)', async () => {
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    const text = '{ "b" : 1,\n  "a":2 }';
    await t.request('POST', GAME_PATHS.doorsCheck, text);
    const [req] = stub.requests;
    expect(req!.raw.toString('utf8')).to.equal(text);
    expect(req!.signatureValid).to.equal(true);
  });

  it('signs a GET (door manifest) over the timestamp and its nonce query, with no body', async () => {
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    await t.request('GET', GAME_PATHS.doorsManifest);
    const [req] = stub.requests;
    expect(req!.method).to.equal('GET');
    expect(req!.raw.length).to.equal(0);
    expect(req!.query).to.match(/^nonce=[A-Za-z0-9_-]{22}$/);
    expect(req!.signature).to.equal(sign(TEST_SECRET, req!.timestamp, '', req!.query!));
    expect(req!.signatureValid).to.equal(true);
  });

  it('without the nonce signs a GET over the timestamp alone', async () => {
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock, requestNonce: false });
    await t.request('GET', GAME_PATHS.doorsManifest);
    const [req] = stub.requests;
    expect(req!.signature).to.equal(sign(TEST_SECRET, req!.timestamp, ''));
    expect(req!.signatureValid).to.equal(true);
  });

  it('answers 409 with exactly one retry, re-signed with a later timestamp over the same bytes', async () => {
    stub.enqueue(stub.error(409, 'replayed_signature'));
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    const res = await t.request('POST', GAME_PATHS.heartbeat, { a: 1 });
    expect(res.status).to.equal(200);
    expect(stub.requests).to.have.length(2);
    const [first, second] = stub.requests;
    expect(Number(second!.timestamp)).to.be.greaterThan(Number(first!.timestamp));
    expect(second!.signature).to.not.equal(first!.signature);
    expect(second!.raw.equals(first!.raw)).to.equal(true);
    expect(second!.signatureValid).to.equal(true);
    expect(res.timestamps).to.have.length(2);
    expect(res.attemptLatenciesMs).to.have.length(2);
  });

  it('does not retry a second 409', async () => {
    stub.enqueue(stub.error(409, 'replayed_signature'), stub.error(409, 'replayed_signature'));
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    const res = await t.request('POST', GAME_PATHS.heartbeat, { a: 1 });
    expect(res.status).to.equal(409);
    expect(res.errorCode).to.equal('replayed_signature');
    expect(stub.requests).to.have.length(2);
  });

  it('two servers sharing a key and fetching the manifest in the same second both succeed at once (nonce)', async () => {
    // Both sign in the same second: the clock only moves when someone sleeps.
    const still = steppedClock(Math.floor(Date.now() / 1000) * 1000 + 100);
    const a = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock: still });
    const b = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock: still });
    const [ra, rb] = await Promise.all([a.request('GET', GAME_PATHS.doorsManifest), b.request('GET', GAME_PATHS.doorsManifest)]);
    expect([ra.status, rb.status]).to.deep.equal([200, 200]);
    expect(stub.requests.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(stub.requests[0]!.timestamp).to.equal(stub.requests[1]!.timestamp);
    expect(stub.requests[0]!.signature).to.not.equal(stub.requests[1]!.signature);
  });

  it('without the nonce, two servers signing the same empty manifest in one second collide once and recover', async () => {
    const still = steppedClock(Math.floor(Date.now() / 1000) * 1000 + 100);
    const a = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock: still, requestNonce: false });
    const b = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock: still, requestNonce: false });
    const [ra, rb] = await Promise.all([a.request('GET', GAME_PATHS.doorsManifest), b.request('GET', GAME_PATHS.doorsManifest)]);
    expect([ra.status, rb.status]).to.deep.equal([200, 200]);
    expect(stub.requests.map((r) => r.status)).to.deep.equal([200, 409, 200]);
    expect(stub.requests[0]!.signature).to.equal(stub.requests[1]!.signature);
    expect(Number(stub.requests[2]!.timestamp)).to.equal(Number(stub.requests[0]!.timestamp) + 1);
  });

  it('corrects a large clock skew from serverTime when re-signing after a 409', async () => {
    await stub.close();
    stub = await StubServer.start({ clock, serverOffsetMs: 400_000 });
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    const res = await t.request('POST', GAME_PATHS.heartbeat, { a: 1 });
    expect(stub.requests.map((r) => r.status)).to.deep.equal([409, 200]);
    expect(res.status).to.equal(200);
    expect(t.clockSkewMs).to.be.closeTo(400_000, 2000);
  });

  it('sends the same request twice in one second without waiting: each attempt has its own nonce', async () => {
    const still = steppedClock(Math.floor(Date.now() / 1000) * 1000 + 100);
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock: still });
    await t.request('GET', GAME_PATHS.doorsManifest);
    await t.request('GET', GAME_PATHS.doorsManifest);
    expect(stub.requests.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(stub.requests[1]!.timestamp).to.equal(stub.requests[0]!.timestamp);
    expect(stub.requests[1]!.query).to.not.equal(stub.requests[0]!.query);
  });

  it('without the nonce never signs the same bytes twice in one second: waits for the next second instead of drawing a 409', async () => {
    const still = steppedClock(Math.floor(Date.now() / 1000) * 1000 + 100);
    const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock: still, requestNonce: false });
    await t.request('GET', GAME_PATHS.doorsManifest);
    await t.request('GET', GAME_PATHS.doorsManifest);
    expect(stub.requests.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(Number(stub.requests[1]!.timestamp)).to.equal(Number(stub.requests[0]!.timestamp) + 1);
  });

  it('throws TransportError when nothing answers', async () => {
    const url = stub.url;
    await stub.close();
    const t = new SignedTransport({ baseUrl: url, apiKey: TEST_KEY, clock, requestTimeoutMs: 1000 });
    let caught: unknown;
    try {
      await t.request('POST', GAME_PATHS.heartbeat, {});
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(TransportError);
    expect((caught as TransportError).kind).to.equal('network');
    stub = await StubServer.start({ clock });
  });

  it('rejects a key that is not svc_live_<prefix>.<secret>', () => {
    expect(() => new SignedTransport({ baseUrl: stub.url, apiKey: 'sk_test_123' })).to.throw(KeyFormatError);
    expect(() => new SignedTransport({ baseUrl: stub.url, apiKey: 'svc_live_abc' })).to.throw(KeyFormatError);
    expect(() => new SignedTransport({ baseUrl: stub.url, apiKey: 'svc_live_abc.' })).to.throw(KeyFormatError);
  });
});

describe('client: gzip against the real API (issue #16)', function () {
  this.timeout(20_000);
  const h = new Harness();
  let server: Server;
  let url: string;
  before(async () => {
    server = h.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await h.close();
  });

  it('gzips a body over gzipMinBytes, signs the compressed bytes as sent, and the API stores its events', async () => {
    const g = await h.game();
    const sent: { encoding: string | null; bytes: number }[] = [];
    const spy: typeof fetch = async (input, init) => {
      sent.push({ encoding: new Headers(init?.headers).get('content-encoding'), bytes: (init?.body as Buffer | undefined)?.length ?? 0 });
      return fetch(input, init);
    };
    const t = new SignedTransport({ baseUrl: url, apiKey: g.key, gzipMinBytes: 512, fetch: spy });
    const events = Array.from({ length: 20 }, (_, i) => event('gz', { payload: { i, text: 'a fairly repetitive payload '.repeat(4) } }));
    const big = heartbeatBody([], { externalServerId: 'gz', events });
    const res = await t.request('POST', GAME_PATHS.heartbeat, big);
    expect(res.status, res.text).to.equal(200);
    expect(gunzipSync(res.body).toString('utf8')).to.equal(JSON.stringify(big));
    const small = await t.request('POST', GAME_PATHS.bansCheck, { externalId: 'p1', externalServerId: 'gz' });
    expect(small.status, small.text).to.equal(200);
    expect(sent.map((s) => s.encoding)).to.deep.equal(['gzip', null]);
    expect(sent[0]!.bytes).to.be.below(JSON.stringify(big).length / 4);
    await h.flush(g.gameId);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, type: 'gz' } })).to.equal(events.length);
  });
});
