/**
 * Moves buffered event batches of one game from its Redis stream into `PlayerEvent` (spec: Events ›
 * Player events). Insert is ON CONFLICT DO NOTHING on (gameId, eventId): the same event twice is a no-op
 * and a reused eventId with a different body is dropped silently (the first stored wins). Types are
 * stored exactly as given (the five known ones and any custom string), payload as JSONB.
 *
 * Rows go in as `INSERT … SELECT FROM jsonb_to_recordset($1)`: one JSON text parameter per statement in
 * place of Prisma `createMany` (eight parameters per row). Prisma 6.19's query compiler spends CPU per
 * parameter and per byte; measured here, createMany cost the worker ~170 µs of CPU per event row and this
 * ~25 µs (flush throughput ×4–6; scripts/bench-heartbeat.ts prints the figures).
 *
 * A row Postgres refuses does not hold up the others: the statement is bisected and the refused rows go
 * to the game's dead letters (src/store/dead-letters.ts).
 */
import type { Db } from '../store/prisma.js';
import type { StreamConsumer } from '../store/streams.js';
import { GameKeys } from '../store/keys.js';
import type { EventEntry } from '../schemas/heartbeat.js';
import { toStorableIso } from '../schemas/date-time.js';
import { DeadLetters, insertIsolating, refusalReason, type DeadLetterInput } from '../store/dead-letters.js';

export interface FlushResult {
  /** Stream entries (heartbeats) consumed. */
  entries: number;
  /** Event rows offered to Postgres (duplicates included). */
  events: number;
  /** Oldest receive time among the consumed entries (ms), for flush-lag metrics; 0 when none. */
  oldestReceivedMs: number;
}

/** Test seam: runs after the rows are committed and before the stream entries are acknowledged. */
export interface FlushHooks {
  afterInsert?: () => Promise<void> | void;
}

/**
 * Stream entries (heartbeats, ~5 events each) per INSERT. Small on purpose: one statement's Postgres
 * work holds a core for its whole length, and on a host shared with the API every heartbeat arriving
 * meanwhile queues behind it. 100 entries (~15 ms of Postgres) instead of 500, together with the
 * workers' lower CPU priority (config `WORKER_NICE`), took the heartbeat p99 at ~3,000/s with the
 * workers on from ~84 ms to ~32 ms; the drain rate stayed at 19–23k rows/s (scripts/bench-heartbeat.ts).
 */
export const EVENT_FLUSH_BATCH = 100;

/**
 * Flushes up to `batch` stream entries of `gameId`. Idempotent and safe to kill at any point. A row
 * Postgres refuses (or that cannot be converted: an entry written by an older build with a timestamp the
 * API now refuses) is moved to the game's dead letters with its reason, and the rows around it are
 * stored (src/store/dead-letters.ts); the entries are acknowledged only after both.
 * @throws on a Postgres or Redis failure that is not a refusal of rows; the entries stay pending and are
 *   retried.
 */
export async function flushEvents(db: Db, consumer: StreamConsumer, redisPrefix: string, gameId: string, batch = EVENT_FLUSH_BATCH, hooks: FlushHooks = {}): Promise<FlushResult> {
  const key = new GameKeys(redisPrefix, gameId).eventStream();
  const entries = await consumer.read(key, batch);
  if (!entries.length) return { entries: 0, events: 0, oldestReceivedMs: 0 };
  const rows: PendingRow[] = [];
  const refused: DeadLetterInput[] = [];
  let oldest = Number.MAX_SAFE_INTEGER;
  for (const { id, fields } of entries) {
    const receivedMs = Number(fields.r);
    oldest = Math.min(oldest, receivedMs);
    const receivedAt = new Date(receivedMs).toISOString();
    let events: EventEntry[];
    try {
      events = JSON.parse(fields.e ?? '[]') as EventEntry[];
      if (!Array.isArray(events)) throw new Error('not an array');
    } catch {
      refused.push({ entryId: id, reason: 'stream entry: events are not a JSON array', row: fields.e ?? '' });
      continue;
    }
    for (const e of events) {
      const o = toStorableIso(e?.occurredAt);
      if (o === null) {
        refused.push({ entryId: id, reason: `occurredAt ${JSON.stringify(String(e?.occurredAt).slice(0, 60))} is not a storable RFC 3339 date-time`, row: { ...e, externalServerId: fields.s ?? '' } });
        continue;
      }
      const row: EventRow = {
        e: e.eventId,
        t: e.type,
        x: e.externalId ?? null,
        // The API's own parse (strict RFC 3339, src/schemas/date-time.ts), sent with millisecond precision.
        o,
        ...(e.payload === undefined ? {} : { p: [e.payload] }),
        s: fields.s ?? '',
        r: receivedAt,
      };
      try {
        rows.push({ entryId: id, json: JSON.stringify(row) });
      } catch (err) {
        refused.push({ entryId: id, reason: `row cannot be serialised: ${String(err).slice(0, 200)}`, row: { eventId: e.eventId, type: e.type, externalServerId: fields.s ?? '' } });
      }
    }
  }
  if (rows.length) {
    for (const { row, err } of await insertEvents(db, gameId, rows)) {
      refused.push({ entryId: row.entryId, reason: refusalReason(err), row: row.json });
    }
  }
  await new DeadLetters(consumer.redis, redisPrefix).add(gameId, 'events', refused);
  await hooks.afterInsert?.();
  await consumer.done(key, entries.map((e) => e.id));
  return { entries: entries.length, events: rows.length, oldestReceivedMs: oldest };
}

