/**
 * Moves answered door decisions of one game from its Redis stream (`GameKeys.accessStream`) into
 * `AccessLog` (issue #5: "grants and denials are written to an access log (through a worker, never
 * blocking the request) with game, server, door key, user, decision, reason and time").
 *
 * A stream entry is one answered request: `u` user, `s` server ("" when none), `at` ms, `v` JSON array of
 * decisions `{doorKey, decision, reason, policyId}` (one for a check, every door for a bulk check). Each
 * decision becomes a row with `dedupeKey = <entry id>:<doorKey>`, inserted with skipDuplicates, so a
 * flusher killed between insert and acknowledge re-inserts nothing (src/store/streams.ts). Rows go in by
 * bulk loading (src/store/bulk-copy.ts): one COPY straight into `AccessLog`, and where the table refuses
 * that batch (a re-run), COPY into a staging table and one `INSERT … ON CONFLICT DO NOTHING`.
 */
import type { Prisma } from '@prisma/client';
import { pgPoolOf, type Db } from '../store/prisma.js';
import { copyDirectOrStaged, copyLine, copyTime } from '../store/bulk-copy.js';
import type { StreamConsumer } from '../store/streams.js';
import type { FlushHooks } from '../events/event-flusher.js';
import { DeadLetters, insertIsolating, refusalReason, type DeadLetterInput } from '../store/dead-letters.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LoggedDecision {
  doorKey?: unknown;
  decision?: unknown;
  reason?: unknown;
  policyId?: unknown;
}

/**
 * Flushes up to `batch` stream entries of `gameId`; returns how many entries and rows it handled.
 * Idempotent and safe to kill at any point. A row Postgres refuses is moved to the game's dead letters
 * with its reason and the others are stored (src/store/dead-letters.ts).
 * @throws on a Postgres or Redis failure that is not a refusal of rows (entries stay pending).
 */
export async function flushAccessLog(db: Db, consumer: StreamConsumer, keySpace: KeySpace, gameId: string, batch = 500, hooks: FlushHooks = {}): Promise<{ entries: number; rows: number }> {
  const key = keySpace.game(gameId).accessStream();
  const entries = await consumer.read(key, batch);
  if (!entries.length) return { entries: 0, rows: 0 };
  const rows: { entryId: string; data: Prisma.AccessLogCreateManyInput }[] = [];
  const unreadable: DeadLetterInput[] = [];
  for (const { id, fields } of entries) {
    let decisions: LoggedDecision[];
    try {
      decisions = JSON.parse(fields.v ?? '[]') as LoggedDecision[];
      if (!Array.isArray(decisions)) throw new Error('not an array');
    } catch {
      unreadable.push({ entryId: id, reason: 'stream entry: decisions are not a JSON array', row: fields.v ?? '' });
      continue;
    }
    const at = new Date(Number(fields.at));
    for (const d of decisions) {
      if (typeof d.doorKey !== 'string' || typeof d.decision !== 'string') continue;
      rows.push({
        entryId: id,
        data: {
          gameId,
          externalServerId: fields.s ? fields.s : null,
          doorKey: d.doorKey,
          externalId: fields.u ?? '',
          decision: d.decision,
          reason: typeof d.reason === 'string' ? d.reason : '',
          policyId: typeof d.policyId === 'string' && UUID_RE.test(d.policyId) ? d.policyId : null,
          at,
          dedupeKey: `${id}:${d.doorKey}`,
        },
      });
    }
  }
  const refused = await insertIsolating(rows, (chunk) => applyRows(db, gameId, chunk, hooks));
  await new DeadLetters(consumer.redis, keySpace).add(gameId, 'access_log', [...unreadable, ...refused.map(({ row, err }) => ({ entryId: row.entryId, reason: refusalReason(err), row: row.data }))]);
  await hooks.afterInsert?.();
  await consumer.done(key, entries.map((e) => e.id));
  return { entries: entries.length, rows: rows.length };
}

/**
 * Inserts `rows` in their order, straight into the table or, where it refuses that (a re-run: a
 * `dedupeKey` already stored), staged, skipping the rows whose `dedupeKey` exists.
 * @throws {RowRefused} from {@link copyTime} for a row without a valid time (isolated by the caller).
 */
function applyRows(db: Db, gameId: string, rows: readonly { data: Prisma.AccessLogCreateManyInput }[], hooks: FlushHooks): Promise<number> {
  return copyDirectOrStaged(pgPoolOf(db), {
    target: '"AccessLog" ("gameId", "externalServerId", "doorKey", "externalId", "decision", "reason", "policyId", "at", "dedupeKey")',
    lead: gameId,
    staging: 'stage_access_log',
    columns: 'n int, s text, dk text, u text, d text, rs text, pid uuid, at timestamptz, dd text',
    lines: rows.map(({ data: d }) => copyLine([d.externalServerId ?? null, d.doorKey, d.externalId, d.decision, d.reason, d.policyId ?? null, copyTime(d.at as Date), d.dedupeKey])),
    apply: `
      INSERT INTO "AccessLog" ("gameId", "externalServerId", "doorKey", "externalId", "decision", "reason", "policyId", "at", "dedupeKey")
      SELECT $1::uuid, v.s, v.dk, v.u, v.d, v.rs, v.pid, v.at, v.dd FROM stage_access_log AS v ORDER BY v.n
      ON CONFLICT DO NOTHING`,
    params: [gameId],
    beforeCommit: hooks.beforeCommit,
  });
}
