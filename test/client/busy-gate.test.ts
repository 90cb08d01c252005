/**
 * Issue #32 item 2, "the refused do not come back as the same herd": after a 503 with Retry-After to one
 * of a server's door or ban requests, the reference client sends none of them until that time has passed
 * (packages/client/src/busy-gate.ts). Against the scripted stub, virtual time SPEED times faster.
 */
import { expect } from 'chai';
import { BusyGate, DoorAccess, GameClient, SignedTransport, GAME_PATHS, type Clock } from '@gis/client';
import { scaledClock, StubServer, TEST_KEY, type Reply, type RecordedRequest } from '../support/stub-server.js';

const SPEED = 40;

const manifestBody = (s: StubServer) => ({
  version: 1,
  doorCacheTtlSeconds: 60,
  doors: [{ key: 'gate', name: 'Gate', kind: 'door', defaultEffect: 'allow', failMode: 'closed', forcedState: 'auto' }],
  serverTime: new Date(s.serverNow()).toISOString(),
});
const decision = { doorKey: 'gate', decision: 'allow', reason: 'default_allow', policyId: null, failMode: 'closed', forcedState: 'auto', ttlSeconds: 60 };
const busy = (_req: RecordedRequest, s: StubServer): Reply => s.error(503, 'overloaded', { 'Retry-After': '5' });

describe('client: a 503 with Retry-After holds back the server\'s door and ban requests (busy gate)', function () {
  this.timeout(20_000);
  let stub: StubServer;
  let clock: Clock;
  const sent = (path: string): RecordedRequest[] => stub.requests.filter((r) => r.path === path);

  beforeEach(async () => {
    clock = scaledClock(SPEED);
    stub = await StubServer.start({ clock, intervalSeconds: 15 });
  });
  afterEach(async () => {
    await stub.close();
  });

  it('a single door check after a 503 is not sent and gets its failMode; a bulk check waits for Retry-After and goes then', async () => {
    const transport = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    const gate = new BusyGate(clock);
    const doors = new DoorAccess({ request: (m, p, b) => transport.request(m, p, b), externalServerId: 'srv-1', clock, random: () => 0, busyGate: gate });
    stub.fallback = (req, s) => (req.path === GAME_PATHS.doorsManifest ? { status: 200, body: manifestBody(s) } : undefined);
    expect(await doors.refreshManifest()).to.equal(true);

    stub.enqueue(busy);
    expect(await doors.check('gate', 'ann')).to.include({ allowed: false, source: 'fail_mode' });
    const refusedAt = sent(GAME_PATHS.doorsCheck)[0]!.receivedAt;
    expect(gate.remainingMs()).to.be.within(4000, 5000);

    // 20 players open the door while the gate is closed: no request, the door's failMode (closed)
    for (let i = 0; i < 20; i++) expect(await doors.check('gate', `p${i}`)).to.include({ allowed: false, source: 'fail_mode' });
    expect(sent(GAME_PATHS.doorsCheck)).to.have.length(1);

    // a joining player's bulk check may wait: it goes once the Retry-After has passed
    stub.fallback = (req, s) =>
      req.path === GAME_PATHS.doorsBulk ? { status: 200, body: { externalId: req.json.externalId, doorsVersion: 1, decisions: [decision], serverTime: new Date(s.serverNow()).toISOString() } } : undefined;
    await doors.onJoin('bob');
    const [bulk] = sent(GAME_PATHS.doorsBulk);
    expect(bulk!.receivedAt - refusedAt).to.be.at.least(5000 - 50);
    expect(await doors.check('gate', 'bob')).to.include({ allowed: true, source: 'cache' });

    // open again: a single check is sent
    stub.fallback = (req, s) => (req.path === GAME_PATHS.doorsCheck ? { status: 200, body: { ...decision, externalId: 'cy', doorsVersion: 1, cached: false, serverTime: new Date(s.serverNow()).toISOString() } } : undefined);
    expect(await doors.check('gate', 'cy')).to.include({ allowed: true, source: 'service' });
    expect(sent(GAME_PATHS.doorsCheck)).to.have.length(2);
  });

  it('a 429 (one user\'s quota) does not hold back the other requests', async () => {
    const transport = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, clock });
    const doors = new DoorAccess({ request: (m, p, b) => transport.request(m, p, b), externalServerId: 'srv-1', clock, random: () => 0 });
    stub.fallback = (req, s) => (req.path === GAME_PATHS.doorsManifest ? { status: 200, body: manifestBody(s) } : s.error(429, 'rate_limited', { 'Retry-After': '30' }));
    expect(await doors.refreshManifest()).to.equal(true);
    await doors.check('gate', 'ann');
    await doors.check('gate', 'bob');
    expect(sent(GAME_PATHS.doorsCheck)).to.have.length(2);
  });

  it('ban checks share the gate with the server\'s doors: after a 503 they wait within their budget, past it they fail open without a request', async () => {
    const client = new GameClient({ baseUrl: stub.url, apiKey: TEST_KEY, externalServerId: 'srv-1', maxPlayers: 30, clock, random: () => 0, banCheckMaxWaitSeconds: 3 });
    const doors = new DoorAccess({ request: (m, p, b) => client.request(m, p, b), externalServerId: 'srv-1', clock, random: () => 0, busyGate: client.busyGate });
    stub.fallback = (req, s) => (req.path === GAME_PATHS.doorsManifest ? { status: 200, body: manifestBody(s) } : req.path === GAME_PATHS.bansCheck ? { status: 200, body: { banned: false, scope: null, expiresAt: null, reason: null, serverTime: new Date(s.serverNow()).toISOString() } } : undefined);
    expect(await doors.refreshManifest()).to.equal(true);
    stub.enqueue(busy);
    await doors.check('gate', 'ann'); // 503, Retry-After 5 s: the gate closes for the ban checks too
    const result = await client.checkBan('dan');
    expect(result).to.include({ banned: false, source: 'fail_open' }); // 5 s is beyond its 3 s budget
    expect(sent(GAME_PATHS.bansCheck)).to.have.length(0);
    await clock.sleep(2500); // 2.5 s left: within the budget, it waits and asks
    expect(await client.checkBan('eve')).to.include({ banned: false, source: 'service' });
    expect(sent(GAME_PATHS.bansCheck)).to.have.length(1);
    await client.stop({ flush: false });
  });
});
