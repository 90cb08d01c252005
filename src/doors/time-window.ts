/**
 * Time-window conditions of door policies (issue #5: "inside a time window (days of week and times, with
 * a time zone)"). Local wall time comes from `Intl.DateTimeFormat` (one formatter per zone, cached), so
 * daylight-saving shifts are the zone database's, not ours.
 *
 * Boundaries: every zone offset in use is a whole number of minutes and windows are `HH:MM`, so a
 * window can only open or close at a whole UTC minute. {@link nextWindowChange} therefore probes minute
 * boundaries up to a horizon (the decision cache TTL) instead of solving local-to-UTC conversions around
 * DST transitions.
 *
 * Cost: `formatToParts` takes microseconds, and a bulk check evaluates many windows over many minutes,
 * so the zone's UTC offset is asked once per zone per UTC minute and kept ({@link offsetAt}); local
 * weekday and time are then plain arithmetic.
 */
import { WEEKDAYS } from '../schemas/doors.js';

export type Weekday = (typeof WEEKDAYS)[number];

/**
 * A recurring local-time window. `from`/`to` are `HH:MM` (24 h) wall-clock times in `timeZone` (IANA).
 * The window opens at `from` on each listed day (all days when `days` is absent) and closes at `to`:
 * the same day when `to` > `from`, the next day when `to` < `from` (overnight), 24 h later when equal.
 */
export interface TimeWindow {
  days?: Weekday[];
  from: string;
  to: string;
  timeZone: string;
}

const MINUTE_MS = 60_000;
const DAY_MINUTES = 1440;
/** Minutes of offsets kept per zone before the zone's cache is emptied (bounds memory). */
const OFFSET_CACHE_MINUTES = 512;
const formatters = new Map<string, Intl.DateTimeFormat>();
/** zone → UTC minute index → offset of local time from UTC, in minutes. */
const offsets = new Map<string, Map<number, number>>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Offset of `timeZone` from UTC during UTC minute `minuteIndex` (= floor(ms / 60 000)), in minutes. */
function offsetAt(timeZone: string, minuteIndex: number): number {
  let perZone = offsets.get(timeZone);
  if (!perZone) offsets.set(timeZone, (perZone = new Map<number, number>()));
  let offset = perZone.get(minuteIndex);
  if (offset === undefined) {
    const p: Record<string, number> = {};
    for (const part of formatter(timeZone).formatToParts(minuteIndex * MINUTE_MS)) if (part.type !== 'literal') p[part.type] = Number(part.value);
    const local = Date.UTC(p.year!, p.month! - 1, p.day, p.hour, p.minute) / MINUTE_MS;
    offset = local - minuteIndex;
    if (perZone.size >= OFFSET_CACHE_MINUTES) perZone.clear();
    perZone.set(minuteIndex, offset);
  }
  return offset;
}

/** True when `timeZone` is an IANA zone this runtime knows (e.g. `Europe/Paris`, `UTC`). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Parses `HH:MM` (00:00–24:00) into minutes of the day; null when malformed. */
export function parseClock(value: string): number | null {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(value);
  if (!m) return null;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return minutes <= 1440 ? minutes : null;
}

/** A {@link TimeWindow} parsed once (when policies are loaded) so evaluation is arithmetic only. */
export interface CompiledWindow {
  /** Opening minute of the local day. */
  from: number;
  /** Closing minute of the local day (≤ from: the next day). */
  to: number;
  /** Bit i set = opens on weekday i (0 = Monday); all bits when the window lists no days. */
  days: number;
  timeZone: string;
}

/** Parses a validated {@link TimeWindow} (see policy-conditions.ts). */
export function compileWindow(w: TimeWindow): CompiledWindow {
  let days = w.days ? 0 : 0b1111111;
  for (const d of w.days ?? []) days |= 1 << WEEKDAYS.indexOf(d);
  return { from: parseClock(w.from) ?? 0, to: parseClock(w.to) ?? 0, days, timeZone: w.timeZone };
}

/**
 * True when instant `ms` (epoch ms) is inside `w`. A window opens at `from` on each listed day and
 * lasts until `to` (the next day when `to` ≤ `from`; exactly 24 h when equal).
 */
export function inTimeWindow(w: CompiledWindow, ms: number): boolean {
  const utcMinute = Math.floor(ms / MINUTE_MS);
  const local = utcMinute + offsetAt(w.timeZone, utcMinute);
  const day = Math.floor(local / DAY_MINUTES);
  const minute = local - day * DAY_MINUTES;
  // 1970-01-01 was a Thursday: weekday 3 with Monday = 0.
  const weekday = (((day + 3) % 7) + 7) % 7;
  const today = (w.days >> weekday) & 1;
  if (w.to > w.from) return today === 1 && minute >= w.from && minute < w.to;
  // Overnight (or 24 h): the part after `from` belongs to today's window, the part before `to` to yesterday's.
  return (today === 1 && minute >= w.from) || (((w.days >> ((weekday + 6) % 7)) & 1) === 1 && minute < w.to);
}

/**
 * The first instant after `nowMs` and no later than `nowMs + horizonMs` at which {@link inTimeWindow}
 * changes value, or null when it does not change within the horizon. Milliseconds since the epoch.
 */
export function nextWindowChange(w: CompiledWindow, nowMs: number, horizonMs: number): number | null {
  const now = inTimeWindow(w, nowMs);
  const end = nowMs + horizonMs;
  for (let t = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS; t <= end; t += MINUTE_MS) {
    if (inTimeWindow(w, t) !== now) return t;
  }
  return null;
}
