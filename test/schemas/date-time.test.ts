/**
 * The strict RFC 3339 parser shared by the API and the flushers (src/schemas/date-time.ts; docs/api.md
 * "Timestamps"): accepted values, their stored instant, refusals, and the fast path agreeing
 * with the explaining one on a seeded corpus of near-miss strings.
 */
import { expect } from 'chai';
import { MAX_DATE_TIME_MS, MIN_DATE_TIME_MS, parse, parseRfc3339, rfc3339Problem, toStorableIso } from '../../src/schemas/date-time.js';
import { mulberry32 } from '../support/fuzz.js';

describe('strict RFC 3339 date-time', () => {
  const stored: [string, string][] = [
    ['2024-05-01T12:30:00Z', '2024-05-01T12:30:00.000Z'],
    ['2024-05-01t14:30:00.25+02:00', '2024-05-01T12:30:00.250Z'],
    ['2024-05-01T12:30:00.123987z', '2024-05-01T12:30:00.123Z'],
    ['2024-05-01T12:30:00-00:00', '2024-05-01T12:30:00.000Z'],
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2016-12-31T15:59:60.5-08:00', '2017-01-01T00:00:00.500Z'],
    ['2015-06-30T23:59:60Z', '2015-07-01T00:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0099-06-01T00:00:00Z', '0099-06-01T00:00:00.000Z'],
    ['1969-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999Z'],
  ];
  for (const [value, iso] of stored) {
    it(`accepts ${value} and stores ${iso}`, () => {
      expect(rfc3339Problem(value)).to.equal(null);
      expect(toStorableIso(value)).to.equal(iso);
    });
  }

  const refused: [unknown, RegExp][] = [
    ['2024-01-01T12:00:00+01', /offset needs minutes/],
    ['2024-01-01 12:00:00Z', /not a space/],
    ['0000-01-01T00:00:00Z', /year 0001/],
    ['9999-12-31T23:59:59-23:59', /between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z/],
    ['0001-01-01T00:30:00+01:00', /between/],
    ['9999-12-31T23:59:60Z', /between/],
    ['2016-12-30T23:59:60Z', /leap second/],
    ['2016-12-31T23:58:60Z', /leap second/],
    ['2023-02-29T00:00:00Z', /calendar date/],
    ['1900-02-29T00:00:00Z', /calendar date/],
    ['2024-01-01T24:00:00Z', /hours 00-23/],
    ['2024-01-01T12:00:00+24:00', /at most ±23:59/],
    ['2024-01-01T12:00:00.Z', /RFC 3339 date-time such as/],
    ['2024-01-01T12:00Z', /RFC 3339 date-time such as/],
    [`2024-01-01T12:00:00.${'1'.repeat(30)}Z`, /at most 40 characters/],
    [1_700_000_000, /must be a string/],
  ];
  for (const [value, why] of refused) {
    it(`refuses ${JSON.stringify(value).slice(0, 50)}`, () => {
      expect(parseRfc3339(value)).to.equal(null);
      expect(rfc3339Problem(value)).to.match(why);
    });
  }

  it('the range ends are the instants Postgres and JS Date both hold', () => {
    expect(new Date(MIN_DATE_TIME_MS).toISOString()).to.equal('0001-01-01T00:00:00.000Z');
    expect(new Date(MAX_DATE_TIME_MS).toISOString()).to.equal('9999-12-31T23:59:59.999Z');
  });

  it('the fast path accepts exactly what the explaining parse accepts, at the same instant (seeded corpus of 50,000)', () => {
    const rnd = mulberry32(3339);
    const pick = (chars: string) => chars[Math.floor(rnd() * chars.length)]!;
    const seeds = stored.map(([v]) => v).concat(refused.map(([v]) => String(v)));
    let mismatches = 0;
    for (let i = 0; i < 50_000; i++) {
      const chars = seeds[Math.floor(rnd() * seeds.length)]!.split('');
      for (let k = 0, edits = 1 + Math.floor(rnd() * 2); k < edits; k++) {
        const at = Math.floor(rnd() * (chars.length + 1));
        const op = rnd();
        if (op < 0.5) chars[at] = pick('0123456789:-+TZtz. ');
        else if (op < 0.75) chars.splice(at, 1);
        else chars.splice(at, 0, pick('0123456789:-+.'));
      }
      const value = chars.join('');
      const slow = parse(value);
      if (('ms' in slow ? slow.ms : null) !== parseRfc3339(value)) mismatches++;
    }
    expect(mismatches).to.equal(0);
  });
});
