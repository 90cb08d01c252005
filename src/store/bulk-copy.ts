/**
 * Bulk loading for the flushers (issue #20): a batch of rows goes to Postgres as `COPY … FROM STDIN` into
 * a temporary staging table and one statement (`INSERT … SELECT … ON CONFLICT DO NOTHING`, or an UPDATE …
 * FROM for session closes) that moves it into the real table, in one transaction. COPY streams the rows in
 * Postgres's text format with no per-row parameter or JSON parsing, which is what the flushers spent their
 * CPU on (figures: docs/benchmarks.md › Flush throughput). The COPY sub-protocol is `pg-copy-streams` on a
 * connection of the process's `pg` pool (src/store/prisma.ts `pgPoolOf`).
 *
 * Guarantees kept from the statement-per-batch flush:
 * - exactly once: the moving statement skips rows whose natural key exists (ON CONFLICT DO NOTHING), so a
 *   batch re-read after a crash stores nothing twice;
 * - all or nothing per call: COPY and the moving statement commit together; the staging table is
 *   `ON COMMIT DELETE ROWS`, so a failed or rolled-back call leaves nothing behind in it;
 * - a row Postgres refuses fails the whole call with the refusal's SQLSTATE (class 22 from COPY's input
 *   conversion, 23 from the constraint), so `insertIsolating` (src/store/dead-letters.ts) can bisect the
 *   batch as before.
 *
 * Inserts of new rows (events, the access log) first try {@link copyDirectOrStaged}: COPY straight into
 * the table, with no staging table and no INSERT … SELECT. Nearly every batch holds only new rows, and
 * for those the direct COPY writes each row once instead of twice (figures: docs/benchmarks.md › "The
 * heartbeat waves spread, events copied straight in, the fleet from the build"). A batch the table
 * refuses as a whole (a row already stored: a re-read after a crash, a heartbeat retried after a lost 200;
 * a deleted game's rows) rolls back and goes the staged way, which keeps every guarantee above.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { isRowRefusal, RowRefused } from './dead-letters.js';

/** One staged load: what goes into the staging table and how it moves on. */
export interface StagedLoad {
  /**
   * Name of the session-local temporary table (an SQL identifier of letters, digits and `_`; one per kind
   * of row, created on first use on each connection and kept for the connection's life).
   */
  staging: string;
  /** Column definitions of the staging table, e.g. `n int, e text, o timestamptz`. */
  columns: string;
  /** Rows, each already encoded by {@link copyLine}. */
  lines: readonly string[];
  /** The statement that moves the staged rows into the real table (reads `staging`). */
  apply: string;
  /** Parameters of `apply` ($1…). */
  params?: readonly unknown[];
  /** Test seam: runs after `apply` and before COMMIT (a throw rolls everything back). */
  beforeCommit?: () => Promise<void> | void;
}

/**
 * COPY text-format encoding of one field: SQL NULL for null or undefined, else the text with backslash, newline,
 * carriage return and tab escaped (PostgreSQL docs, COPY › Text Format).
 */
