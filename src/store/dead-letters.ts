/**
 * Dead letters: rows of a game's streams that PostgreSQL refuses (README "Failure behaviour" › "Dead
 * letters"). Validation is meant to make this impossible (src/adapters/http/parse-json.ts, src/schemas/date-time.ts);
 * this is the defence in depth behind it, so that one row the database still refuses never blocks the
 * rows around it (other servers' events in the same batch, the rest of the backlog).
 *
 * - **Isolation.** A flusher inserts a batch as one statement (events, sessions and the access log: one
 *   COPY + INSERT transaction, src/store/bulk-copy.ts); when the statement fails with a refusal
 *   of the data ({@link isRowRefusal}: SQLSTATE class 22 data exception, 23 integrity constraint, 54
 *   program limit, P0 raised by a trigger, or a row Prisma itself refuses), {@link insertIsolating}
 *   bisects the batch, storing every half that goes in, until the refused rows stand alone. A dependency
 *   outage or any other failure is not a refusal: it is thrown, and the entries stay pending for the next
 *   run (src/store/streams.ts).
 * - **Where they go.** `{g:<gameId>}:dead-letters` (src/store/keys.ts), a stream capped at
 *   {@link DEAD_LETTER_MAXLEN} entries, fields `src` (events | sessions | command_log | access_log), `id`
 *   (the source stream entry), `reason` (SQLSTATE and message, ≤ 500 characters), `row` (the refused row
 *   as JSON, cut to {@link DEAD_LETTER_ROW_MAX_CHARS}), `cut` (1 when cut). Counted per game and source in
 *   `{g:<gameId>}:dead-letters:count` (written in the same MULTI) and across games in
 *   `<prefix>:dead-letters:total` for `/metrics`. The flusher writes them *before* it acknowledges the
 *   source entries, so a flusher killed in between writes the same dead letter again on its retry (at
 *   least once, never lost).
 * - **Seen in** `admin health --game G`, the console's health panel and `/metrics`
 *   (`gis_dead_letters_total{stream}`).
 */
import type { Redis } from 'ioredis';
import { DEAD_LETTER_MAXLEN, DEAD_LETTER_ROW_MAX_CHARS, GlobalKeys } from './keys.js';
import { isDependencyUnavailable } from './dependency-errors.js';
import { log } from '../log.js';
import type { KeySpace } from './keyspace/key-space.js';

/** The flushed streams whose rows can be dead-lettered (the names of src/runtime/stream-backlog.ts). */
export const DEAD_LETTER_SOURCES = ['events', 'sessions', 'command_log', 'access_log'] as const;
export type DeadLetterSource = (typeof DEAD_LETTER_SOURCES)[number];

/** A refused row, as a flusher hands it over. */
export interface DeadLetterInput {
  /** Id of the source stream entry the row came from. */
  entryId: string;
  /** Why it was refused (see {@link refusalReason}). */
  reason: string;
  /** The row (any JSON value, or a string kept as it is). */
  row: unknown;
}

/** One dead letter as `admin health` and the console show it. */
export interface DeadLetterView {
  /** Dead-letter stream entry id. */
  id: string;
  /** When it was dead-lettered, RFC 3339. */
  at: string;
  source: string;
  entryId: string;
  reason: string;
  /** The row's JSON, cut to `rowChars` characters here (and to {@link DEAD_LETTER_ROW_MAX_CHARS} when stored). */
  row: string;
  /** True when the stored row was cut. */
  cut: boolean;
}

/** Dead letters of one game. */
export interface DeadLetterSummary {
  /** Rows dead-lettered ever, per source stream (not reduced by the MAXLEN trimming). */
  bySource: Record<DeadLetterSource, number>;
  /** Sum of {@link bySource}. */
  total: number;
  /** Entries the stream keeps now (≤ about {@link DEAD_LETTER_MAXLEN}). */
  kept: number;
  /** The newest first. */
  latest: DeadLetterView[];
}

