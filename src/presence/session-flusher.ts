/**
 * Moves server and session transitions of one game from its Redis stream into `GameServer` and
 * `Session` (spec: What the service does, item 2; States › Other states). Entries, in stream order:
 * `up` (server registered), `o` (session opened at a heartbeat), `c` (session closed at the last
 * heartbeat the user appeared in; reason `left` or `server_gone`), `gone` (server declared gone).
 * Every write is idempotent (natural keys, closes only set what the entry says), so a re-run is a no-op.
 */
import type { Db } from '../store/prisma.js';
import type { StreamConsumer } from '../store/streams.js';
import { GameKeys } from '../store/keys.js';
import type { FlushHooks } from '../events/event-flusher.js';

/** Flushes up to `batch` entries; returns how many opens and closes it applied. */
export async function flushSessions(db: Db, consumer: StreamConsumer, redisPrefix: string, gameId: string, batch = 1000, hooks: FlushHooks = {}): Promise<{ entries: number; opened: number; closed: number }> {
  const key = new GameKeys(redisPrefix, gameId).sessionStream();
  const entries = await consumer.read(key, batch);
  if (!entries.length) return { entries: 0, opened: 0, closed: 0 };
  const opens = [];
  const closes = { sid: [] as string[], uid: [] as string[], openedAt: [] as Date[], closedAt: [] as Date[], reason: [] as string[] };
  const serverChanges = [];
  for (const { fields: f } of entries) {
    if (f.k === 'o') {
      opens.push({ gameId, externalServerId: f.s!, externalScopeId: f.sc || null, externalId: f.u!, username: f.n ?? null, openedAt: new Date(Number(f.at)) });
    } else if (f.k === 'c') {
      closes.sid.push(f.s!);
      closes.uid.push(f.u!);
      closes.openedAt.push(new Date(Number(f.at)));
      closes.closedAt.push(new Date(Number(f.cl)));
      closes.reason.push(f.r ?? 'left');
    } else {
      serverChanges.push(f);
    }
  }
  // Servers first so a brand-new server's row exists; up/gone are applied in stream order.
  for (const f of serverChanges) {
    const at = new Date(Number(f.at));
    if (f.k === 'up') {
      const data = { externalScopeId: f.sc || null, region: f.rg || null, sdkVersion: f.sdk ?? '', maxPlayers: Number(f.mp ?? 0), lastSeenAt: at, goneAt: null };
      await db.gameServer.upsert({
        where: { gameId_externalServerId: { gameId, externalServerId: f.s! } },
        create: { gameId, externalServerId: f.s!, firstSeenAt: at, ...data },
        update: data,
      });
    } else if (f.k === 'gone') {
      await db.gameServer.updateMany({ where: { gameId, externalServerId: f.s! }, data: { goneAt: at, lastSeenAt: at } });
    }
  }
  if (opens.length) await db.session.createMany({ data: opens, skipDuplicates: true });
  if (closes.sid.length) {
    await db.$executeRaw`
      UPDATE "Session" AS s SET "closedAt" = v.cl, "closeReason" = v.r
      FROM unnest(${closes.sid}::text[], ${closes.uid}::text[], ${closes.openedAt}::timestamptz[], ${closes.closedAt}::timestamptz[], ${closes.reason}::text[])
        AS v(sid, uid, op, cl, r)
      WHERE s."gameId" = ${gameId}::uuid AND s."externalServerId" = v.sid AND s."externalId" = v.uid AND s."openedAt" = v.op`;
  }
  await hooks.afterInsert?.();
  await consumer.done(key, entries.map((e) => e.id));
  return { entries: entries.length, opened: opens.length, closed: closes.sid.length };
}
