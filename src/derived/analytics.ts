/**
 * Analytics of one game over a period (issue #4; spec: What the service does, item 2; Event type values).
 * `analytics show --game G --from T --to T`. All buckets are UTC; the period is [from, to), at most
 * {@link MAX_ANALYTICS_DAYS} days.
 *
 * - Concurrency, one point per UTC minute starting in the period: the live sample of that minute
 *   (concurrency-sampler.ts, `source: "sample"`), or, for a minute without one (before sampling ran, or
 *   while workers were down), the number of stored sessions open at the minute's first instant
 *   (`source: "sessions"`, servers unknown). A session counts from its first heartbeat to its last.
 * - Events per type per UTC hour: the five types the analytics layer understands (join, leave,
 *   team_change, death, spawn) always, then every custom type seen in the period, exactly as the game sent
 *   it (case and spelling kept; `Join` is a custom type). Counted by occurredAt.
 * - Session length distribution of sessions opened in the period: closed ones bucketed by
 *   closedAt − openedAt (first heartbeat to last, so a one-heartbeat visit is 0 s), with mean, median and
 *   90th percentile in whole seconds; sessions still open are counted apart.
 * - Top custom types: the {@link TOP_CUSTOM_TYPES} most frequent custom types in the period.
 */
import type { Db } from '../store/prisma.js';
import { ValidationError } from '../errors.js';
import { MINUTE_MS } from './concurrency-sampler.js';

/** The event types the analytics layer understands (spec: Event type values); every other string is custom. */
export const KNOWN_EVENT_TYPES = ['join', 'leave', 'team_change', 'death', 'spawn'] as const;
/** Longest period one analytics query may cover, days. */
export const MAX_ANALYTICS_DAYS = 31;
/** How many custom types the top list shows. */
export const TOP_CUSTOM_TYPES = 10;

const HOUR_MS = 3_600_000;

/** Session length buckets: [label, lower bound in seconds (inclusive)]; each ends where the next begins. */
export const SESSION_BUCKETS: readonly (readonly [string, number])[] = [
  ['<1m', 0],
  ['1-5m', 60],
  ['5-15m', 300],
  ['15-30m', 900],
  ['30-60m', 1800],
  ['1-2h', 3600],
  ['2-4h', 7200],
  ['>=4h', 14400],
];

/** Concurrent players at one UTC minute and where the number comes from. */
export interface ConcurrencyPoint {
  minute: Date;
  players: number;
  /** null for points derived from sessions. */
  servers: number | null;
  source: 'sample' | 'sessions';
}

/** The whole analytics report of one game over [from, to). */
export interface GameAnalytics {
  gameId: string;
  from: Date;
  to: Date;
  concurrency: { points: ConcurrencyPoint[]; peakPlayers: number; peakMinute: Date | null };
  /** `types` are the column order of every row's `counts`. */
  eventsPerHour: { types: string[]; rows: { hour: Date; counts: number[] }[] };
  /** Totals per type over the period, in `eventsPerHour.types` order. */
  eventTotals: { type: string; custom: boolean; count: number }[];
  sessionLengths: {
    closed: number;
    open: number;
    buckets: { label: string; minSeconds: number; maxSeconds: number | null; count: number }[];
    meanSeconds: number | null;
    medianSeconds: number | null;
    p90Seconds: number | null;
  };
  topCustomTypes: { type: string; count: number }[];
}

const isKnown = (type: string) => (KNOWN_EVENT_TYPES as readonly string[]).includes(type);

/**
 * Analytics of `gameId` for [from, to).
 * @throws {ValidationError} `invalid_period` when `to` is not after `from` or the period is longer than
 * {@link MAX_ANALYTICS_DAYS} days.
 */
export async function gameAnalytics(db: Db, gameId: string, from: Date, to: Date): Promise<GameAnalytics> {
  const span = to.getTime() - from.getTime();
  if (!(span > 0)) throw new ValidationError('--to must be after --from', 'invalid_period');
  if (span > MAX_ANALYTICS_DAYS * 86_400_000) throw new ValidationError(`the period may be at most ${MAX_ANALYTICS_DAYS} days`, 'invalid_period');
  const [concurrency, events, sessionLengths] = await Promise.all([concurrencySeries(db, gameId, from, to), eventCounts(db, gameId, from, to), lengthDistribution(db, gameId, from, to)]);
  return { gameId, from, to, concurrency, ...events, sessionLengths };
}

