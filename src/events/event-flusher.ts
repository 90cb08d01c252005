/**
 * Moves buffered event batches of one game from its Redis stream into `PlayerEvent` (spec: Events ›
 * Player events). Insert is ON CONFLICT DO NOTHING on (gameId, eventId): the same event twice is a no-op
 * and a reused eventId with a different body is dropped silently (the first stored wins). Types are
 * stored exactly as given (the five known ones and any custom string), payload as JSONB.
 *
 * Rows go in by bulk loading (src/store/bulk-copy.ts): one `COPY` straight into `PlayerEvent`, and where
 * the table refuses that batch (an event already stored, the game deleted), `COPY` into a temporary
 * staging table and one `INSERT … SELECT … ON CONFLICT DO NOTHING`, in one transaction. Before it, one
 * JSON text parameter per statement went through `jsonb_to_recordset` (and before that Prisma
 * `createMany`, ~170 µs of worker CPU per row); `npm run bench:flush` measures rows/s and CPU per row of both
 * (docs/benchmarks.md › Flush throughput).
 *
 * A row Postgres refuses does not hold up the others: the statement is bisected and the refused rows go
 * to the game's dead letters (src/store/dead-letters.ts).
 */
import { pgPoolOf, type Db } from '../store/prisma.js';
import { copyDirectOrStaged, copyLine } from '../store/bulk-copy.js';
import type { StreamConsumer } from '../store/streams.js';
import type { EventEntry } from '../schemas/heartbeat.js';
import { toStorableIso } from '../schemas/date-time.js';
import { DeadLetters, insertIsolating, refusalReason, type DeadLetterInput } from '../store/dead-letters.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

export interface FlushResult {
  /** Stream entries (heartbeats) consumed. */
  entries: number;
  /** Event rows offered to Postgres (duplicates included). */
  events: number;
  /** Oldest receive time among the consumed entries (ms), for flush-lag metrics; 0 when none. */
  oldestReceivedMs: number;
}

/** Test seams of the flushers. */
export interface FlushHooks {
  /** Runs after the rows are committed and before the stream entries are acknowledged. */
  afterInsert?: () => Promise<void> | void;
  /** Runs inside each bulk-load transaction after its rows are written and before COMMIT (a throw: rollback). */
  beforeCommit?: () => Promise<void> | void;
}

/**
 * Stream entries (heartbeats, ~5 events each) per bulk load. From `npm run bench:flush` (docs/benchmarks.md
 * › Flush throughput, 2026-11-25): 500 is the knee — rows/s ×2–3 over 100, the worker's CPU per row a
 * third, and no clear gain beyond (Postgres 17–20 µs/row from 500 to 5,000). Bounded because one load
 * holds a Postgres backend (~50 ms at 500) while heartbeats share the cores; the earlier 100 was chosen
 * for that (heartbeat p99 with the workers on, scripts/bench/heartbeat.ts), when a row cost ~3× more.
 */
export const EVENT_FLUSH_BATCH = 500;

/**
 * Flushes up to `batch` stream entries of `gameId`. Idempotent and safe to kill at any point. A row
 * Postgres refuses (or that cannot be converted: an entry written by an older build with a timestamp the
 * API now refuses) is moved to the game's dead letters with its reason, and the rows around it are
 * stored (src/store/dead-letters.ts); the entries are acknowledged only after both.
 * @throws on a Postgres or Redis failure that is not a refusal of rows; the entries stay pending and are
 *   retried.
 */
