/**
 * Issue #4 quota periods: weeks starting Monday 00:00 UTC unless the workspace says otherwise (time zone,
 * start day), labelled YYYY-Www (src/workspace/calendar.ts).
 */
import { expect } from 'chai';
import { isTimeZone, parseWeekLabel, weekContaining } from '../../src/workspace/calendar.js';
import { ValidationError } from '../../src/errors.js';

const iso = (d: Date) => d.toISOString();

describe('quota weeks', () => {
  it('defaults to ISO weeks in UTC, including the year boundary and 53-week years', () => {
    const w1 = parseWeekLabel('2026-W01', 'UTC', 1);
    expect([iso(w1.start), iso(w1.end)]).to.deep.equal(['2025-12-29T00:00:00.000Z', '2026-01-05T00:00:00.000Z']);
    expect(weekContaining(Date.parse('2025-12-31T12:00:00Z'), 'UTC', 1).label).to.equal('2026-W01');
    expect(weekContaining(Date.parse('2027-01-01T12:00:00Z'), 'UTC', 1).label).to.equal('2026-W53');
    expect(parseWeekLabel('2020-W53', 'UTC', 1).label).to.equal('2020-W53');
    expect(() => parseWeekLabel('2021-W53', 'UTC', 1)).to.throw(ValidationError, /no week 53/);
    for (const bad of ['2026-47', '2026-W00', '2026-W54', 'W47', '']) expect(() => parseWeekLabel(bad, 'UTC', 1), bad).to.throw(ValidationError);
  });

  it('puts the boundary at local midnight of the workspace time zone', () => {
    const sundayNight = Date.parse('2026-11-22T23:30:00Z');
    const utc = weekContaining(sundayNight, 'UTC', 1);
    expect(utc.label).to.equal('2026-W47');
    expect(iso(utc.end)).to.equal('2026-11-23T00:00:00.000Z');
    // 00:30 Monday in Berlin: already the next week there
    const berlin = weekContaining(sundayNight, 'Europe/Berlin', 1);
    expect([berlin.label, iso(berlin.start)]).to.deep.equal(['2026-W48', '2026-11-22T23:00:00.000Z']);
    const kolkata = parseWeekLabel('2026-W47', 'Asia/Kolkata', 1);
    expect(iso(kolkata.start)).to.equal('2026-11-15T18:30:00.000Z');
  });

  it('lasts 167 or 169 hours across a daylight-saving change', () => {
    const spring = parseWeekLabel('2026-W13', 'Europe/Berlin', 1);
    expect([iso(spring.start), iso(spring.end)]).to.deep.equal(['2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    const autumn = parseWeekLabel('2026-W43', 'Europe/Berlin', 1); // clocks go back on Sunday 25 October
    expect((autumn.end.getTime() - autumn.start.getTime()) / 3_600_000).to.equal(169);
  });

  it('starts weeks on the configured weekday, numbering week 1 as the week holding 4 January', () => {
    // 4 January 2026 is a Sunday: with Sunday starts, week 1 begins that day
    const w1 = parseWeekLabel('2026-W01', 'America/New_York', 7);
    expect(iso(w1.start)).to.equal('2026-01-04T05:00:00.000Z');
    const w47 = parseWeekLabel('2026-W47', 'America/New_York', 7);
    expect([iso(w47.start), iso(w47.end)]).to.deep.equal(['2026-11-22T05:00:00.000Z', '2026-11-29T05:00:00.000Z']);
    expect(weekContaining(Date.parse('2026-11-22T04:59:59Z'), 'America/New_York', 7).label).to.equal('2026-W46');
    expect(weekContaining(Date.parse('2026-11-22T05:00:00Z'), 'America/New_York', 7).label).to.equal('2026-W47');
  });

  it('starts the week after the gap when local midnight does not exist', () => {
    // Chile sprang forward at 00:00 on Sunday 11 September 2022 (00:00 → 01:00, -04 → -03)
    const w = weekContaining(Date.parse('2022-09-11T12:00:00Z'), 'America/Santiago', 7);
    expect(iso(w.start)).to.equal('2022-09-11T04:00:00.000Z');
    expect(weekContaining(Date.parse('2022-09-11T03:59:59Z'), 'America/Santiago', 7).end.toISOString()).to.equal('2022-09-11T04:00:00.000Z');
  });

  it('round-trips: every instant lies in the week its label names', () => {
    const zones: [string, number][] = [['UTC', 1], ['Europe/Berlin', 1], ['America/New_York', 7], ['Asia/Kolkata', 6], ['Pacific/Auckland', 1], ['America/Santiago', 3]];
    for (const [tz, start] of zones) {
      for (let t = Date.parse('2025-12-20T00:00:00Z'); t < Date.parse('2027-01-10T00:00:00Z'); t += 7 * 3_600_000 + 17 * 60_000) {
        const w = weekContaining(t, tz, start);
        expect(w.start.getTime() <= t && t < w.end.getTime(), `${tz} ${new Date(t).toISOString()}`).to.equal(true);
        const again = parseWeekLabel(w.label, tz, start);
        expect([again.start.getTime(), again.end.getTime()]).to.deep.equal([w.start.getTime(), w.end.getTime()]);
      }
    }
  });

  it('refuses unknown zones and weekdays', () => {
    expect(isTimeZone('Mars/Olympus')).to.equal(false);
    expect(isTimeZone('Europe/Berlin')).to.equal(true);
    expect(() => weekContaining(0, 'Mars/Olympus', 1)).to.throw(ValidationError, /time zone/);
    expect(() => weekContaining(0, 'UTC', 0)).to.throw(ValidationError, /weekStartsOn/);
  });
});
