/**
 * Moves buffered event batches of one game from its Redis stream into `PlayerEvent` (spec: Events ›
 * Player events). Insert is ON CONFLICT DO NOTHING on (gameId, eventId): the same event twice is a no-op
 * and a reused eventId with a different body is dropped silently (the first stored wins). Types are
 * stored exactly as given (the five known ones and any custom string), payload as JSONB.
 */
import { Prisma } from '@prisma/client';
import type { Db } from '../store/prisma';
import type { StreamConsumer } from '../store/streams';
import { GameKeys } from '../store/keys';
import type { EventEntry } from '../schemas/heartbeat';

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
 * Flushes up to `batch` stream entries of `gameId`. Idempotent and safe to kill at any point.
 * @throws on Postgres or Redis failure; the entries stay pending and are retried.
 */
export async function flushEvents(db: Db, consumer: StreamConsumer, redisPrefix: string, gameId: string, batch = 500, hooks: FlushHooks = {}): Promise<FlushResult> {
  const key = new GameKeys(redisPrefix, gameId).eventStream();
  const entries = await consumer.read(key, batch);
  if (!entries.length) return { entries: 0, events: 0, oldestReceivedMs: 0 };
  const rows: Prisma.PlayerEventCreateManyInput[] = [];
  let oldest = Number.MAX_SAFE_INTEGER;
  for (const { fields } of entries) {
    const receivedMs = Number(fields.r);
    oldest = Math.min(oldest, receivedMs);
    const receivedAt = new Date(receivedMs);
    for (const e of JSON.parse(fields.e ?? '[]') as EventEntry[]) {
      rows.push({
        gameId,
        eventId: e.eventId,
        type: e.type,
        externalId: e.externalId ?? null,
        occurredAt: new Date(e.occurredAt),
        payload: e.payload === undefined ? undefined : e.payload === null ? Prisma.JsonNull : (e.payload as Prisma.InputJsonValue),
        externalServerId: fields.s ?? '',
        receivedAt,
      });
    }
  }
  if (rows.length) await db.playerEvent.createMany({ data: rows, skipDuplicates: true });
  await hooks.afterInsert?.();
  await consumer.done(key, entries.map((e) => e.id));
  return { entries: entries.length, events: rows.length, oldestReceivedMs: oldest };
}
