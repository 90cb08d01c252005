/**
 * Issue #28 in the reference client, against the real app on a local port: nothing the game sends can stop
 * its heartbeats. A 400 whose `error.pointer` names an event drops that event (reported) and the rest are
 * delivered; a 400 naming no event (a JSON limit: a payload nested too deep) splits the batch until the
 * bad event is alone and dropped; a throw inside a cycle costs one backoff, not the loop. Every event is
 * either in Postgres or reported as rejected.
 */
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { setLogLevel } from '../../src/log.js';
import { Harness, type TestGame } from '../support/harness.js';
import { GameClient, type EventEntry, type ProblemInfo } from '@gis/client';
import { pause } from '../support/stub-server.js';

async function until(cond: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await pause(5);
  }
}

/** A payload nested `depth` arrays deep (the service refuses more than 32 with a 400 that names no member). */
const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

describe('reference client: a 400 never stops heartbeats (real API)', function () {
  this.timeout(20_000);
  const h = new Harness();
  let g: TestGame;
  let server: Server;
  let baseUrl: string;
  let client: GameClient | undefined;

  before(async () => {
    setLogLevel(h.config.logLevel);
    g = await h.game();
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await client?.stop({ flush: false });
    client = undefined;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await h.close();
  });

  function makeClient(serverId: string, problems: ProblemInfo[]): GameClient {
    client = new GameClient({
      baseUrl,
      apiKey: g.key,
      externalServerId: serverId,
      maxPlayers: 10,
      bootJitterSeconds: 0,
      backoff: { baseMs: 20, maxMs: 40 },
      onProblem: (p) => problems.push(p),
      onSetupError: (e) => problems.push({ kind: 'handler_error', message: `setup error ${e.status}` }),
    });
    return client;
  }

  /** eventIds of `serverId` stored in Postgres. */
  async function stored(serverId: string): Promise<string[]> {
    await h.flush(g.gameId);
    const rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId, externalServerId: serverId }, select: { eventId: true } });
    return rows.map((r) => r.eventId).sort();
  }

  it('drops exactly the events error.pointer names, reports them, and delivers the rest in the same cycle', async () => {
    const problems: ProblemInfo[] = [];
    const c = makeClient('ptr-srv', problems);
    const good: EventEntry[] = [];
    good.push(c.track({ type: 'join', externalId: 'u1' }));
    const longType = c.track({ type: 'x'.repeat(65), externalId: 'u1' });
    good.push(c.track({ type: 'spawn', externalId: 'u1' }));
    const longId = c.track({ type: 'death', externalId: 'u'.repeat(129) });
    good.push(c.track({ type: 'leave', externalId: 'u1' }));
    c.start();
    await until(() => c.stats().heartbeatsOk >= 1 && c.stats().eventsQueued === 0, 'the good events accepted');
    expect(c.isRunning).to.equal(true);
    expect(c.setupError).to.equal(undefined);
    const rejected = problems.filter((p) => p.kind === 'event_rejected');
    expect(rejected.map((p) => [p.eventId, p.pointer, p.status])).to.deep.equal([
      [longType.eventId, '/events/1/type', 400],
      [longId.eventId, '/events/2/externalId', 400], // index within the resent batch, after the first drop
    ]);
    expect(await stored('ptr-srv')).to.deep.equal(good.map((e) => e.eventId).sort());
  });

  it('splits the batch on a 400 that names no event (a payload nested too deep) until the bad event is dropped alone', async () => {
    const problems: ProblemInfo[] = [];
    const c = makeClient('split-srv', problems);
    const good = [0, 1, 2, 3, 4, 5].map((i) => c.track({ type: 'step', externalId: 'u1', payload: { i } }));
    const deep = c.track({ type: 'step', externalId: 'u1', payload: nested(40) });
    good.push(c.track({ type: 'step', externalId: 'u1', payload: { i: 7 } }));
    c.start();
    // The halves held back by a split go "next time" (as for 413): nudges stand in for the interval.
    await until(() => (c.nudge(), c.stats().eventsQueued === 0), 'the queue to drain');
    expect(c.isRunning).to.equal(true);
    expect(problems.filter((p) => p.kind === 'event_rejected').map((p) => p.eventId)).to.deep.equal([deep.eventId]);
    expect(problems.some((p) => p.kind === 'bad_request' && p.status === 400)).to.equal(true); // the splits are reported
    expect(await stored('split-srv')).to.deep.equal(good.map((e) => e.eventId).sort());
  });

  it('once the halving dropped the bad event alone, the rest go out in one full batch', async () => {
    const problems: ProblemInfo[] = [];
    const c = makeClient('regrow-srv', problems);
    const deep = c.track({ type: 'step', externalId: 'u1', payload: nested(40) });
    const good = Array.from({ length: 40 }, (_, i) => c.track({ type: 'step', externalId: 'u1', payload: { i } }));
    c.start();
    await until(() => (c.nudge(), c.stats().eventsQueued === 0), 'the queue to drain');
    // 41 → 20 → 10 → 5 → 2 → 1 (the bad one, dropped): all 400s; then one 200 with the other 40 (with the
    // batch left at 1 and doubling per 200, it took 6)
    expect(c.stats().heartbeatsOk).to.equal(1);
    expect(problems.filter((p) => p.kind === 'event_rejected').map((p) => p.eventId)).to.deep.equal([deep.eventId]);
    expect(await stored('regrow-srv')).to.deep.equal(good.map((e) => e.eventId).sort());
  });

  it('survives a cycle that throws: reported, backed off, the next cycle delivers', async () => {
    const problems: ProblemInfo[] = [];
    const c = makeClient('throw-srv', problems);
    const original = c.roster.toJSONText.bind(c.roster);
    let throws = 2;
    c.roster.toJSONText = () => {
      if (throws-- > 0) throw new Error('roster hook broke');
      return original();
    };
    const e = c.track({ type: 'join', externalId: 'u1' });
    c.start();
    await until(() => c.stats().heartbeatsOk >= 1 && c.stats().eventsQueued === 0, 'a 200 after the throws');
    expect(problems.filter((p) => p.kind === 'handler_error').map((p) => p.message)).to.deep.equal([
      'heartbeat cycle threw: roster hook broke',
      'heartbeat cycle threw: roster hook broke',
    ]);
    expect(c.isRunning).to.equal(true);
    expect(await stored('throw-srv')).to.deep.equal([e.eventId]);
  });
});