/** A row the flusher itself knows Postgres cannot take (e.g. a timestamp written by an older build). */
export class RowRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RowRefused';
  }
}

/** SQLSTATE classes that mean "this data is refused" (not "the database is unwell"). */
const REFUSAL_CLASSES = new Set(['22', '23', '54', 'P0']);
/** Prisma request errors about the data of a row (value too long, constraint, invalid value, null, range). */
const PRISMA_DATA_CODES = new Set(['P2000', 'P2004', 'P2005', 'P2006', 'P2007', 'P2011', 'P2012', 'P2019', 'P2020', 'P2023']);

/** What the driver adapter reports about a Postgres error. */
interface AdapterCause {
  originalCode?: unknown;
  code?: unknown;
  originalMessage?: unknown;
  message?: unknown;
  kind?: unknown;
}

interface DbErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: { cause?: AdapterCause } };
}

/**
 * The driver adapter's description of a Postgres error: wrapped by Prisma (`$executeRaw`: a known request
 * error P2010 with `meta.driverAdapterError.cause`) or thrown as it is (model queries such as `createMany`
 * under the query compiler: a `DriverAdapterError` whose `cause` it is).
 */
function adapterCause(err: DbErrorLike): AdapterCause | undefined {
  if (err.meta?.driverAdapterError?.cause) return err.meta.driverAdapterError.cause;
  return err.name === 'DriverAdapterError' && err.cause && typeof err.cause === 'object' ? (err.cause) : undefined;
}

