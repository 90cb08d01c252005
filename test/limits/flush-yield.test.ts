/**
 * Flushers yield to a pressed request path (src/limits/flush-yield.ts, issue #32 item 2): an API process
 * whose admission signals pass PRESSURE_SHARE of their ceilings reports it in Redis, and the events,
 * sessions and access-log flush jobs skip their runs while the report lives, for at most
 * FLUSH_YIELD_SECONDS of continuous pressure, losing nothing.
 */
import { expect } from 'chai';
import { Harness, event, heartbeatBody } from '../support/harness.js';
import { AdmissionController, PRESSURE_SHARE } from '../../src/limits/admission.js';
import { FlushYield, PressureReporter, REPORT_EVERY_MS } from '../../src/limits/flush-yield.js';
import { PRESSURE_REPORT_TTL_MS } from '../../src/store/keys.js';
import { flushCommandLogJob, flushEventsJob } from '../../workers/jobs/flush.job.js';
import { GameDirectory } from '../../src/store/game-directory.js';

describe('flushers yield to a pressed request path', () => {
  let h: Harness;
  let clock = 0;
  const now = () => clock;

  before(() => {
    h = new Harness();
  });
  beforeEach(async () => {
    clock = 1_000_000;
    await h.redis.del(h.keySpace.global.apiPressure());
  });
  after(async () => {
    await h.redis.del(h.keySpace.global.apiPressure());
    await h.close();
  });

  const pressure = () => h.redis.get(h.keySpace.global.apiPressure());
  const settle = () => h.redis.ping();

  it('admission tells its observer of pressure at PRESSURE_SHARE of a ceiling, before any class is refused', () => {
    const pressed: number[] = [];
    const limits = { maxInFlight: 100, maxRedisQueue: 1000, maxLoopLagMs: 0, retryAfterMinSeconds: 2, retryAfterMaxSeconds: 8, retryAfterCapSeconds: 60 };
    const c = new AdmissionController(limits, () => 0, { shed: () => undefined, pressed: () => pressed.push(c.requestsInFlight) });
    const atPressure = Math.floor(limits.maxInFlight * PRESSURE_SHARE);
    for (let i = 0; i < atPressure; i++) expect(c.tryAdmit('checks')).to.equal(null);
    expect(pressed, 'below the pressure share').to.deep.equal([]);
    // At the share: told, and still admitted (checks are refused only at a quarter of the ceiling).
    expect(c.tryAdmit('checks')).to.equal(null);
    expect(pressed).to.deep.equal([atPressure]);
    c.close();
  });

  it('a report lives PRESSURE_REPORT_TTL_MS and is sent at most every REPORT_EVERY_MS per process', async () => {
    const reporter = new PressureReporter(h.redis, h.keySpace, now);
    reporter.report();
    await settle();
    expect(await pressure()).to.equal(String(clock));
    const ttl = await h.redis.pttl(h.keySpace.global.apiPressure());
    expect(ttl).to.be.greaterThan(0).and.at.most(PRESSURE_REPORT_TTL_MS);
    const first = clock;
    clock += REPORT_EVERY_MS - 1;
    reporter.report();
    await settle();
    expect(await pressure(), 'not sent again within REPORT_EVERY_MS').to.equal(String(first));
    clock += 1;
    reporter.report();
    await settle();
    expect(await pressure()).to.equal(String(clock));
  });

  it('holds off while pressed, at most FLUSH_YIELD_SECONDS, then as long again and until the pressure is gone', async () => {
    const y = new FlushYield(h.redis, h.keySpace, 30, 'flush-events', () => true, now);
    expect(await y.shouldHold(), 'no report').to.equal(false);
    await h.redis.set(h.keySpace.global.apiPressure(), '1', 'PX', 60_000);
    expect(await y.shouldHold()).to.equal(true);
    clock += 29_999;
    expect(await y.shouldHold()).to.equal(true);
    clock += 1;
    expect(await y.shouldHold(), 'held 30 s: runs whatever the pressure').to.equal(false);
    clock += 29_999;
    expect(await y.shouldHold(), 'cool-down as long as the stretch').to.equal(false);
    clock += 1;
    expect(await y.shouldHold(), 'sustained pressure: no second stretch').to.equal(false);
    clock += 60_000;
    expect(await y.shouldHold(), 'still none while the pressure lasts').to.equal(false);
    await h.redis.del(h.keySpace.global.apiPressure());
    expect(await y.shouldHold(), 'calm').to.equal(false);
    await h.redis.set(h.keySpace.global.apiPressure(), '1', 'PX', 60_000);
    expect(await y.shouldHold(), 'a new stretch after the calm').to.equal(true);
    await h.redis.del(h.keySpace.global.apiPressure());
    clock += 1000;
    expect(await y.shouldHold(), 'pressure gone').to.equal(false);
    await h.redis.set(h.keySpace.global.apiPressure(), '1', 'PX', 60_000);
    expect(await y.shouldHold(), 'within the 1 s cool-down of a 1 s stretch').to.equal(false);
    clock += 1000;
    expect(await y.shouldHold()).to.equal(true);
  });

  it('never holds off while Redis is not durable (a held entry would be one more a crash loses)', async () => {
    let durable = true;
    const y = new FlushYield(h.redis, h.keySpace, 30, 'flush-events', () => durable, now);
    await h.redis.set(h.keySpace.global.apiPressure(), '1', 'PX', 60_000);
    expect(await y.shouldHold()).to.equal(true);
    durable = false;
    expect(await y.shouldHold()).to.equal(false);
  });

  it('FLUSH_YIELD_SECONDS=0 never holds off', async () => {
    await h.redis.set(h.keySpace.global.apiPressure(), '1', 'PX', 60_000);
    expect(await new FlushYield(h.redis, h.keySpace, 0, 'flush-events', () => true, now).shouldHold()).to.equal(false);
  });

  it('a held events flush leaves every entry in its stream and the next run stores each exactly once', async () => {
    const g = await h.game();
    const events = [event('join', { externalId: 'u1' }), event('spawn', { externalId: 'u1' })];
    const res = await h.heartbeat(g, heartbeatBody(['u1'], { events }));
    expect(res.status).to.equal(200);
    const ctx = { config: { ...h.config, flushYieldSeconds: 30 }, keySpace: h.keySpace, redis: h.redis, db: h.db, games: new GameDirectory(h.redis, h.db, h.keySpace), consumerName: 'test' };
    const run = flushEventsJob(ctx);
    const commandLog = flushCommandLogJob(ctx);
    await h.redis.set(h.keySpace.global.apiPressure(), '1', 'PX', 60_000);
    expect(await run()).to.deep.equal({ entries: 0, held: true });
    expect(await commandLog(), 'the command log never holds off').to.not.have.property('held');
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(0);
    expect(await h.redis.xlen(h.keySpace.game(g.gameId).eventStream())).to.be.greaterThan(0);
    await h.redis.del(h.keySpace.global.apiPressure());
    expect((await run()).entries).to.be.greaterThan(0);
    const rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId }, select: { eventId: true } });
    expect(rows.map((r) => r.eventId).sort()).to.deep.equal(events.map((e) => e.eventId).sort());
  });
});