async function concurrencySeries(db: Db, gameId: string, from: Date, to: Date): Promise<GameAnalytics['concurrency']> {
  const samples = await db.concurrencySample.findMany({ where: { gameId, minute: { gte: from, lt: to } }, select: { minute: true, players: true, servers: true } });
  const sampled = new Map(samples.map((s) => [s.minute.getTime(), s]));
  // +1 at the first minute at or after a session's (clipped) open, −1 at the first minute after its close.
  const deltas = await db.$queryRaw<{ m: Date; d: number }[]>`
    WITH s AS (
      SELECT GREATEST("openedAt", ${from}::timestamptz) AS o, "closedAt" AS c FROM "Session"
      WHERE "gameId" = ${gameId}::uuid AND "openedAt" < ${to}::timestamptz AND ("closedAt" IS NULL OR "closedAt" >= ${from}::timestamptz))
    SELECT m, sum(d)::int AS d FROM (
      SELECT date_trunc('minute', o, 'UTC') + CASE WHEN o > date_trunc('minute', o, 'UTC') THEN interval '1 minute' ELSE interval '0' END AS m, 1 AS d FROM s
      UNION ALL
      SELECT date_trunc('minute', c, 'UTC') + interval '1 minute', -1 FROM s WHERE c IS NOT NULL AND c < ${to}::timestamptz
    ) x GROUP BY m ORDER BY m`;
  const points: ConcurrencyPoint[] = [];
  let open = 0;
  let next = 0;
  let peakPlayers = 0;
  let peakMinute: Date | null = null;
  for (let m = Math.ceil(from.getTime() / MINUTE_MS) * MINUTE_MS; m < to.getTime(); m += MINUTE_MS) {
    while (next < deltas.length && deltas[next]!.m.getTime() <= m) open += Number(deltas[next++]!.d);
    const s = sampled.get(m);
    const point: ConcurrencyPoint = s ? { minute: new Date(m), players: s.players, servers: s.servers, source: 'sample' } : { minute: new Date(m), players: open, servers: null, source: 'sessions' };
    if (point.players > peakPlayers) {
      peakPlayers = point.players;
      peakMinute = point.minute;
    }
    points.push(point);
  }
  return { points, peakPlayers, peakMinute };
}

async function eventCounts(db: Db, gameId: string, from: Date, to: Date): Promise<Pick<GameAnalytics, 'eventsPerHour' | 'eventTotals' | 'topCustomTypes'>> {
  const rows = await db.$queryRaw<{ h: Date; type: string; n: number }[]>`
    SELECT date_trunc('hour', "occurredAt", 'UTC') AS h, type, count(*)::int AS n FROM "PlayerEvent"
    WHERE "gameId" = ${gameId}::uuid AND "occurredAt" >= ${from}::timestamptz AND "occurredAt" < ${to}::timestamptz
    GROUP BY 1, 2`;
  const totals = new Map<string, number>(KNOWN_EVENT_TYPES.map((t) => [t, 0]));
  for (const r of rows) totals.set(r.type, (totals.get(r.type) ?? 0) + Number(r.n));
  const custom = [...totals].filter(([t]) => !isKnown(t)).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  const types = [...KNOWN_EVENT_TYPES, ...custom.map(([t]) => t)];
  const column = new Map(types.map((t, i) => [t, i]));
  const hours = new Map<number, number[]>();
  for (let h = Math.floor(from.getTime() / HOUR_MS) * HOUR_MS; h < to.getTime(); h += HOUR_MS) hours.set(h, types.map(() => 0));
  for (const r of rows) hours.get(r.h.getTime())![column.get(r.type)!] = Number(r.n);
  return {
    eventsPerHour: { types, rows: [...hours].map(([h, counts]) => ({ hour: new Date(h), counts })) },
    eventTotals: types.map((type) => ({ type, custom: !isKnown(type), count: totals.get(type) ?? 0 })),
    topCustomTypes: custom.slice(0, TOP_CUSTOM_TYPES).map(([type, count]) => ({ type, count })),
  };
}

async function lengthDistribution(db: Db, gameId: string, from: Date, to: Date): Promise<GameAnalytics['sessionLengths']> {
  const bounds = SESSION_BUCKETS.map(([, lower]) => lower);
  const [row] = await db.$queryRaw<{ closed: number; open: number; buckets: number[] | null; mean: number | null; median: number | null; p90: number | null }[]>`
    WITH s AS (
      SELECT floor(extract(epoch FROM ("closedAt" - "openedAt")))::int AS secs FROM "Session"
      WHERE "gameId" = ${gameId}::uuid AND "openedAt" >= ${from}::timestamptz AND "openedAt" < ${to}::timestamptz)
    SELECT
      count(secs)::int AS closed,
      (count(*) - count(secs))::int AS open,
      (SELECT array_agg(n ORDER BY b) FROM (
        SELECT b, count(s2.secs)::int AS n FROM generate_series(1, ${bounds.length}::int) b
        LEFT JOIN s s2 ON width_bucket(s2.secs, ${bounds}::int[]) = b GROUP BY b) w) AS buckets,
      floor(avg(secs))::int AS mean,
      percentile_disc(0.5) WITHIN GROUP (ORDER BY secs) AS median,
      percentile_disc(0.9) WITHIN GROUP (ORDER BY secs) AS p90
    FROM s`;
  const counts = row?.buckets ?? bounds.map(() => 0);
  return {
    closed: Number(row?.closed ?? 0),
    open: Number(row?.open ?? 0),
    buckets: SESSION_BUCKETS.map(([label, lower], i) => ({ label, minSeconds: lower, maxSeconds: SESSION_BUCKETS[i + 1]?.[1] ?? null, count: Number(counts[i] ?? 0) })),
    meanSeconds: row?.mean === null || row?.mean === undefined ? null : Number(row.mean),
    medianSeconds: row?.median === null || row?.median === undefined ? null : Number(row.median),
    p90Seconds: row?.p90 === null || row?.p90 === undefined ? null : Number(row.p90),
  };
}
