/**
 * Issue #15 item 3, "Boot herd in the client": a game's servers restart together after every update, so
 * the reference client spreads what it sends at boot and bounds its per-player requests, and honours
 * `Retry-After` (with jitter) when the service sheds load. Against the scripted stub (virtual time runs
 * SPEED times faster; gaps are checked in virtual ms with the same slack as the other client tests).
 */
import { expect } from 'chai';
import { GameClient, DoorAccess, SignedTransport, GAME_PATHS, type GameClientOptions, type Clock } from '@gis/client';
import { pause, scaledClock, StubServer, TEST_KEY, type Reply, type RecordedRequest } from '../support/stub-server.js';

const SPEED = 40;
const SLACK = 3000;

function expectAbout(actualMs: number, expectedMs: number, what: string): void {
  expect(actualMs, what).to.be.at.least(expectedMs - 50);
  expect(actualMs, what).to.be.below(expectedMs + Math.max(SLACK, expectedMs / 2));
}

const manifestBody = (s: StubServer) => ({
  version: 1,
  doorCacheTtlSeconds: 60,
  doors: [{ key: 'gate', name: 'Gate', kind: 'door', defaultEffect: 'allow', failMode: 'open', forcedState: 'auto' }],
  serverTime: new Date(s.serverNow()).toISOString(),
});
const bulkBody = (req: RecordedRequest, s: StubServer) => ({
  externalId: req.json.externalId,
  doorsVersion: 1,
  decisions: [{ doorKey: 'gate', decision: 'allow', reason: 'default_allow', ttlSeconds: 60 }],
  serverTime: new Date(s.serverNow()).toISOString(),
});
const banBody = (s: StubServer) => ({ banned: false, scope: null, expiresAt: null, reason: null, serverTime: new Date(s.serverNow()).toISOString() });