/** One event row on its way to Postgres: its JSON ({@link EventRow}) and the stream entry it came from. */
interface PendingRow {
  entryId: string;
  json: string;
}

/**
 * One event row as sent to Postgres; short keys keep the parameter small. `p` wraps the payload in a
 * one-element array so that an absent payload (no `p`: SQL NULL) and a JSON `null` payload (`[null]`:
 * JSONB null) stay distinct, as they were with createMany (undefined vs Prisma.JsonNull).
 */
interface EventRow {
  e: string;
  t: string;
  x: string | null;
  o: string;
  p?: [unknown];
  s: string;
  r: string;
}

/** Most characters of row JSON per statement: bounded memory, and far below JSONB's 255 MB limit. */
const MAX_STATEMENT_CHARS = 4 * 1024 * 1024;

/**
 * Inserts `rows` (each an {@link EventRow} as JSON) in order, in as few statements as
 * {@link MAX_STATEMENT_CHARS} allows; a row whose (gameId, eventId) exists — in the table or earlier in
 * the batch — is skipped, as `createMany({ skipDuplicates: true })` did (ON CONFLICT DO NOTHING). A
 * statement the database refuses is bisected until the refused rows stand alone
 * ({@link insertIsolating}); those are returned, everything else is stored.
 * @throws a failure that is not a refusal of rows (e.g. Postgres unreachable).
 */
async function insertEvents(db: Db, gameId: string, rows: PendingRow[]): Promise<{ row: PendingRow; err: unknown }[]> {
  const refused: { row: PendingRow; err: unknown }[] = [];
  for (let i = 0; i < rows.length; ) {
    let end = i + 1;
    for (let chars = rows[i]!.json.length; end < rows.length && chars + rows[end]!.json.length < MAX_STATEMENT_CHARS; end++) chars += rows[end]!.json.length + 1;
    refused.push(...(await insertIsolating(rows.slice(i, end), (chunk) => insertStatement(db, gameId, chunk))));
    i = end;
  }
  return refused;
}

/** One INSERT of `rows`, in their order. */
function insertStatement(db: Db, gameId: string, rows: readonly PendingRow[]): Promise<number> {
  const json = `[${rows.map((r) => r.json).join(',')}]`;
  return db.$executeRaw`
      INSERT INTO "PlayerEvent" ("gameId", "eventId", "type", "externalId", "occurredAt", "payload", "externalServerId", "receivedAt")
      SELECT ${gameId}::uuid, v.e, v.t, v.x, v.o, v.p -> 0, v.s, v.r
      FROM ROWS FROM (jsonb_to_recordset(${json}::jsonb) AS (e text, t text, x text, o timestamptz, p jsonb, s text, r timestamptz))
        WITH ORDINALITY AS v(e, t, x, o, p, s, r, n)
      WHERE EXISTS (SELECT 1 FROM "Game" WHERE id = ${gameId}::uuid) -- a deleted game's buffered events are dropped
      ORDER BY v.n
      ON CONFLICT DO NOTHING`;
}
