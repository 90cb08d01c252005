/**
 * Moves server and session transitions of one game from its Redis stream into `GameServer` and
 * `Session` (spec: What the service does, item 2; States › Other states). Entries, in stream order:
 * `up` (server registered), `o` (session opened at a heartbeat), `c` (session closed at the last
 * heartbeat the user appeared in; reason `left` or `server_gone`), `gone` (server declared gone).
 * Every write is idempotent (natural keys, closes only set what the entry says), so a re-run is a no-op.
 * Opens and closes commute: a close may be applied before its open (a worker killed holding the open, its
 * entries claimed by another consumer only after `minIdleMs`, src/store/streams.ts), so a close of a
 * session not yet stored stores it closed, and its open then only adds the username and scope.
 * Opens and closes go in by bulk loading (src/store/bulk-copy.ts): COPY into a staging table, then one
 * `INSERT … ON CONFLICT` per batch.
 */
import type { Prisma } from '@prisma/client';
import { pgPoolOf, type Db } from '../store/prisma.js';
import { copyAndApply, copyLine, copyTime } from '../store/bulk-copy.js';
import type { StreamConsumer, StreamEntry } from '../store/streams.js';
import { DeadLetters, insertIsolating, isRowRefusal, refusalReason, type DeadLetterInput } from '../store/dead-letters.js';
import type { FlushHooks } from '../events/event-flusher.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** A session close as the UPDATE applies it, with the stream entry it came from. */
interface SessionClose {
  entryId: string;
  sid: string;
  uid: string;
  openedAt: Date;
  closedAt: Date;
  reason: string;
}

/**
 * Stream entries per session flush. From `npm run bench:flush` (docs/benchmarks.md › Flush throughput):
 * each batch is up to three transactions (servers, opens, closes), so small batches pay Postgres's
 * per-transaction cost — 74 µs of Postgres CPU per row at 500, 36 µs at 2,000, 29 µs at 5,000.
 */
export const SESSION_FLUSH_BATCH = 2000;

/**
 * Flushes up to `batch` entries; returns how many opens and closes it applied. A server change, open or
 * close Postgres refuses is moved to the game's dead letters with its reason and the rest is applied
 * (src/store/dead-letters.ts); the entries are acknowledged only after both.
 * @throws on a failure that is not a refusal of rows (entries stay pending).
 */
export async function flushSessions(db: Db, consumer: StreamConsumer, keySpace: KeySpace, gameId: string, batch = SESSION_FLUSH_BATCH, hooks: FlushHooks = {}): Promise<{ entries: number; opened: number; closed: number }> {
  const key = keySpace.game(gameId).sessionStream();
  const entries = await consumer.read(key, batch);
  if (!entries.length) return { entries: 0, opened: 0, closed: 0 };
  const opens: { entryId: string; data: Prisma.SessionCreateManyInput }[] = [];
  const closes: SessionClose[] = [];
  const serverChanges: StreamEntry[] = [];
  const refused: DeadLetterInput[] = [];
  for (const entry of entries) {
    const f = entry.fields;
    if (f.k === 'o') {
      opens.push({ entryId: entry.id, data: { gameId, externalServerId: f.s!, externalScopeId: f.sc || null, externalId: f.u!, username: f.n ?? null, openedAt: new Date(Number(f.at)) } });
    } else if (f.k === 'c') {
      closes.push({ entryId: entry.id, sid: f.s!, uid: f.u!, openedAt: new Date(Number(f.at)), closedAt: new Date(Number(f.cl)), reason: f.r ?? 'left' });
    } else {
      serverChanges.push(entry);
    }
  }
  const setAside = (entryId: string, err: unknown, row: unknown) => refused.push({ entryId, reason: refusalReason(err), row });
  // Servers first so a brand-new server's row exists; up/gone are applied in stream order: a run of `up`
  // entries of distinct servers is one bulk upsert, a `gone` (rare: the liveness sweep) one UPDATE.
  let ups: StreamEntry[] = [];
  const applyUpRun = async () => {
    for (const { row, err } of await insertIsolating(ups, (chunk) => applyUps(db, gameId, chunk, hooks))) setAside(row.id, err, row.fields);
    ups = [];
  };
  for (const entry of serverChanges) {
    const f = entry.fields;
    if (f.k === 'up') {
      // ON CONFLICT DO UPDATE may touch a row once per statement: a server's second `up` starts a new run.
      if (ups.some((u) => u.fields.s === f.s)) await applyUpRun();
      ups.push(entry);
    } else if (f.k === 'gone') {
      await applyUpRun();
      const at = new Date(Number(f.at));
      try {
        await db.gameServer.updateMany({ where: { gameId, externalServerId: f.s! }, data: { goneAt: at, lastSeenAt: at } });
      } catch (err) {
        if (!isRowRefusal(err)) throw err;
        setAside(entry.id, err, f);
      }
    }
  }
  await applyUpRun();
  for (const { row, err } of await insertIsolating(opens, (chunk) => applyOpens(db, gameId, chunk, hooks))) setAside(row.entryId, err, row.data);
  for (const { row, err } of await insertIsolating(closes, (chunk) => applyCloses(db, gameId, chunk, hooks))) setAside(row.entryId, err, row);
  await new DeadLetters(consumer.redis, keySpace).add(gameId, 'sessions', refused);
  await hooks.afterInsert?.();
  await consumer.done(key, entries.map((e) => e.id));
  return { entries: entries.length, opened: opens.length, closed: closes.length };
}

