/**
 * Strict RFC 3339 `date-time` (spec: "all timestamps RFC 3339 in UTC unless a field name says
 * otherwise"), limited to what this service can store: the API validates with {@link rfc3339Problem}
 * (the shared ajv instance's `date-time` format, src/schemas/validator.ts) and the flushers convert with
 * {@link parseRfc3339}, the same function, so a timestamp answered 200 is one Postgres accepts
 * (README "Failure behaviour" › "What a 200 can store").
 *
 * Accepted: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` exactly as RFC 3339 §5.6 writes it (`T` and `Z`
 * also lower case, §5.6 note), with a real calendar date, hours 00–23, minutes and seconds 00–59, an
 * offset of at most ±23:59, at most {@link MAX_DATE_TIME_LENGTH} characters, and, once the offset is
 * applied, an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (the years RFC 3339 can
 * write, minus year 0000, which PostgreSQL has no room for; JS Date represents them all).
 *
 * Decided, not refused:
 * - a leap second, `:60` at 23:59 UTC on the last day of a month (RFC 3339 §5.7), is stored as the next
 *   second, 00:00:00 of the next day, as PostgreSQL itself does (neither it nor JS Date knows leap seconds);
 * - fraction digits beyond milliseconds are dropped (the columns keep milliseconds), not rounded.
 *
 * Refused (400, the message says which rule): a space instead of `T`, an hour-only offset such as `+01`,
 * `:60` anywhere but a leap second, 24:00, 0000-…, and instants outside the range after the offset
 * (`9999-12-31T23:59:59-23:59` is year 10000 in UTC).
 */

/** Longest accepted date-time string (a 9-digit fraction and an offset need 35). */
export const MAX_DATE_TIME_LENGTH = 40;
/** ms since the epoch of a UTC calendar time; years 1–9999 (Date.UTC alone would map 0–99 to 19xx). */
function utcMs(year: number, month: number, day: number, h: number, m: number, s: number, ms: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, m, s, ms);
  return d.getTime();
}

/** Earliest storable instant, ms since the epoch: 0001-01-01T00:00:00.000Z. */
export const MIN_DATE_TIME_MS = utcMs(1, 1, 1, 0, 0, 0, 0);
/** Latest storable instant, ms since the epoch: 9999-12-31T23:59:59.999Z. */
export const MAX_DATE_TIME_MS = utcMs(9999, 12, 31, 23, 59, 59, 999);

const SYNTAX = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** The parse of a date-time: its instant in ms, or why it is refused. */
export type Parsed = { ms: number } | { problem: string };