export function copyField(value: string | null | undefined): string {
  // undefined too: a field missing from a stream entry is NULL, refused by NOT NULL like Prisma refused it.
  if (value === null || value === undefined) return '\\N';
  // Fast path: most fields need no escaping.
  if (!/[\\\n\r\t]/.test(value)) return value;
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** One COPY text-format line (fields tab-separated, newline-terminated) from `fields`. */
export function copyLine(fields: readonly (string | null | undefined)[]): string {
  return `${fields.map(copyField).join('\t')}\n`;
}

/**
 * A timestamp as a COPY field (RFC 3339 UTC, millisecond precision).
 * @throws {RowRefused} for an invalid Date (a stream entry without its time), so that `insertIsolating`
 *   sets the row aside as a refused one, as Prisma's validation did before.
 */
export function copyTime(d: Date): string {
  if (Number.isNaN(d.getTime())) throw new RowRefused('invalid date-time in the stream entry');
  return d.toISOString();
}

/** Rows encoded per chunk written to the COPY stream: bounded memory per write, few writes per batch. */
const LINES_PER_CHUNK = 500;

function* chunks(lines: readonly string[]): Generator<string> {
  for (let i = 0; i < lines.length; i += LINES_PER_CHUNK) yield lines.slice(i, i + LINES_PER_CHUNK).join('');
}

/**
 * Runs one {@link StagedLoad} in a transaction on a connection of `pool`: COPY into the staging table,
 * `apply`, COMMIT.
 * @returns the row count `apply` reports (rows inserted or updated; duplicates skipped are not counted).
 * @throws the Postgres error of COPY or `apply` (a refusal carries its SQLSTATE in `code`), a connection
 *   error, or what `beforeCommit` throws; the transaction is rolled back then, and a connection whose
 *   rollback failed is discarded from the pool.
 */
export async function copyAndApply(pool: pg.Pool, load: StagedLoad): Promise<number> {
  if (!/^[a-z_][a-z0-9_]*$/i.test(load.staging)) throw new Error(`copyAndApply: bad staging table name ${load.staging}`);
  // One round trip to begin; IF NOT EXISTS because the table outlives the transaction on this connection.
  return inTransaction(pool, `BEGIN; CREATE TEMP TABLE IF NOT EXISTS ${load.staging} (${load.columns}) ON COMMIT DELETE ROWS`, async (client) => {
    await pipeline(Readable.from(chunks(load.lines)), client.query(copyFrom(`COPY ${load.staging} FROM STDIN`)));
    const res = await client.query(load.apply, load.params as unknown[] | undefined);
    await load.beforeCommit?.();
    return res.rowCount ?? 0;
  });
}

/**
 * A batch of new rows for {@link copyDirectOrStaged}: the {@link StagedLoad} that decides row by row, plus
 * the table to COPY straight into. Each line is written once, without its first field: straight into the
 * table it starts with `lead` (the game id), into the staging table with its position (the staging
 * table's first column, `n int`, which `apply` orders by).
 */
export interface NewRowsLoad extends StagedLoad {
  /** The table and its columns in the straight lines' field order, as COPY takes them: `"PlayerEvent" ("gameId", …)`. */
  target: string;
  /** The first field of every straight line, e.g. the game id. */
  lead: string;
  /** Rows, each encoded by {@link copyLine}, without their first field (`lead` or the position). */
  lines: readonly string[];
}

/**
 * Inserts a batch of rows that are new as far as the caller knows: first as one `COPY <target> FROM STDIN`
 * in a transaction, and when the table refuses it ({@link isRowRefusal}: a unique key already stored, a
 * foreign key gone, a value it cannot take) as the staged load, whose `ON CONFLICT DO NOTHING` and
 * conditions decide row by row. Either way all or nothing per call; `beforeCommit` runs in the
 * transaction that commits.
 * @returns the rows inserted (all of them when the straight COPY went in, else what `apply` reports).
 * @throws what {@link copyAndApply} throws, and any failure of the straight COPY that is not a refusal of
 *   its rows (an outage, what `beforeCommit` throws): the staged load is then not tried.
 */
export async function copyDirectOrStaged(pool: pg.Pool, load: NewRowsLoad): Promise<number> {
  const lead = `${copyField(load.lead)}\t`;
  try {
    return await inTransaction(pool, 'BEGIN', async (client) => {
      await pipeline(Readable.from(chunks(load.lines.map((line) => lead + line))), client.query(copyFrom(`COPY ${load.target} FROM STDIN`)));
      await load.beforeCommit?.();
      return load.lines.length;
    });
  } catch (err) {
    if (!isRowRefusal(err)) throw err;
    return copyAndApply(pool, { ...load, lines: load.lines.map((line, n) => `${n}\t${line}`) });
  }
}

/**
 * Runs `begin` (BEGIN, and what else the transaction starts with), `work` and COMMIT on a connection of
 * `pool`; on a throw, rolls back (a connection whose rollback fails is discarded from the pool) and rethrows.
 */
async function inTransaction<T>(pool: pg.Pool, begin: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let discard = false;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      discard = true;
    });
    throw err;
  } finally {
    client.release(discard);
  }
}