export async function flushEvents(db: Db, consumer: StreamConsumer, keySpace: KeySpace, gameId: string, batch = EVENT_FLUSH_BATCH, hooks: FlushHooks = {}): Promise<FlushResult> {
  const key = keySpace.game(gameId).eventStream();
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
        // The API's own parse (strict RFC 3339, src/schemas/date-time.ts), with millisecond precision.
        o,
        ...(e.payload === undefined ? {} : { p: [e.payload] }),
        s: fields.s ?? '',
        r: receivedAt,
      };
      try {
        // An absent payload is SQL NULL, a JSON null payload is JSONB null.
        rows.push({ entryId: id, row, line: copyLine([row.e, row.t, row.x, row.o, row.p ? JSON.stringify(row.p[0]) : null, row.s, row.r]) });
      } catch (err) {
        refused.push({ entryId: id, reason: `row cannot be serialised: ${String(err).slice(0, 200)}`, row: { eventId: e.eventId, type: e.type, externalServerId: fields.s ?? '' } });
      }
    }
  }
  if (rows.length) {
    for (const { row, err } of await insertEvents(db, gameId, rows, hooks)) {
      refused.push({ entryId: row.entryId, reason: refusalReason(err), row: row.row });
    }
  }
  await new DeadLetters(consumer.redis, keySpace).add(gameId, 'events', refused);
  await hooks.afterInsert?.();
  await consumer.done(key, entries.map((e) => e.id));
  return { entries: entries.length, events: rows.length, oldestReceivedMs: oldest };
}

/** One event row on its way to Postgres: its COPY line, the row (for a dead letter) and the stream entry it came from. */
interface PendingRow {
  entryId: string;
  row: EventRow;
  line: string;
}

/**
 * One event row; its short keys are also the shape of an events dead letter's `row`. `p` wraps the payload
 * in a one-element array so that an absent payload (no `p`: SQL NULL) and a JSON `null` payload (`[null]`:
 * JSONB null) stay distinct.
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

/** The staging table's columns: the row's position in the load, then its COPY line's fields. */
const EVENT_COLUMNS = 'n int, e text, t text, x text, o timestamptz, p jsonb, s text, r timestamptz';

/** Most characters of COPY lines per transaction: bounds the memory of one load. */
const MAX_LOAD_CHARS = 4 * 1024 * 1024;

/**
 * Inserts `rows` in order, in as few loads as {@link MAX_LOAD_CHARS} allows; a row whose (gameId, eventId)
 * exists — in the table or earlier in the batch — is skipped (ON CONFLICT DO NOTHING, the first stored
 * wins). A load the database refuses is bisected until the refused rows stand alone
 * ({@link insertIsolating}); those are returned, everything else is stored.
 * @throws a failure that is not a refusal of rows (e.g. Postgres unreachable).
 */
async function insertEvents(db: Db, gameId: string, rows: PendingRow[], hooks: FlushHooks): Promise<{ row: PendingRow; err: unknown }[]> {
  const refused: { row: PendingRow; err: unknown }[] = [];
  for (let i = 0; i < rows.length; ) {
    let end = i + 1;
    for (let chars = rows[i]!.line.length; end < rows.length && chars + rows[end]!.line.length < MAX_LOAD_CHARS; end++) chars += rows[end]!.line.length;
    refused.push(...(await insertIsolating(rows.slice(i, end), (chunk) => loadEvents(db, gameId, chunk, hooks))));
    i = end;
  }
  return refused;
}

/**
 * One bulk load of `rows`, in their order: straight into the table, or staged (`n`, the row's position,
 * orders the INSERT, so that of two rows with one eventId the first is stored).
 */
function loadEvents(db: Db, gameId: string, rows: readonly PendingRow[], hooks: FlushHooks): Promise<number> {
  return copyDirectOrStaged(pgPoolOf(db), {
    target: '"PlayerEvent" ("gameId", "eventId", "type", "externalId", "occurredAt", "payload", "externalServerId", "receivedAt")',
    lead: gameId,
    staging: 'stage_player_event',
    columns: EVENT_COLUMNS,
    lines: rows.map((r) => r.line),
    apply: `
      INSERT INTO "PlayerEvent" ("gameId", "eventId", "type", "externalId", "occurredAt", "payload", "externalServerId", "receivedAt")
      SELECT $1::uuid, v.e, v.t, v.x, v.o, v.p, v.s, v.r
      FROM stage_player_event AS v
      WHERE EXISTS (SELECT 1 FROM "Game" WHERE id = $1::uuid) -- a deleted game's buffered events are dropped
      ORDER BY v.n
      ON CONFLICT DO NOTHING`,
    params: [gameId],
    beforeCommit: hooks.beforeCommit,
  });
}
