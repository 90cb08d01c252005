/** Issue #5 condition "inside a time window (days of week and times, with a time zone)": src/doors/time-window.ts. */
import { expect } from 'chai';
import { compileWindow, inTimeWindow as inCompiled, isTimeZone, nextWindowChange as nextCompiled, parseClock, type TimeWindow } from '../../src/doors/time-window.js';

const inTimeWindow = (w: TimeWindow, ms: number) => inCompiled(compileWindow(w), ms);
const nextWindowChange = (w: TimeWindow, ms: number, horizonMs: number) => nextCompiled(compileWindow(w), ms, horizonMs);

const at = (iso: string) => Date.parse(iso);

describe('door time windows', () => {
  it('reads HH:MM clocks, 24:00 included', () => {
    expect(parseClock('00:00')).to.equal(0);
    expect(parseClock('17:45')).to.equal(17 * 60 + 45);
    expect(parseClock('24:00')).to.equal(1440);
    for (const bad of ['24:01', '7:00', '12:60', 'noon']) expect(parseClock(bad)).to.equal(null);
    expect(isTimeZone('Europe/Paris')).to.equal(true);
    expect(isTimeZone('Mars/Olympus')).to.equal(false);
  });

  it('a same-day window is [from, to) on the listed days, in local time', () => {
    const w = { days: ['mon' as const], from: '09:00', to: '17:00', timeZone: 'America/New_York' };
    // Monday 2026-01-05 09:00 in New York (EST, UTC-5) = 14:00 UTC
    expect(inTimeWindow(w, at('2026-01-05T13:59:59Z'))).to.equal(false);
    expect(inTimeWindow(w, at('2026-01-05T14:00:00Z'))).to.equal(true);
    expect(inTimeWindow(w, at('2026-01-05T21:59:59Z'))).to.equal(true);
    expect(inTimeWindow(w, at('2026-01-05T22:00:00Z'))).to.equal(false);
    expect(inTimeWindow(w, at('2026-01-06T15:00:00Z'))).to.equal(false); // Tuesday
  });

  it('an overnight window belongs to the day it opens', () => {
    const w = { days: ['fri' as const], from: '22:00', to: '02:00', timeZone: 'UTC' };
    expect(inTimeWindow(w, at('2026-01-09T23:00:00Z'))).to.equal(true); // Friday night
    expect(inTimeWindow(w, at('2026-01-10T01:59:00Z'))).to.equal(true); // Saturday early morning
    expect(inTimeWindow(w, at('2026-01-10T23:00:00Z'))).to.equal(false); // Saturday night
    expect(inTimeWindow(w, at('2026-01-09T01:00:00Z'))).to.equal(false); // Friday early morning (Thursday's window)
  });

  it('from = to is a 24-hour window; no days means every day', () => {
    const w = { from: '06:00', to: '06:00', timeZone: 'UTC' };
    expect(inTimeWindow(w, at('2026-01-07T05:59:00Z'))).to.equal(true);
    expect(inTimeWindow({ ...w, days: ['wed'] }, at('2026-01-07T05:59:00Z'))).to.equal(false); // still Tuesday's window
    expect(inTimeWindow({ ...w, days: ['wed'] }, at('2026-01-08T05:59:00Z'))).to.equal(true);
  });

  it('follows daylight-saving time: the same local window is an hour apart in UTC', () => {
    const w = { from: '08:00', to: '09:00', timeZone: 'Europe/Paris' };
    expect(inTimeWindow(w, at('2026-01-15T07:30:00Z'))).to.equal(true); // CET, UTC+1
    expect(inTimeWindow(w, at('2026-07-15T07:30:00Z'))).to.equal(false); // CEST, UTC+2
    expect(inTimeWindow(w, at('2026-07-15T06:30:00Z'))).to.equal(true);
  });

  it('finds the next opening or closing within the horizon, at whole minutes', () => {
    const w = { from: '08:00', to: '09:00', timeZone: 'Europe/Paris' };
    expect(nextWindowChange(w, at('2026-07-15T05:59:30Z'), 60_000)).to.equal(at('2026-07-15T06:00:00Z'));
    expect(nextWindowChange(w, at('2026-07-15T06:58:10Z'), 300_000)).to.equal(at('2026-07-15T07:00:00Z'));
    expect(nextWindowChange(w, at('2026-07-15T05:00:00Z'), 60_000)).to.equal(null);
  });

  it('a window inside the skipped spring-forward hour never opens', () => {
    // 2026-03-29: Paris clocks jump from 02:00 to 03:00 at 01:00 UTC
    const w = { from: '02:00', to: '03:00', timeZone: 'Europe/Paris' };
    expect(nextWindowChange(w, at('2026-03-29T00:30:00Z'), 3_600_000)).to.equal(null);
    expect(inTimeWindow(w, at('2026-03-29T00:59:00Z'))).to.equal(false);
    expect(inTimeWindow(w, at('2026-03-29T01:00:00Z'))).to.equal(false);
  });
});
