/**
 * The simulator's one timer per fleet process (packages/simulator/src/timer-wheel.ts, issue #15 item 4): what
 * its callers rely on. A callback never runs before its time (a client's Retry-After wait must not end
 * early) and callbacks run in time order; a sleep honours its abort signal as the client's Clock
 * contract says; a throwing callback stops no other. No assertion on how late anything runs.
 */
import { expect } from 'chai';
import { TimerWheel } from '@gis/simulator';

/** Resolves once `done()` holds (polling; a loaded machine may run timers late, which is not a failure). */
async function until(done: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('simulator: timer wheel', () => {
  it('runs every callback at or after its time, in time order, with one timer for all', async () => {
    const wheel = new TimerWheel(10);
    const start = Date.now();
    const ran: { due: number; at: number; n: number }[] = [];
    const dues = Array.from({ length: 60 }, (_, n) => ({ n, due: start + 5 + ((n * 37) % 200) }));
    for (const { n, due } of dues) wheel.at(due, () => ran.push({ due, at: Date.now(), n }));
    expect(wheel.size).to.equal(60);
    await until(() => ran.length === 60);
    for (const r of ran) expect(r.at, `callback ${r.n}`).to.be.at.least(r.due);
    const slots = ran.map((r) => Math.ceil(r.due / 10));
    expect(slots).to.deep.equal([...slots].sort((a, b) => a - b));
    expect(wheel.size).to.equal(0);
  });

  it('runs what a callback schedules for the past in the same wake-up, and a time already past soon', async () => {
    const wheel = new TimerWheel(10);
    const order: string[] = [];
    wheel.at(Date.now() + 20, () => {
      order.push('first');
      wheel.at(Date.now() - 1000, () => order.push('scheduled for the past'));
      wheel.at(Date.now() + 30, () => order.push('later'));
    });
    wheel.at(Date.now() - 5000, () => order.push('already due'));
    await until(() => order.length === 4);
    expect(order).to.deep.equal(['already due', 'first', 'scheduled for the past', 'later']);
  });

  it('sleeps at least as long as asked, ends early on abort, and never rejects', async () => {
    const wheel = new TimerWheel(10);
    const t0 = Date.now();
    await wheel.clock.sleep(35);
    expect(Date.now() - t0).to.be.at.least(35);

    const ctl = new AbortController();
    const woken = wheel.clock.sleep(60_000, ctl.signal);
    ctl.abort('woken');
    await woken;
    expect(Date.now() - t0).to.be.below(60_000);

    await wheel.sleep(60_000, AbortSignal.abort());
    await wheel.sleep(0);
    await wheel.sleep(-5);
    wheel.clear();
    expect(wheel.size).to.equal(0);
  });

  it('keeps running the other callbacks when one throws, and reports the error', async () => {
    const errors: unknown[] = [];
    const wheel = new TimerWheel(10, (err) => errors.push(err));
    const ran: number[] = [];
    const due = Date.now() + 15;
    wheel.at(due, () => ran.push(1));
    wheel.at(due, () => {
      throw new Error('boom');
    });
    wheel.at(due, () => ran.push(3));
    wheel.at(due + 40, () => ran.push(4));
    await until(() => ran.length === 3);
    expect(ran).to.deep.equal([1, 3, 4]);
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['boom']);
  });

  it('reports how late its timer fired when the process was busy past it (a stall)', async () => {
    const late: number[] = [];
    const wheel = new TimerWheel(10, undefined, (lateMs) => late.push(lateMs));
    let ran = false;
    wheel.at(Date.now() + 5, () => (ran = true));
    const busyUntil = Date.now() + 120;
    while (Date.now() < busyUntil) Math.sqrt(Math.random()); // the event loop held past the slot
    await until(() => ran);
    expect(late).to.have.length(1);
    expect(late[0]).to.be.at.least(100);
  });

  it('refuses a slot narrower than 1 ms', () => {
    expect(() => new TimerWheel(0)).to.throw(RangeError);
  });
});