function daysInMonth(year: number, month: number): number {
  return month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** The slow, explaining parse: why a value is refused (used for 400 messages, and to cross-check {@link fastParse}). */
export function parse(value: unknown): Parsed {
  if (typeof value !== 'string') return { problem: 'must be a string' };
  if (value.length > MAX_DATE_TIME_LENGTH) return { problem: `must be an RFC 3339 date-time of at most ${MAX_DATE_TIME_LENGTH} characters` };
  const m = SYNTAX.exec(value);
  if (!m) {
    if (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2}$/.test(value)) return { problem: 'must be an RFC 3339 date-time: the offset needs minutes (+01:00, not +01)' };
    if (/^\d{4}-\d{2}-\d{2} /.test(value)) return { problem: 'must be an RFC 3339 date-time: separate date and time with T, not a space' };
    return { problem: 'must be an RFC 3339 date-time such as 2024-05-01T12:30:00Z or 2024-05-01T14:30:00.250+02:00' };
  }
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  const fraction = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { problem: 'must be an RFC 3339 date-time with a real calendar date' };
  if (hour > 23 || minute > 59 || second > 60) return { problem: 'must be an RFC 3339 date-time with hours 00-23 and minutes and seconds 00-59' };
  let offsetMin = 0;
  if (!m[8]) {
    const oh = Number(m[10]), om = Number(m[11]);
    if (oh > 23 || om > 59) return { problem: 'must be an RFC 3339 date-time with an offset of at most ±23:59' };
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  if (year < 1) return { problem: 'must be an RFC 3339 date-time from year 0001 (year 0000 cannot be stored)' };
  // The local time minus its offset is UTC; a leap second is checked on the UTC minute it belongs to.
  const utc = utcMs(year, month, day, hour, minute, Math.min(second, 59), fraction) - offsetMin * 60_000;
  let ms = utc;
  if (second === 60) {
    const u = new Date(utc);
    const lastDay = daysInMonth(u.getUTCFullYear(), u.getUTCMonth() + 1);
    if (u.getUTCHours() !== 23 || u.getUTCMinutes() !== 59 || u.getUTCDate() !== lastDay) {
      return { problem: 'must be an RFC 3339 date-time: second 60 is only a leap second (23:59:60 UTC on the last day of a month)' };
    }
    ms = utc + 1000; // 23:59:60.xxx is stored as 00:00:00.xxx of the next day
  }
  if (ms < MIN_DATE_TIME_MS || ms > MAX_DATE_TIME_MS) return { problem: 'must be an RFC 3339 date-time between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z once its offset is applied' };
  return { ms };
}

/** Days from 1970-01-01 to the proleptic Gregorian date (H. Hinnant's days_from_civil), any year. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

/** The digit at `i` of `s`, or -1. */
function digitAt(s: string, i: number): number {
  const c = s.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/** Two digits at `i`, or -1. */
function twoAt(s: string, i: number): number {
  const a = digitAt(s, i), b = digitAt(s, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/**
 * The fast path of {@link parseRfc3339}: character positions and integer arithmetic, no regex, no Date
 * (the heartbeat validates up to a thousand of these per request). NaN when not accepted; the slow
 * {@link parse} then explains why.
 */
function fastParse(s: string): number {
  const n = s.length;
  if (n < 20 || n > MAX_DATE_TIME_LENGTH) return NaN;
  const c10 = s.charCodeAt(10);
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || (c10 !== 84 && c10 !== 116) || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  const yHi = twoAt(s, 0), yLo = twoAt(s, 2), month = twoAt(s, 5), day = twoAt(s, 8), hour = twoAt(s, 11), minute = twoAt(s, 14), second = twoAt(s, 17);
  if (yHi < 0 || yLo < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return NaN;
  const year = yHi * 100 + yLo;
  if (year < 1 || day > daysInMonth(year, month)) return NaN;
  let i = 19;
  let fraction = 0;
  if (s.charCodeAt(i) === 46) {
    const start = ++i;
    for (let d = digitAt(s, i); d >= 0; d = digitAt(s, ++i)) if (i - start < 3) fraction = fraction * 10 + d;
    if (i === start) return NaN;
    for (let k = Math.min(i - start, 3); k < 3; k++) fraction *= 10;
  }
  let offsetMin = 0;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) {
    if (i !== n - 1) return NaN;
  } else {
    if (n - i !== 6 || (z !== 43 && z !== 45) || s.charCodeAt(i + 3) !== 58) return NaN;
    const oh = twoAt(s, i + 1), om = twoAt(s, i + 4);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return NaN;
    offsetMin = (z === 45 ? -1 : 1) * (oh * 60 + om);
  }
  const utc = daysFromCivil(year, month, day) * 86_400_000 + hour * 3_600_000 + minute * 60_000 + Math.min(second, 59) * 1000 + fraction - offsetMin * 60_000;
  let ms = utc;
  if (second === 60) {
    // A leap second: 23:59:60 UTC on the last day of a month; stored as the next second (rare: Date is fine).
    const u = new Date(utc);
    if (u.getUTCHours() !== 23 || u.getUTCMinutes() !== 59 || u.getUTCDate() !== daysInMonth(u.getUTCFullYear(), u.getUTCMonth() + 1)) return NaN;
    ms = utc + 1000;
  }
  return ms < MIN_DATE_TIME_MS || ms > MAX_DATE_TIME_MS ? NaN : ms;
}

/**
 * The instant of a strict RFC 3339 date-time (rules in the module comment), ms since the Unix epoch, or
 * null when the value is not one this service accepts. Pure; never throws.
 */
export function parseRfc3339(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = fastParse(value);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * Why `value` is not an accepted date-time, as the end of a 400 message ("must be an RFC 3339 date-time
 * …"), or null when it is accepted.
 */
export function rfc3339Problem(value: unknown): string | null {
  if (parseRfc3339(value) !== null) return null;
  const p = parse(value);
  return 'problem' in p ? p.problem : 'must be an RFC 3339 date-time such as 2024-05-01T12:30:00Z';
}

/**
 * The canonical form the flushers store: `YYYY-MM-DDTHH:MM:SS.mmmZ`, or null when `value` is not
 * accepted (a stream entry written by an older build, which the flusher dead-letters).
 */
export function toStorableIso(value: unknown): string | null {
  const ms = parseRfc3339(value);
  return ms === null ? null : new Date(ms).toISOString();
}
