import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { GameClient, type GameClientOptions, type CommandEntry, type CommandType, type ProblemInfo, type SetupErrorInfo, type Clock } from '@gis/client';
import { pause, scaledClock, StubServer, TEST_KEY, type RecordedRequest } from '../support/stub-server.js';

/** Virtual time runs this many times faster than real time: a 15 s interval takes 375 real ms. */
const SPEED = 40;
/** Slack on measured gaps, virtual ms (request latency and timer granularity, scaled up by SPEED). */
const SLACK = 3000;

/** Upper bound of a gap expected to be `ms`: generous, as latency on a loaded machine is scaled by SPEED. */
const upper = (ms: number): number => ms + Math.max(SLACK, ms / 2);

async function until(cond: () => boolean, what: string, timeoutMs = 4000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await pause(2);
  }
}

/** Virtual ms between the arrivals of heartbeats `i - 1` and `i`. */
function gap(reqs: RecordedRequest[], i: number): number {
  return reqs[i]!.receivedAt - reqs[i - 1]!.receivedAt;
}

function expectGap(reqs: RecordedRequest[], i: number, expectedMs: number): void {
  const g = gap(reqs, i);
  expect(g, `gap before heartbeat ${i}`).to.be.at.least(expectedMs - 50);
  expect(g, `gap before heartbeat ${i}`).to.be.below(upper(expectedMs));
}

function command(type: CommandType, extra: Partial<CommandEntry> = {}): CommandEntry {
  const now = Date.now();
  // Any payload: the stub server sends what a test gives it, as the service would send a newer type.
  return {
    id: randomUUID(),
    type,
    payload: {},
    target: { externalServerId: 'srv-1', externalId: 'u1' },
    issuedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 3600_000).toISOString(),
    ...extra,
  } as CommandEntry;
}