/** The SQLSTATE of a Postgres error as Prisma (driver adapter) or pg report it; undefined when none. */
function sqlState(err: DbErrorLike): string | undefined {
  const cause = adapterCause(err);
  const code = cause?.originalCode ?? cause?.code ?? err.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * True when `err` refuses the data of the rows in the failed statement, so bisecting the batch will find
 * the rows to set aside; false for outages (src/store/dependency-errors.ts) and anything else.
 */
export function isRowRefusal(err: unknown): boolean {
  if (err instanceof RowRefused) return true;
  if (!err || typeof err !== 'object' || isDependencyUnavailable(err)) return false;
  const e = err as DbErrorLike;
  if (e.name === 'PrismaClientValidationError') return true;
  const state = sqlState(e);
  if (state) return REFUSAL_CLASSES.has(state.slice(0, 2));
  return typeof e.code === 'string' && PRISMA_DATA_CODES.has(e.code);
}

/** A short reason for a refusal: `<SQLSTATE>: <database message>` where there is one, ≤ 500 characters. */
export function refusalReason(err: unknown): string {
  const e = (err ?? {}) as DbErrorLike;
  const cause = adapterCause(e);
  const dbMessage = cause?.originalMessage ?? cause?.message;
  const state = sqlState(e);
  const text = typeof dbMessage === 'string' ? dbMessage : typeof e.message === 'string' ? e.message.trim().split('\n').pop()! : String(err);
  return (state ? `${state}: ${text}` : text).slice(0, 500);
}

/**
 * Inserts `rows` with `insert`, isolating the rows the database refuses: on a refusal the batch is split
 * in halves, in order, each inserted (or split again) before the next, so the rows that go in keep their
 * order (the first stored of two equal event ids still wins). `insert` must be idempotent (ON CONFLICT DO
 * NOTHING or equivalent): a half that went in stays in. Costs about 2·log2(n) statements per refused row.
 * Recursion depth is log2(rows), never the shape of any input.
 * @returns the refused rows with their errors, in order.
 * @throws the first error that is not a refusal (an outage): nothing is set aside then.
 */
export async function insertIsolating<T>(rows: readonly T[], insert: (rows: readonly T[]) => Promise<unknown>): Promise<{ row: T; err: unknown }[]> {
  const refused: { row: T; err: unknown }[] = [];
  const attempt = async (chunk: readonly T[]): Promise<void> => {
    try {
      await insert(chunk);
    } catch (err) {
      if (!isRowRefusal(err)) throw err;
      if (chunk.length === 1) {
        refused.push({ row: chunk[0]!, err });
        return;
      }
      const mid = chunk.length >> 1;
      await attempt(chunk.slice(0, mid));
      await attempt(chunk.slice(mid));
    }
  };
  if (rows.length) await attempt(rows);
  return refused;
}

function rowJson(row: unknown): string {
  if (typeof row === 'string') return row;
  try {
    return JSON.stringify(row) ?? 'null';
  } catch (err) {
    return `[row not serialisable: ${String(err).slice(0, 200)}]`;
  }
}

/** Writes and reads the dead letters of games under one Redis key prefix. */
export class DeadLetters {
  private readonly global: GlobalKeys;

  constructor(private readonly redis: Redis, private readonly keySpace: KeySpace) {
    this.global = keySpace.global;
  }

  /**
   * Appends `letters` from `source` to `gameId`'s dead-letter stream and counts them (one MULTI on the
   * game's slot, then the cross-game total), and logs one warning line.
   * @throws the Redis client's error; the caller then leaves its source entries pending.
   */
  async add(gameId: string, source: DeadLetterSource, letters: readonly DeadLetterInput[], nowMs = Date.now()): Promise<void> {
    if (!letters.length) return;
    const keys = this.keySpace.game(gameId);
    const multi = this.redis.multi();
    for (const l of letters) {
      const json = rowJson(l.row);
      const cut = json.length > DEAD_LETTER_ROW_MAX_CHARS;
      multi.xadd(keys.deadLetters(), 'MAXLEN', '~', DEAD_LETTER_MAXLEN, '*', 'src', source, 'id', l.entryId, 'reason', l.reason.slice(0, 500), 'row', cut ? json.slice(0, DEAD_LETTER_ROW_MAX_CHARS) : json, 'cut', cut ? '1' : '0', 'at', nowMs);
    }
    multi.hincrby(keys.deadLetterCounts(), source, letters.length);
    const replies = await multi.exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
    await this.redis.hincrby(this.global.deadLetterTotals(), source, letters.length);
    log.warn('rows dead-lettered', { gameId, source, count: letters.length, reason: letters[0]!.reason.slice(0, 200) });
  }

  /**
   * The dead letters of `gameId`: counts per source, entries kept, and the `latest` newest with their
   * rows cut to `rowChars` characters.
   */
  async summary(gameId: string, latest = 5, rowChars = 300): Promise<DeadLetterSummary> {
    const keys = this.keySpace.game(gameId);
    const [counts, kept, entries] = await Promise.all([
      this.redis.hgetall(keys.deadLetterCounts()),
      this.redis.xlen(keys.deadLetters()),
      latest > 0 ? (this.redis.xrevrange(keys.deadLetters(), '+', '-', 'COUNT', latest) as Promise<[string, string[]][]>) : Promise.resolve([] as [string, string[]][]),
    ]);
    const bySource = Object.fromEntries(DEAD_LETTER_SOURCES.map((s) => [s, Number(counts[s] ?? 0)])) as Record<DeadLetterSource, number>;
    return {
      bySource,
      total: Object.values(bySource).reduce((a, b) => a + b, 0),
      kept,
      latest: entries.map(([id, flat]) => {
        const f: Record<string, string> = {};
        for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
        const row = f.row ?? '';
        return { id, at: new Date(Number(f.at ?? id.split('-')[0])).toISOString(), source: f.src ?? '', entryId: f.id ?? '', reason: f.reason ?? '', row: row.length > rowChars ? `${row.slice(0, rowChars)}…` : row, cut: f.cut === '1' || row.length > rowChars };
      }),
    };
  }

  /** Rows dead-lettered in every game under this prefix, per source stream. */
  async totals(): Promise<Record<DeadLetterSource, number>> {
    const counts = await this.redis.hgetall(this.global.deadLetterTotals());
    return Object.fromEntries(DEAD_LETTER_SOURCES.map((s) => [s, Number(counts[s] ?? 0)])) as Record<DeadLetterSource, number>;
  }
}