describe('client: boot herd (spread, bounded, Retry-After)', function () {
  this.timeout(15_000);
  let stub: StubServer;
  let clock: Clock;
  let client: GameClient | undefined;

  beforeEach(async () => {
    clock = scaledClock(SPEED);
    stub = await StubServer.start({ clock, intervalSeconds: 15 });
    stub.fallback = (req, s): Reply => {
      if (req.path === GAME_PATHS.doorsManifest) return { status: 200, body: manifestBody(s) };
      if (req.path === GAME_PATHS.doorsBulk) return { status: 200, body: bulkBody(req, s) };
      if (req.path === GAME_PATHS.bansCheck) return { status: 200, body: banBody(s) };
      return s.ok();
    };
    client = undefined;
  });
  afterEach(async () => {
    await client?.stop({ flush: false });
    await stub.close();
  });

  function makeClient(extra: Partial<GameClientOptions> = {}): GameClient {
    client = new GameClient({ baseUrl: stub.url, apiKey: TEST_KEY, externalServerId: 'srv-1', maxPlayers: 10, clock, random: () => 0.25, ...extra });
    return client;
  }

  it('sends the first heartbeat at a random point of the boot window (half the initial interval by default)', async () => {
    const c = makeClient({ initialIntervalSeconds: 20 });
    expect(c.bootWindowMs).to.equal(10_000);
    const startedAt = clock.now();
    c.start();
    const [first] = await stub.waitForRequests(1);
    // Not at once (0.25 of the window), and inside the window (the first request of a process is slow, and
    // SPEED scales that up, hence no tighter upper bound).
    expect(first!.receivedAt - startedAt).to.be.within(2450, 10_000);
  });

  it('with bootJitterSeconds 0 sends the first heartbeat at once', async () => {
    const c = makeClient({ bootJitterSeconds: 0, initialIntervalSeconds: 20 });
    const startedAt = clock.now();
    c.start();
    const [first] = await stub.waitForRequests(1);
    expect(first!.receivedAt - startedAt).to.be.below(SLACK);
  });

  it('waits out a 503 with Retry-After plus jitter (not the 5xx backoff)', async () => {
    stub.enqueue(stub.error(503, 'overloaded', { 'Retry-After': '2' }));
    const c = makeClient({ bootJitterSeconds: 0, backoff: { baseMs: 40_000, maxMs: 60_000 } });
    c.start();
    const reqs = await stub.waitForRequests(2);
    expectAbout(reqs[1]!.receivedAt - reqs[0]!.receivedAt, 2250, 'Retry-After 2 s + 0.25 of 1 s');
  });

  it('runs at most 4 ban checks of a server at once, and one request for concurrent checks of one user', async () => {
    let inFlight = 0;
    let most = 0;
    stub.fallback = async (req, s): Promise<Reply> => {
      if (req.path !== GAME_PATHS.bansCheck) return s.ok();
      inFlight++;
      most = Math.max(most, inFlight);
      await pause(60);
      inFlight--;
      return { status: 200, body: banBody(s) };
    };
    const c = makeClient();
    const users = Array.from({ length: 10 }, (_, i) => `u${i}`);
    const results = await Promise.all([...users.map((u) => c.checkBan(u)), c.checkBan('u0')]);
    expect(results.every((r) => r.source === 'service' && r.banned === false)).to.equal(true);
    expect(stub.requests.filter((r) => r.path === GAME_PATHS.bansCheck)).to.have.length(10);
    expect(most).to.be.within(2, 4);
  });

  it('retries a refused ban check after Retry-After (jittered) and returns the service answer', async () => {
    stub.enqueue(stub.error(503, 'overloaded', { 'Retry-After': '1' }));
    const c = makeClient();
    const result = await c.checkBan('late-joiner');
    expect(result).to.include({ banned: false, source: 'service', retries: 1 });
    const [a, b] = stub.requests;
    expectAbout(b!.receivedAt - a!.receivedAt, 1250, 'Retry-After 1 s + 0.25 of 1 s');
  });

  it('fails open when waiting out Retry-After would exceed banCheckMaxWaitSeconds', async () => {
    stub.enqueue(stub.error(429, 'rate_limited', { 'Retry-After': '30' }));
    const c = makeClient({ banCheckMaxWaitSeconds: 10 });
    const result = await c.checkBan('patient');
    expect(result).to.include({ banned: false, source: 'fail_open' });
    expect(stub.requests).to.have.length(1);
  });

  describe('doors', () => {
    function doors(bootWindowMs: number): DoorAccess {
      const transport = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
      return new DoorAccess({ request: (m, p, b) => transport.request(m, p, b), externalServerId: 'srv-1', clock, random: () => 0.5, bootWindowMs });
    }

    it('fetches the first manifest at a random point of the boot window', async () => {
      const d = doors(8000);
      const startedAt = clock.now();
      expect(await d.boot()).to.equal(true);
      const [m] = stub.requests;
      expect(m!.path).to.equal(GAME_PATHS.doorsManifest);
      expect(new URLSearchParams(m!.query ?? '').get('externalServerId')).to.equal('srv-1'); // its own manifest quota
      expect(m!.signatureValid).to.equal(true);
      expectAbout(m!.receivedAt - startedAt, 4000, 'random 0.5 of an 8 s window');
    });

    it('spreads bulk checks of players joining in the boot window; a door used first sends that player\'s bulk at once and answers from it', async () => {
      const d = doors(8000);
      const booted = d.boot();
      const early = d.onJoin('early'); // due at 0.5 of the window's remainder, ~4 s
      const eager = d.onJoin('eager');
      const answer = await d.check('gate', 'eager'); // uses a door before its bulk was due
      expect(answer).to.include({ allowed: true, source: 'cache' });
      const bulkUsers = () => stub.requests.filter((r) => r.path === GAME_PATHS.doorsBulk).map((r) => r.json.externalId);
      expect(bulkUsers()).to.deep.equal(['eager']);
      expect(stub.requests.some((r) => r.path === GAME_PATHS.doorsCheck)).to.equal(false);
      await Promise.all([booted, early, eager]);
      expect(bulkUsers()).to.deep.equal(['eager', 'early']);
    });

    it('refresh_permissions forgets every cached decision even when the doors version is unchanged (issue #28)', async () => {
      const d = doors(0);
      expect(await d.boot()).to.equal(true);
      await d.onJoin('p1');
      expect((await d.check('gate', 'p1')).source).to.equal('cache');
      const outcome = await d.handleCommand({ id: 'c1', type: 'refresh_permissions', payload: {}, target: { externalServerId: 'srv-1' }, issuedAt: '', expiresAt: '' });
      expect(outcome).to.deep.equal({ ok: true });
      const paths = () => stub.requests.map((r) => r.path.split('/').pop());
      expect(paths()).to.deep.equal(['manifest', 'bulk', 'manifest']); // the manifest came back at version 1 again
      stub.enqueue({ status: 200, body: { doorKey: 'gate', decision: 'deny', reason: 'role_revoked', ttlSeconds: 60, serverTime: new Date(stub.serverNow()).toISOString() } });
      expect(await d.check('gate', 'p1')).to.include({ allowed: false, reason: 'role_revoked', source: 'service' });
      expect(paths().at(-1)).to.equal('check');
    });

    it('refresh_permissions aimed at a user forgets only that user\'s decisions and bulk-checks them again', async () => {
      const d = doors(0);
      expect(await d.boot()).to.equal(true);
      await d.onJoin('p1');
      await d.onJoin('p2');
      const outcome = await d.handleCommand({ id: 'c2', type: 'refresh_permissions', payload: {}, target: { externalServerId: 'srv-1', externalId: 'p1' }, issuedAt: '', expiresAt: '' });
      expect(outcome).to.deep.equal({ ok: true });
      const sent = () => stub.requests.map((r) => `${r.path.split('/').pop()} ${String(r.json?.externalId ?? '')}`.trim());
      expect(sent()).to.deep.equal(['manifest', 'bulk p1', 'bulk p2', 'bulk p1']); // no manifest: the doors did not change
      expect((await d.check('gate', 'p1')).source).to.equal('cache');
      expect((await d.check('gate', 'p2')).source).to.equal('cache');
      expect(sent()).to.have.length(4);
    });

    it('a join bulk check that got no answer is asked again at the player\'s first door, instead of a single check per door', async () => {
      const d = doors(0);
      expect(await d.boot()).to.equal(true);
      stub.enqueue(stub.error(500, 'internal'));
      await d.onJoin('p1');
      expect(await d.check('gate', 'p1')).to.include({ allowed: true, reason: 'default_allow', source: 'service' });
      expect(await d.check('gate', 'p1')).to.include({ source: 'cache' });
      stub.enqueue(stub.error(500, 'internal'));
      await d.onJoin('p2');
      stub.enqueue(stub.error(500, 'internal'));
      expect(await d.check('gate', 'p2')).to.include({ allowed: true, source: 'fail_mode', reason: 'fail_open' });
      expect(stub.requests.map((r) => `${r.path.split('/').pop()} ${r.status}`)).to.deep.equal([
        'manifest 200',
        'bulk 500',
        'bulk 200',
        'bulk 500',
        'bulk 500', // no single check after it: the player is at the door, failMode answers
      ]);
    });

    it('retries a manifest and a bulk check refused with Retry-After; a single check is answered by failMode at once', async () => {
      const d = doors(0);
      stub.enqueue(stub.error(503, 'overloaded', { 'Retry-After': '1' }));
      expect(await d.boot()).to.equal(true);
      stub.enqueue(stub.error(429, 'rate_limited', { 'Retry-After': '1' }));
      await d.onJoin('p1');
      expect((await d.check('gate', 'p1')).source).to.equal('cache');
      stub.enqueue(stub.error(503, 'overloaded', { 'Retry-After': '1' }));
      const single = await d.check('gate', 'p2');
      expect(single).to.include({ allowed: true, source: 'fail_mode', reason: 'fail_open' });
      expect(stub.requests.map((r) => `${r.path.split('/').pop()} ${r.status}`)).to.deep.equal([
        'manifest 503',
        'manifest 200',
        'bulk 429',
        'bulk 200',
        'check 503',
      ]);
    });
  });
});
