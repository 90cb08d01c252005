/**
 * The workspace's week, in its own time zone (issue #4: quota "minutes clocked in per week, weeks
 * starting Monday 00:00 UTC unless the workspace says otherwise"; Workspace.timeZone / weekStartsOn).
 *
 * Period rules:
 * - A quota week starts at local midnight (00:00 in `timeZone`) of weekday `weekStartsOn` (ISO: 1 =
 *   Monday … 7 = Sunday) and ends at the next such midnight, so it is [start, end) and lasts 7 × 24 h
 *   except across a daylight-saving change (then 167 or 169 h). If local midnight does not exist that day
 *   (a zone that springs forward at 00:00) the week starts at the first instant after the gap; if it
 *   occurs twice, at the first occurrence.
 * - Weeks are labelled `YYYY-Www` the ISO 8601 way, generalised to any start day: week 1 of year Y is the
 *   week that contains 4 January of Y (for Monday starts this is exactly the ISO week), and the label's
 *   year is the year of the week's fourth day. So 2026-W01 with Monday starts is 29 Dec 2025 – 4 Jan 2026.
 *   Some years have 53 weeks; a label past the last week is refused.
 */
import { ValidationError } from '../errors.js';

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when `timeZone` is an IANA zone this runtime knows (`UTC`, `Europe/Berlin`, …). */
export function isTimeZone(timeZone: string): boolean {
  if (!timeZone) return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Local wall-clock time of instant `ms` in `timeZone`, expressed as if it were UTC (ms, whole seconds). */
function wallClock(ms: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day, p.hour, p.minute, p.second);
}

/** Offset of `timeZone` from UTC at instant `ms`, in ms (local = UTC + offset). */
function offsetAt(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return wallClock(whole, timeZone) - whole;
}

/** Days since 1970-01-01 of the local date of instant `ms` in `timeZone`. */
export function localDayNumber(ms: number, timeZone: string): number {
  return Math.floor(wallClock(ms, timeZone) / DAY_MS);
}

/** The instant local midnight starts day `dayNumber` (days since 1970-01-01) in `timeZone`; see the module's DST rules. */
export function localMidnight(dayNumber: number, timeZone: string): number {
  const wall = dayNumber * DAY_MS;
  const first = wall - offsetAt(wall, timeZone);
  const second = wall - offsetAt(first, timeZone);
  const showsMidnight = [first, second].filter((t) => wallClock(t, timeZone) === wall);
  // Midnight occurs once or twice: the earlier instant; it falls into a gap: the first instant after it.
  return showsMidnight.length ? Math.min(...showsMidnight) : Math.max(first, second);
}

/** ISO weekday (1 = Monday … 7 = Sunday) of day `dayNumber` (1970-01-01 was a Thursday). */
function isoWeekday(dayNumber: number): number {
  return ((((dayNumber + 3) % 7) + 7) % 7) + 1;
}

function weekStartDay(dayNumber: number, weekStartsOn: number): number {
  return dayNumber - ((isoWeekday(dayNumber) - weekStartsOn + 7) % 7);
}

function labelOf(startDay: number): string {
  const anchor = startDay + 3;
  const year = new Date(anchor * DAY_MS).getUTCFullYear();
  const week = Math.floor((anchor - Date.UTC(year, 0, 1) / DAY_MS) / 7) + 1;
  return `${String(year).padStart(4, '0')}-W${String(week).padStart(2, '0')}`;
}

/** One quota week: [start, end) in UTC instants, with its label and the settings it was computed with. */
export interface WeekPeriod {
  /** `YYYY-Www`. */
  label: string;
  start: Date;
  end: Date;
  timeZone: string;
  weekStartsOn: number;
}

function period(startDay: number, timeZone: string, weekStartsOn: number): WeekPeriod {
  return {
    label: labelOf(startDay),
    start: new Date(localMidnight(startDay, timeZone)),
    end: new Date(localMidnight(startDay + 7, timeZone)),
    timeZone,
    weekStartsOn,
  };
}

function checkSettings(timeZone: string, weekStartsOn: number): void {
  if (!isTimeZone(timeZone)) throw new ValidationError(`unknown time zone "${timeZone}"`, 'invalid_time_zone');
  if (!Number.isInteger(weekStartsOn) || weekStartsOn < 1 || weekStartsOn > 7) throw new ValidationError('weekStartsOn must be an ISO weekday from 1 (Monday) to 7 (Sunday)');
}

/** The quota week containing instant `atMs`. @throws {ValidationError} unknown zone or weekday. */
export function weekContaining(atMs: number, timeZone: string, weekStartsOn: number): WeekPeriod {
  checkSettings(timeZone, weekStartsOn);
  let startDay = weekStartDay(localDayNumber(atMs, timeZone), weekStartsOn);
  // Around a midnight DST gap the local date can be ahead of the week's computed start instant.
  if (localMidnight(startDay, timeZone) > atMs) startDay -= 7;
  return period(startDay, timeZone, weekStartsOn);
}

/**
 * The quota week labelled `label` (`YYYY-Www`, e.g. `2026-W47`).
 * @throws {ValidationError} `invalid_period` for a malformed label or a week the year does not have;
 * unknown zone or weekday.
 */
export function parseWeekLabel(label: string, timeZone: string, weekStartsOn: number): WeekPeriod {
  checkSettings(timeZone, weekStartsOn);
  const m = /^(\d{4})-W(\d{2})$/.exec(label.trim());
  const week = m ? Number(m[2]) : 0;
  if (!m || week < 1 || week > 53) throw new ValidationError(`period must look like 2026-W47 (got "${label}")`, 'invalid_period');
  const week1 = weekStartDay(Date.UTC(Number(m[1]), 0, 4) / DAY_MS, weekStartsOn);
  const startDay = week1 + 7 * (week - 1);
  if (labelOf(startDay) !== label.trim()) throw new ValidationError(`${m[1]} has no week ${m[2]}`, 'invalid_period');
  return period(startDay, timeZone, weekStartsOn);
}
