/**
 * Issue #15 item 1, "No false replays on shared keys" (spec: Authentication rule 3; docs/api.md "Replays on a
 * shared key"). Every server of a game signs with the one key of the game. Against the real API over real
 * Redis and Postgres:
 * - two servers making the same request in the same second both get 200 at the first attempt, on every
 *   endpoint (the reference transport sends `?nonce=<random>` signed with the body);
 * - a byte-identical resend of one of those requests (same URL with its nonce, same headers, same body)
 *   still gets 409 `replayed_signature`;
 * - a spec-only client (timestamp + body, no query) keeps working; a nonce that was changed in flight
 *   fails the signature (401), and a spec-form signature sent again under another query is still a replay.
 */
import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { SignedTransport, GAME_PATHS, type FetchLike, type TransportResponse, type Clock } from '@gis/client';
import { sign } from '../../src/auth/signature.js';
import { doorWith } from '../doors/door-fixtures.js';

/** One request exactly as the transport sent it. */
interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** A clock frozen inside one second (sleeps move it, but nothing here sleeps unless a 409 came). */
function frozenClock(): Clock {
  let now = Math.floor(Date.now() / 1000) * 1000 + 50;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('replay cache on a key shared by a fleet (request nonce)', function () {
  this.timeout(30_000);
  const h = new Harness();
  let g: TestGame;
  let server: Server;
  let base: string;

  before(async () => {
    g = await h.game(undefined, 15);
    await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }], { key: 'lobby', failMode: 'open' });
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await h.close();
  });

  /** A "game server": the reference transport on the shared key, recording what it sends. */
  function gameServer(clock: Clock, sent: Sent[]): SignedTransport {
    const recording: FetchLike = (url, init) => {
      sent.push({ url, method: init.method, headers: { ...init.headers }, body: init.body });
      return fetch(url, init);
    };
    return new SignedTransport({ baseUrl: base, apiKey: g.key, clock, fetch: recording });
  }

  /** Sends `s` again, byte for byte. */
  async function resend(s: Sent): Promise<{ status: number; code?: string }> {
    const res = await fetch(s.url, { method: s.method, headers: s.headers, body: s.body });
    const json = (await res.json()) as { error?: { code?: string } };
    return { status: res.status, code: json.error?.code };
  }

  const cases: { name: string; method: 'GET' | 'POST'; path: string; body: (server: string) => unknown }[] = [
    { name: 'GET doors/manifest (no body at all)', method: 'GET', path: GAME_PATHS.doorsManifest, body: () => undefined },
    { name: 'POST doors/check', method: 'POST', path: GAME_PATHS.doorsCheck, body: () => ({ doorKey: 'lobby', externalId: 'u-1' }) },
    { name: 'POST doors/bulk', method: 'POST', path: GAME_PATHS.doorsBulk, body: () => ({ externalId: 'u-2' }) },
    { name: 'POST bans/check', method: 'POST', path: GAME_PATHS.bansCheck, body: () => ({ externalId: 'u-3', externalServerId: 'srv-shared' }) },
    // Two instances reporting byte-identical heartbeats (same id, roster and uptime) in one second.
    { name: 'POST heartbeat', method: 'POST', path: GAME_PATHS.heartbeat, body: () => ({ ...heartbeatBody(['p1']), uptimeSeconds: 7 }) },
  ];

  for (const c of cases) {
    it(`${c.name}: two servers, same bytes, same second: both 200 first time; a byte-identical resend is 409`, async () => {
      const clock = frozenClock();
      const sentA: Sent[] = [];
      const sentB: Sent[] = [];
      const body = c.body('x');
      const [a, b]: [TransportResponse, TransportResponse] = await Promise.all([
        gameServer(clock, sentA).request(c.method, c.path, body),
        gameServer(clock, sentB).request(c.method, c.path, body),
      ]);
      expect([a.status, b.status], JSON.stringify([a.json, b.json])).to.deep.equal([200, 200]);
      // One attempt each (no 409 retry), same timestamp, same body bytes, different signatures.
      expect([a.timestamps.length, b.timestamps.length]).to.deep.equal([1, 1]);
      expect(a.timestamps[0]).to.equal(b.timestamps[0]);
      expect(a.body.equals(b.body)).to.equal(true);
      expect(sentA[0]!.headers['x-service-signature']).to.not.equal(sentB[0]!.headers['x-service-signature']);

      const replay = await resend(sentA[0]!);
      expect(replay).to.deep.equal({ status: 409, code: 'replayed_signature' });
    });
  }

  it('a spec-only client (timestamp + body, no query) still works and is still replay-protected', async () => {
    const ts = Math.floor(Date.now() / 1000);
    const first = await h.signed(g, 'get', GAME_PATHS.doorsManifest, undefined, { timestamp: ts });
    expect(first.status).to.equal(200);
    const again = await h.signed(g, 'get', GAME_PATHS.doorsManifest, undefined, { timestamp: ts });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('replayed_signature');
  });

  it('a nonce changed in flight fails the signature (401); a spec-form signature under another query is still a replay (409)', async () => {
    const ts = String(Math.floor(Date.now() / 1000));
    const withNonce = sign(g.secret, ts, '', 'nonce=original');
    const send = (query: string, signature: string) =>
      fetch(`${base}${GAME_PATHS.doorsManifest}?${query}`, {
        headers: { authorization: `Bearer ${g.key}`, 'x-service-timestamp': ts, 'x-service-signature': signature, 'content-type': 'application/json' },
      }).then(async (r) => ({ status: r.status, code: ((await r.json()) as { error?: { code?: string } }).error?.code }));
    expect(await send('nonce=tampered', withNonce)).to.deep.equal({ status: 401, code: 'bad_signature' });
    expect((await send('nonce=original', withNonce)).status).to.equal(200);

    // The query is not covered by a spec-form signature, so changing it makes no new request.
    const specForm = sign(g.secret, String(Number(ts) - 1), '');
    const sendSpec = (query: string) =>
      fetch(`${base}${GAME_PATHS.doorsManifest}?${query}`, {
        headers: { authorization: `Bearer ${g.key}`, 'x-service-timestamp': String(Number(ts) - 1), 'x-service-signature': specForm, 'content-type': 'application/json' },
      }).then((r) => r.status);
    expect(await sendSpec('cachebuster=1')).to.equal(200);
    expect(await sendSpec('cachebuster=2')).to.equal(409);
  });
});
