/**
 * Moves command transitions (dispatched, acked, failed, expired) of one game from its Redis stream into
 * `CommandTransition` and the `Command.status` column (spec: States › Command lifecycle). Idempotent:
 * (commandId, toStatus) is unique and status only moves forward (pending → dispatched → terminal).
 * Transitions of commands with no Postgres row are skipped (the issuer writes the row first).
 */
import type { Db } from '../store/prisma.js';
import type { StreamConsumer } from '../store/streams.js';
import type { FlushHooks } from '../events/event-flusher.js';
import { DeadLetters, insertIsolating, refusalReason } from '../store/dead-letters.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** One command transition to record: the command moved to `status` at `at` (on `server`, '' if none). */
export interface CommandTransitionRow {
  id: string;
  status: string;
  server: string;
  at: Date;
  /** Failure reason (failed) or why the state was inferred (expired); null otherwise. */
  reason: string | null;
}

/**
 * Records transitions of commands of `gameId`: a `CommandTransition` row each (a repeat is a no-op) and
 * `Command.status` moved forward to each command's last step (never backward). Commands with no
 * Postgres row are skipped.
 */
export async function applyCommandTransitions(db: Db, gameId: string, rows: readonly CommandTransitionRow[]): Promise<void> {
  if (!rows.length) return;
  const ids = rows.map((r) => r.id), st = rows.map((r) => r.status), srv = rows.map((r) => r.server);
  const at = rows.map((r) => r.at), why = rows.map((r) => r.reason);
  // UPDATE … FROM picks an arbitrary source row when several match: keep only each command's last step.
  const last = new Map<string, number>();
  ids.forEach((id, i) => last.set(id, i));
  const u = [...last.values()];
  const [uId, uSt, uSrv, uAt, uWhy] = [u.map((i) => ids[i]!), u.map((i) => st[i]!), u.map((i) => srv[i]!), u.map((i) => at[i]!), u.map((i) => why[i] ?? null)];
  await db.$transaction([
    db.$executeRaw`
      INSERT INTO "CommandTransition" ("commandId", "toStatus", "externalServerId", "at", "reason")
      SELECT v.id, v.st, NULLIF(v.srv, ''), v.at, v.why
      FROM unnest(${ids}::uuid[], ${st}::text[], ${srv}::text[], ${at}::timestamptz[], ${why}::text[]) AS v(id, st, srv, at, why)
      WHERE EXISTS (SELECT 1 FROM "Command" c WHERE c.id = v.id)
      ON CONFLICT ("commandId", "toStatus") DO NOTHING`,
    db.$executeRaw`
      UPDATE "Command" AS c
      SET status = v.st, "updatedAt" = v.at,
          "failureReason" = CASE WHEN v.st = 'failed' THEN v.why ELSE c."failureReason" END,
          "externalServerId" = COALESCE(c."externalServerId", NULLIF(v.srv, ''))
      FROM unnest(${uId}::uuid[], ${uSt}::text[], ${uSrv}::text[], ${uAt}::timestamptz[], ${uWhy}::text[]) AS v(id, st, srv, at, why)
      WHERE c.id = v.id AND c."gameId" = ${gameId}::uuid
        AND (CASE c.status WHEN 'pending' THEN 0 WHEN 'dispatched' THEN 1 ELSE 2 END)
          < (CASE v.st WHEN 'pending' THEN 0 WHEN 'dispatched' THEN 1 ELSE 2 END)`,
  ]);
}

/**
 * Flushes up to `batch` transitions; returns how many entries it handled. A transition Postgres refuses
 * is moved to the game's dead letters with its reason and the others are applied
 * (src/store/dead-letters.ts); the entries are acknowledged only after both.
 * @throws on a failure that is not a refusal of rows (entries stay pending).
 */
export async function flushCommandLog(db: Db, consumer: StreamConsumer, keySpace: KeySpace, gameId: string, batch = 1000, hooks: FlushHooks = {}): Promise<{ entries: number }> {
  const key = keySpace.game(gameId).commandLog();
  const entries = await consumer.read(key, batch);
  if (!entries.length) return { entries: 0 };
  const rows: (CommandTransitionRow & { entryId: string })[] = [];
  for (const { id: entryId, fields: f } of entries) {
    if (!f.id || !/^[0-9a-f-]{36}$/.test(f.id)) continue;
    rows.push({ entryId, id: f.id, status: f.st ?? '', server: f.s ?? '', at: new Date(Number(f.at)), reason: f.why ? f.why : null });
  }
  // Halves are applied in stream order, and a status only moves forward, so bisecting changes no outcome.
  const refused = await insertIsolating(rows, (chunk) => applyCommandTransitions(db, gameId, chunk));
  await new DeadLetters(consumer.redis, keySpace).add(gameId, 'command_log', refused.map(({ row, err }) => ({ entryId: row.entryId, reason: refusalReason(err), row })));
  await hooks.afterInsert?.();
  await consumer.done(key, entries.map((e) => e.id));
  return { entries: entries.length };
}