/**
 * Registers or refreshes the servers of `ups` (distinct servers): a new one gets `firstSeenAt`, every one
 * its latest scope, region, SDK version, max players and `lastSeenAt`, and is no longer gone.
 */
function applyUps(db: Db, gameId: string, ups: readonly StreamEntry[], hooks: FlushHooks): Promise<number> {
  return copyAndApply(pgPoolOf(db), {
    staging: 'stage_server_up',
    columns: 's text, sc text, rg text, sdk text, mp int, at timestamptz',
    lines: ups.map(({ fields: f }) => copyLine([f.s, f.sc || null, f.rg || null, f.sdk ?? '', f.mp ?? '0', copyTime(new Date(Number(f.at)))])),
    apply: `
      INSERT INTO "GameServer" ("gameId", "externalServerId", "externalScopeId", "region", "sdkVersion", "maxPlayers", "firstSeenAt", "lastSeenAt", "goneAt")
      SELECT $1::uuid, v.s, v.sc, v.rg, v.sdk, v.mp, v.at, v.at, NULL FROM stage_server_up AS v
      ON CONFLICT ("gameId", "externalServerId") DO UPDATE SET
        "externalScopeId" = excluded."externalScopeId", "region" = excluded."region", "sdkVersion" = excluded."sdkVersion",
        "maxPlayers" = excluded."maxPlayers", "lastSeenAt" = excluded."lastSeenAt", "goneAt" = NULL`,
    params: [gameId],
    beforeCommit: hooks.beforeCommit,
  });
}

/**
 * Opens the sessions of `opens` in their order. An open whose natural key exists is a re-run (skipped) or
 * came after its close (it sets the username and scope the close could not know).
 */
function applyOpens(db: Db, gameId: string, opens: readonly { data: Prisma.SessionCreateManyInput }[], hooks: FlushHooks): Promise<number> {
  return copyAndApply(pgPoolOf(db), {
    staging: 'stage_session_open',
    columns: 'n int, s text, sc text, u text, nm text, op timestamptz',
    lines: opens.map(({ data: d }, n) => copyLine([String(n), d.externalServerId, d.externalScopeId ?? null, d.externalId, d.username ?? null, copyTime(d.openedAt as Date)])),
    apply: `
      INSERT INTO "Session" ("gameId", "externalServerId", "externalScopeId", "externalId", "username", "openedAt")
      SELECT $1::uuid, d.s, d.sc, d.u, d.nm, d.op
      FROM (SELECT DISTINCT ON (v.s, v.u, v.op) * FROM stage_session_open AS v ORDER BY v.s, v.u, v.op, v.n) AS d ORDER BY d.n
      ON CONFLICT ("gameId", "externalServerId", "externalId", "openedAt") DO UPDATE SET
        "username" = excluded."username", "externalScopeId" = excluded."externalScopeId"
      WHERE "Session"."username" IS DISTINCT FROM excluded."username" OR "Session"."externalScopeId" IS DISTINCT FROM excluded."externalScopeId"`,
    params: [gameId],
    beforeCommit: hooks.beforeCommit,
  });
}

/**
 * Closes the sessions of `closes`; a session not stored yet (its open is still pending elsewhere) is
 * stored closed, without username and scope until its open comes.
 */
function applyCloses(db: Db, gameId: string, closes: readonly SessionClose[], hooks: FlushHooks): Promise<number> {
  return copyAndApply(pgPoolOf(db), {
    staging: 'stage_session_close',
    columns: 'sid text, uid text, op timestamptz, cl timestamptz, r text',
    lines: closes.map((c) => copyLine([c.sid, c.uid, copyTime(c.openedAt), copyTime(c.closedAt), c.reason])),
    apply: `
      INSERT INTO "Session" ("gameId", "externalServerId", "externalId", "openedAt", "closedAt", "closeReason")
      SELECT DISTINCT ON (v.sid, v.uid, v.op) $1::uuid, v.sid, v.uid, v.op, v.cl, v.r
      FROM stage_session_close AS v ORDER BY v.sid, v.uid, v.op, v.cl DESC
      ON CONFLICT ("gameId", "externalServerId", "externalId", "openedAt") DO UPDATE SET
        "closedAt" = excluded."closedAt", "closeReason" = excluded."closeReason"`,
    params: [gameId],
    beforeCommit: hooks.beforeCommit,
  });
}