describe('client: game client heartbeat loop', function () {
  this.timeout(10_000);

  let stub: StubServer;
  let clock: Clock;
  let client: GameClient | undefined;
  let problems: ProblemInfo[];

  function makeClient(extra: Partial<GameClientOptions> = {}): GameClient {
    client = new GameClient({
      baseUrl: stub.url,
      apiKey: TEST_KEY,
      externalServerId: 'srv-1',
      externalScopeId: 'map-1',
      region: 'eu',
      maxPlayers: 10,
      clock,
      random: () => 0.5,
      initialIntervalSeconds: 15,
      backoff: { baseMs: 8000, maxMs: 60_000 },
      onProblem: (p) => problems.push(p),
      ...extra,
    });
    return client;
  }

  beforeEach(async () => {
    clock = scaledClock(SPEED);
    stub = await StubServer.start({ clock, intervalSeconds: 15 });
    problems = [];
    client = undefined;
  });
  afterEach(async () => {
    await client?.stop({ flush: false });
    await stub.close();
  });

  it('sends a signed heartbeat with the spec fields and the full roster', async () => {
    const c = makeClient();
    c.setRoster([
      { externalId: 'u1', username: 'Ann', team: 'red' },
      { externalId: 'u2', username: 'Bob' },
    ]);
    c.start();
    const [hb] = await stub.waitForRequests(1);
    expect(hb!.signatureValid).to.equal(true);
    expect(hb!.path).to.equal('/api/v1/game/heartbeat');
    expect(Object.keys(hb!.json)).to.deep.equal([
      'externalServerId',
      'externalScopeId',
      'playerCount',
      'maxPlayers',
      'sdkVersion',
      'uptimeSeconds',
      'region',
      'players',
      'events',
      'acks',
    ]);
    expect(hb!.json).to.include({ externalServerId: 'srv-1', externalScopeId: 'map-1', playerCount: 2, maxPlayers: 10, region: 'eu' });
    expect(hb!.json.players.map((p: { externalId: string }) => p.externalId)).to.deep.equal(['u1', 'u2']);
    expect(Number.isInteger(hb!.json.uptimeSeconds)).to.equal(true);
  });

  it('reuses one keep-alive connection across heartbeats and exposes the last config', async () => {
    stub.fallback = (_req, s) => {
      const reply = s.ok();
      (reply.body as { config: Record<string, unknown> }).config.doorsVersion = 7; // additive field
      return reply;
    };
    const c = makeClient();
    c.start();
    await stub.waitForRequests(3);
    expect(stub.connections).to.equal(1);
    await until(() => c.config !== undefined, 'a config');
    expect(c.config).to.deep.equal({ heartbeatIntervalSeconds: 15, doorsVersion: 7 });
  });

  it('stamps eventId and occurredAt when the event happens, not when the heartbeat is built', async () => {
    const c = makeClient();
    const e = c.track({ type: 'death', externalId: 'u1', payload: { by: 'u2' } });
    const trackedAt = clock.now();
    await clock.sleep(5000);
    c.start();
    const [hb] = await stub.waitForRequests(1);
    expect(e.eventId).to.match(/^[0-9a-f-]{36}$/);
    expect(hb!.json.events).to.deep.equal([e]);
    expect(Math.abs(Date.parse(e.occurredAt) - trackedAt)).to.be.below(1000);
    expect(hb!.receivedAt - Date.parse(e.occurredAt)).to.be.at.least(4900);
  });

  it('keeps events queued until a 200, re-sends them unchanged, and drops them after', async () => {
    let queuedAtRetry = -1;
    stub.enqueue(stub.error(503, 'unavailable'), (req, s) => {
      queuedAtRetry = c.stats().eventsQueued;
      return s.ok();
    });
    const c = makeClient();
    const e1 = c.track({ type: 'join', externalId: 'u1' });
    const e2 = c.track({ type: 'spawn', externalId: 'u1' });
    c.start();
    const reqs = await stub.waitForRequests(2);
    expect(reqs[0]!.json.events).to.deep.equal([e1, e2]);
    expect(reqs[1]!.json.events).to.deep.equal([e1, e2]);
    expect(queuedAtRetry, 'events still queued while the retry is in flight').to.equal(2);
    await until(() => c.stats().eventsQueued === 0, 'queue to empty after the 200');
    await stub.waitForRequests(3);
    expect(stub.requests[2]!.json.events).to.deep.equal([]);
    expect(c.stats().eventsAcked).to.equal(2);
  });

  it('counts events of a heartbeat without an answer as outcome unknown until a 200 carries them, and reports them', async () => {
    stub.enqueue(async (_req, s) => {
      await pause(600); // past the client's request timeout: no answer reaches it
      return s.ok();
    });
    const unknown: unknown[][] = [];
    const c = makeClient({ requestTimeoutMs: 150, onHeartbeatUnknown: (r) => unknown.push(r.events) });
    const e1 = c.track({ type: 'join', externalId: 'u1', payload: { team: 'red' } });
    const e2 = c.track({ type: 'spawn', externalId: 'u1' });
    c.start();
    await until(() => unknown.length === 1, 'the heartbeat to time out');
    expect(unknown[0]).to.deep.equal([e1, e2]);
    expect(c.stats()).to.include({ eventsQueued: 2, eventsOutcomeUnknown: 2, heartbeatsOutcomeUnknown: 1 });
    const e3 = c.track({ type: 'leave', externalId: 'u1' });
    await until(() => c.stats().eventsQueued === 0, 'the resend to get its 200');
    expect(c.stats()).to.include({ eventsOutcomeUnknown: 0, eventsAcked: 3 });
    expect(stub.requests.at(-1)!.json.events).to.deep.equal([e1, e2, e3]);
  });

  it('sends as the body exactly JSON.stringify of the request it reports, as the roster changes and events are resent', async () => {
    stub.enqueue(stub.error(503, 'unavailable'));
    const reported: string[] = [];
    const c = makeClient({ onHeartbeat: (s) => reported.push(JSON.stringify(s.request)), ackEarly: false });
    c.roster.add({ externalId: 'u1', username: 'Zoë 🎮', team: 'red', joinedAt: new Date(0).toISOString() });
    c.track({ type: 'join', externalId: 'u1', payload: { team: 'red', at: new Date(0) } });
    c.start();
    await stub.waitForRequests(2); // a 503, then the same events resent
    c.roster.update('u1', { team: 'blue' });
    c.roster.add({ externalId: 'u2', username: 'Bob' });
    c.track({ type: 'custom', externalId: 'u2', payload: { nested: { list: [1, 'two', null] } } });
    await stub.waitForRequests(3);
    c.roster.remove('u1');
    await stub.waitForRequests(4);
    await until(() => reported.length >= 3, 'three 200s');
    const bodies = stub.requests.map((r) => r.raw.toString('utf8'));
    expect(bodies[0]).to.equal(bodies[1]!.replace(/"uptimeSeconds":\d+/, `"uptimeSeconds":${JSON.parse(bodies[0]!).uptimeSeconds}`));
    expect(bodies.slice(1, 4)).to.deep.equal(reported.slice(0, 3));
    expect(JSON.parse(bodies[3]!).players).to.deep.equal([{ externalId: 'u2', username: 'Bob' }]);
  });

  it('refuses an event whose payload JSON cannot carry, queueing nothing', () => {
    const c = makeClient();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => c.track({ type: 'note', payload: { big: 1n } })).to.throw(TypeError, /not JSON-serialisable/);
    expect(() => c.track({ type: 'note', payload: cyclic })).to.throw(TypeError, /not JSON-serialisable/);
    expect(c.stats()).to.include({ eventsTracked: 0, eventsQueued: 0 });
  });

  it('retries 5xx with growing jittered backoff, keeping events queued, then succeeds', async () => {
    stub.enqueue(stub.error(500, 'internal'), stub.error(502, 'bad_gateway'), stub.error(503, 'unavailable'));
    const c = makeClient({ backoff: { baseMs: 16_000, maxMs: 120_000 } });
    const e = c.track({ type: 'leave', externalId: 'u9' });
    c.start();
    const reqs = await stub.waitForRequests(4);
    // base 16 s, random 0.5 → 3/4 of 16, 32, 64 s
    expectGap(reqs, 1, 12_000);
    expectGap(reqs, 2, 24_000);
    expectGap(reqs, 3, 48_000);
    for (const r of reqs.slice(0, 4)) expect(r.json.events).to.deep.equal([e]);
    await until(() => c.stats().eventsQueued === 0, 'queue to empty');
    expect(problems.filter((p) => p.kind === 'server_error').map((p) => p.status)).to.deep.equal([500, 502, 503]);
  });

  it('answers 409 with one re-signed retry carrying the same bytes and a new timestamp', async () => {
    stub.enqueue(stub.error(409, 'replayed_signature'));
    const c = makeClient();
    c.track({ type: 'join', externalId: 'u1' });
    c.start();
    const [a, b] = await stub.waitForRequests(2);
    expect(b!.raw.equals(a!.raw)).to.equal(true);
    expect(Number(b!.timestamp)).to.be.greaterThan(Number(a!.timestamp));
    expect(b!.signature).to.not.equal(a!.signature);
    expect(b!.status).to.equal(200);
    expect(gap(stub.requests, 1)).to.be.below(1000 + SLACK);
    await until(() => c.stats().eventsQueued === 0, 'queue to empty');
    expect(c.stats().retries409).to.equal(1);
  });

  it('after a second 409 does not retry at once but backs off', async () => {
    stub.enqueue(stub.error(409, 'timestamp_out_of_window'), stub.error(409, 'timestamp_out_of_window'));
    const c = makeClient();
    c.start();
    const reqs = await stub.waitForRequests(3);
    expectGap(reqs, 2, 6000);
    expect(problems.map((p) => p.kind)).to.include('replay_rejected');
  });

  it('splits events across two heartbeats on 413: first half at once, the rest next time', async () => {
    stub.fallback = (req, s) => (req.json.events.length > 2 ? s.error(413, 'envelope_too_large') : s.ok());
    const c = makeClient();
    const events = [1, 2, 3, 4].map((n) => c.track({ type: 'death', externalId: `u${n}` }));
    c.start();
    const reqs = await stub.waitForRequests(3);
    const ids = (r: RecordedRequest) => r.json.events.map((e: { eventId: string }) => e.eventId);
    expect(ids(reqs[0]!)).to.deep.equal(events.map((e) => e.eventId));
    expect(reqs[0]!.status).to.equal(413);
    expect(ids(reqs[1]!)).to.deep.equal([events[0]!.eventId, events[1]!.eventId]);
    expect(reqs[1]!.status).to.equal(200);
    expect(gap(reqs, 1)).to.be.below(SLACK);
    expect(ids(reqs[2]!)).to.deep.equal([events[2]!.eventId, events[3]!.eventId]);
    expect(reqs[2]!.status).to.equal(200);
    expectGap(reqs, 2, 7_500); // the registration's 200: a random point (0.5 here) of the interval
    await until(() => c.stats().eventsQueued === 0, 'queue to empty');
    expect(c.stats().splits413).to.equal(1);
  });

  it('splits recursively when half is still too large', async () => {
    stub.fallback = (req, s) => (req.json.events.length > 2 ? s.error(413, 'envelope_too_large') : s.ok());
    const c = makeClient();
    for (let i = 0; i < 8; i++) c.track({ type: 'spawn', externalId: `u${i}` });
    c.start();
    const reqs = await stub.waitForRequests(3);
    expect(reqs.slice(0, 3).map((r) => [r.json.events.length, r.status])).to.deep.equal([
      [8, 413],
      [4, 413],
      [2, 200],
    ]);
    await until(() => c.stats().eventsQueued === 6, 'the first 2 events to leave the queue');
  });

  it('honours Retry-After on 429, and backs off when it is absent', async () => {
    stub.enqueue(stub.error(429, 'rate_limited', { 'Retry-After': '3' }), stub.error(429, 'rate_limited'));
    const c = makeClient();
    c.start();
    const reqs = await stub.waitForRequests(3);
    expectGap(reqs, 1, 3500); // Retry-After 3 s plus jitter: random 0.5 of 1 s
    expectGap(reqs, 2, 12_000); // second failure in a row: 3/4 of 16 s
    expect(problems.filter((p) => p.kind === 'rate_limited').map((p) => p.delayMs)).to.deep.equal([3500, 12_000]);
  });

  it('follows the interval the service returns, not the local setting', async () => {
    let n = 0;
    stub.fallback = (_req, s) => s.ok({ intervalSeconds: n++ === 0 ? 20 : 40 });
    const c = makeClient({ initialIntervalSeconds: 15 });
    c.start();
    const reqs = await stub.waitForRequests(3);
    expectGap(reqs, 1, 10_000); // after the registration: a random point (0.5 here) of the 20 s returned
    expectGap(reqs, 2, 40_000);
    expect(c.intervalSeconds).to.equal(40);
  });

  it('spreads its phase once: the gap after the registration is the random share of the interval, later gaps whole intervals; spreadPhase false keeps them all whole', async () => {
    stub.fallback = (_req, s) => s.ok({ intervalSeconds: 20 });
    const spread = makeClient({ random: () => 0.25 });
    spread.start();
    let reqs = await stub.waitForRequests(3);
    expectGap(reqs, 1, 5_000);
    expectGap(reqs, 2, 20_000);
    await spread.stop({ flush: false });
    stub.requests.length = 0;
    const whole = makeClient({ random: () => 0.25, spreadPhase: false });
    whole.start();
    reqs = await stub.waitForRequests(3);
    expectGap(reqs, 1, 20_000);
    expectGap(reqs, 2, 20_000);
  });

  it('executes a re-delivered command once, and acks it only after the handler resolved', async () => {
    const kick = command('kick', { payload: { reason: 'spam' } });
    const acked = new Set<string>();
    let redeliverAfterAck = 1;
    stub.fallback = (req, s) => {
      for (const id of req.json.acks) acked.add(id);
      // like the service: every dispatched-but-unacked command goes out on every heartbeat; plus one
      // more delivery after the ack, as if that ack had been lost
      if (!acked.has(kick.id)) return s.ok({ commands: [kick] });
      if (redeliverAfterAck-- > 0) return s.ok({ commands: [kick] });
      return s.ok();
    };
    let calls = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const handled: CommandEntry[] = [];
    const c: GameClient = makeClient({
      onCommand: async (cmd) => {
        calls++;
        handled.push(cmd);
        await released;
        c.roster.remove(cmd.target.externalId!);
        return { ok: true };
      },
    });
    c.roster.add({ externalId: 'u1', username: 'Ann' });
    c.start();
    const early = await stub.waitForRequests(3);
    expect(calls).to.equal(1);
    expect(early.slice(0, 3).map((r) => r.json.acks)).to.deep.equal([[], [], []]);
    expect(c.roster.has('u1')).to.equal(true);

    release();
    await until(() => stub.requests.some((r) => r.json.acks.includes(kick.id)), 'the ack');
    const ackReq = stub.requests.find((r) => r.json.acks.includes(kick.id))!;
    expect(ackReq.json.players).to.deep.equal([], 'the kick took effect before the ack');
    await stub.waitForRequests(ackReq.index + 3);
    expect(calls).to.equal(1);
    expect(handled[0]).to.deep.equal(kick);
    const s = c.stats();
    expect(s.commandsReceived).to.equal(1);
    expect(s.commandsAcked).to.equal(1);
    expect(s.commandsDuplicate).to.be.at.least(3);
    // the ack was sent until a 200 confirmed it, then not again
    const later = stub.requests.slice(ackReq.index + 1);
    expect(later.every((r) => !r.json.acks.includes(kick.id))).to.equal(true);
  });

  it('reports a failed command in failures, not in acks', async () => {
    const mute = command('mute', { target: { externalServerId: 'srv-1', externalId: 'ghost' } });
    stub.enqueue((_req, s) => s.ok({ commands: [mute] }));
    const c = makeClient({ onCommand: async () => ({ ok: false, reason: 'player not on this server' }) });
    c.start();
    const reqs = await stub.waitForRequests(2);
    expect(reqs[1]!.json.acks).to.deep.equal([]);
    expect(reqs[1]!.json.failures).to.deep.equal([{ id: mute.id, reason: 'player not on this server' }]);
    await until(() => c.stats().commandsFailed === 1, 'failure confirmed');
  });

  it('does not execute a command that already expired', async () => {
    const old = command('freeze', { expiresAt: new Date(Date.now() - 1000).toISOString() });
    stub.enqueue((_req, s) => s.ok({ commands: [old] }));
    let calls = 0;
    const c = makeClient({ onCommand: async () => void calls++ });
    c.start();
    const reqs = await stub.waitForRequests(2);
    expect(calls).to.equal(0);
    // neither acked (nothing happened) nor reported failed: the service expires it by itself
    expect(reqs[1]!.json.acks).to.deep.equal([]);
    expect(reqs[1]!.json).to.not.have.property('failures');
  });

  it('coalesces several nudges into one early heartbeat, no sooner than the minimum gap', async () => {
    stub.intervalSeconds = 60;
    const c = makeClient({ minNudgeGapMs: 2000 });
    c.start();
    await stub.waitForRequests(1);
    await until(() => c.stats().heartbeatsOk === 1, 'first 200');
    for (let i = 0; i < 5; i++) c.nudge();
    const reqs = await stub.waitForRequests(2);
    // the gap counts from when the first heartbeat was sent; arrivals are later by its latency
    expect(gap(reqs, 1)).to.be.at.least(1000);
    expect(gap(reqs, 1)).to.be.below(upper(2000));
    await clock.sleep(20_000);
    expect(stub.requests).to.have.length(2);
    c.nudge();
    await stub.waitForRequests(3);
    await clock.sleep(20_000);
    expect(stub.requests).to.have.length(3);
  });

  it('a nudge during an in-flight heartbeat causes one more heartbeat after it', async () => {
    stub.intervalSeconds = 60;
    let nudged = false;
    const c = makeClient({ minNudgeGapMs: 1000 });
    stub.enqueue(async (_req, s) => {
      c.nudge();
      c.nudge();
      nudged = true;
      return s.ok();
    });
    c.start();
    await stub.waitForRequests(2);
    expect(nudged).to.equal(true);
    await clock.sleep(20_000);
    expect(stub.requests).to.have.length(2);
  });

  it('reports 401 as a setup error and stops instead of retrying', async () => {
    const errors: SetupErrorInfo[] = [];
    stub.enqueue(stub.error(401, 'revoked_key'));
    const c = makeClient({ onSetupError: (e) => errors.push(e) });
    c.track({ type: 'join', externalId: 'u1' });
    c.start();
    await stub.waitForRequests(1);
    await until(() => errors.length === 1, 'setup error');
    expect(errors[0]).to.include({ status: 401, code: 'revoked_key', path: '/api/v1/game/heartbeat' });
    expect(c.isRunning).to.equal(false);
    await clock.sleep(60_000);
    expect(stub.requests).to.have.length(1);
    expect(c.stats().eventsQueued).to.equal(1);
    c.start(); // after fixing the setup
    await stub.waitForRequests(2);
    await until(() => c.stats().eventsQueued === 0, 'queue to empty');
  });

  it('treats 403 as a setup error', async () => {
    const errors: SetupErrorInfo[] = [];
    stub.enqueue(stub.error(403, 'scope_missing'));
    const c = makeClient({ onSetupError: (e) => errors.push(e) });
    c.start();
    await until(() => errors.length === 1, 'setup error');
    expect(errors[0]!.status).to.equal(403);
    await clock.sleep(30_000);
    expect(stub.requests).to.have.length(1);
  });

  // Issue #28: only 401/403 stop the loop; a 400 about the roster or acks, and a 404, back off and go on.
  for (const status of [400, 404]) {
    it(`backs off on a ${status} without events and keeps heartbeating`, async () => {
      const errors: SetupErrorInfo[] = [];
      stub.enqueue(stub.error(status, 'x'));
      const c = makeClient({ onSetupError: (e) => errors.push(e), backoff: { baseMs: 4000, maxMs: 4000 } });
      c.start();
      await stub.waitForRequests(2);
      await until(() => c.stats().heartbeatsOk === 1, 'a 200 after the backoff');
      expect(errors).to.deep.equal([]);
      expect(c.isRunning).to.equal(true);
      expect(problems[0]).to.include({ kind: 'bad_request', status });
      expect(gap(stub.requests, 1)).to.be.at.least(2000 - 50); // equal jitter: half to all of 4 s
    });
  }

  it('stop() flushes queued events and acks with a final heartbeat carrying the last roster', async () => {
    stub.intervalSeconds = 60;
    const c = makeClient();
    c.roster.add({ externalId: 'u1', username: 'Ann' });
    c.start();
    await stub.waitForRequests(1);
    await until(() => c.stats().heartbeatsOk === 1, 'first 200');
    const e = c.track({ type: 'leave', externalId: 'u1' });
    c.roster.remove('u1');
    await c.stop();
    expect(stub.requests).to.have.length(2);
    expect(stub.requests[1]!.json.events).to.deep.equal([e]);
    expect(stub.requests[1]!.json.players).to.deep.equal([]);
    expect(c.stats().eventsQueued).to.equal(0);
    expect(c.isRunning).to.equal(false);
  });

  it('stop() sends its final heartbeat at a random point of shutdownJitterSeconds, at most a third of its timeout', async () => {
    stub.intervalSeconds = 60;
    const c = makeClient({ shutdownJitterSeconds: 4 }); // random() is 0.5: 2 s into the window
    c.start();
    await until(() => c.stats().heartbeatsOk === 1, 'first 200');
    c.track({ type: 'death', externalId: 'u1' });
    const stoppedAt = clock.now();
    await c.stop({ timeoutMs: 30_000 });
    expect(stub.requests).to.have.length(2);
    expect(stub.requests[1]!.receivedAt - stoppedAt).to.be.at.least(2000 - 50);
    // the window is cut to a third of the timeout: 0.5 × 3 s, not 0.5 × 60 s
    const short = makeClient({ shutdownJitterSeconds: 60, externalServerId: 'srv-2' });
    short.start();
    await until(() => short.stats().heartbeatsOk === 1, 'first 200 of srv-2');
    const shortStoppedAt = clock.now();
    await short.stop({ timeoutMs: 9_000 });
    expect(stub.requests).to.have.length(4);
    expect(stub.requests[3]!.receivedAt - shortStoppedAt).to.be.within(1500 - 50, 20_000); // uncut: 30 s
  });

  it('stop() keeps flushing through a 5xx until the deadline', async () => {
    stub.intervalSeconds = 60;
    const c = makeClient({ backoff: { baseMs: 4000, maxMs: 4000 } });
    c.start();
    await until(() => c.stats().heartbeatsOk === 1, 'first 200');
    c.track({ type: 'death', externalId: 'u1' });
    stub.enqueue(stub.error(503, 'unavailable'));
    await c.stop({ timeoutMs: 20_000 });
    expect(stub.requests.map((r) => r.status)).to.deep.equal([200, 503, 200]);
    expect(c.stats().eventsQueued).to.equal(0);
  });

  it('stop() reports the events it could not deliver by its deadline (events_unsent), once', async () => {
    const c = makeClient({ backoff: { baseMs: 200, maxMs: 200 } });
    c.start();
    await until(() => c.stats().heartbeatsOk === 1, 'first 200');
    c.track({ type: 'death', externalId: 'u1' });
    c.track({ type: 'death', externalId: 'u2' });
    for (let i = 0; i < 20; i++) stub.enqueue(stub.error(503, 'unavailable'));
    await c.stop({ timeoutMs: 1_000 });
    const unsent = problems.filter((p) => p.kind === 'events_unsent');
    expect(unsent.map((p) => p.message)).to.deep.equal(['stop(): 2 event(s) not delivered before the deadline']);
    expect(c.stats().eventsQueued).to.equal(2);
  });

  it('records stats: attempts by status and a latency sample per attempt', async () => {
    stub.enqueue(stub.error(409, 'replayed_signature'), stub.error(500, 'internal'));
    const c = makeClient({ backoff: { baseMs: 4000, maxMs: 4000 } });
    c.start();
    await stub.waitForRequests(3);
    await until(() => c.stats().heartbeatsOk === 1, 'a 200');
    const s = c.stats();
    expect(s.heartbeatStatuses).to.deep.equal({ '409': 1, '500': 1, '200': 1 });
    expect(s.heartbeatsSent).to.equal(3);
    expect(s.latencySamplesMs).to.have.length(3);
    expect(s.latencySamplesMs.every((ms) => ms >= 0 && ms < 1000)).to.equal(true);
  });
});
