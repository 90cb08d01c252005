/**
 * `bans reconcile --game G` (issue #6): compares, user by user, the restriction the game's bans call
 * for (Postgres, the record the blocklist is built from) with what was last written to the platform,
 * and re-queues any drift. Catches writes that failed for good, writes lost with a flushed Redis (their
 * rows are still `queued` but no job exists), and bans changed while the game did not ban natively.
 *
 * Users looked at: everyone with an active ban covering the game, everyone whose last write is still
 * in force on the platform, and everyone with a queued write.
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { nativeBanSettings } from '../games/platform-settings.js';
import type { PlatformWriteQueue } from './platform-write-queue.js';
import { desiredRestrictions, matchesPlatform, NO_RESTRICTION, type WrittenRestriction } from './restriction-state.js';

/** One user whose platform state differs from their bans. */
export interface Drift {
  externalId: string;
  /** What the bans call for: active, and until when (RFC 3339 in JSON; null = permanent or inactive). */
  desired: { active: boolean; expiresAt: Date | null };
  /** The last written state, null when nothing was ever written for the user. */
  lastWritten: (WrittenRestriction & { id: string }) | null;
  /** The queued write that corrects it. */
  queuedWriteId: string;
}

export interface ReconcileResult {
  gameId: string;
  /** Users compared. */
  checked: number;
  /** Users whose platform state differed; each got a queued write. */
  drift: Drift[];
  /** Users that already had a queued write; their job was scheduled again (a no-op when it exists). */
  rescheduled: string[];
}

/**
 * Reconciles `gameId` at server time `nowMs`.
 * @throws {NotFoundError} unknown game. @throws {ValidationError} the game does not ban natively.
 */
export async function reconcilePlatformBans(db: Db, queue: PlatformWriteQueue, gameId: string, nowMs = Date.now()): Promise<ReconcileResult> {
  const game = await db.game.findUnique({ where: { id: gameId } });
  if (!game) throw new NotFoundError(`game ${gameId} not found`);
  if (!nativeBanSettings(game)) throw new ValidationError(`game ${gameId} does not ban natively (see games set-platform)`);

  const desired = await desiredRestrictions(db, game, nowMs);
  const written = await db.platformBanWrite.findMany({
    where: { gameId, state: 'written' },
    orderBy: [{ externalId: 'asc' }, { writtenAt: 'desc' }],
    distinct: ['externalId'],
    select: { id: true, externalId: true, banId: true, active: true, durationSeconds: true, writtenAt: true },
  });
  const lastWritten = new Map(written.map((w) => [w.externalId, w]));
  const queued = new Set(
    (await db.platformBanWrite.findMany({ where: { gameId, state: 'queued' }, distinct: ['externalId'], select: { externalId: true } })).map((r) => r.externalId),
  );

  const users = new Set([...desired.keys(), ...lastWritten.keys(), ...queued]);
  const drift: Drift[] = [];
  const rescheduled: string[] = [];
  for (const user of [...users].sort()) {
    if (queued.has(user)) {
      await queue.schedule(gameId, user);
      rescheduled.push(user);
      continue;
    }
    const want = desired.get(user) ?? NO_RESTRICTION;
    const last = lastWritten.get(user) ?? null;
    if (matchesPlatform(want, last, nowMs)) continue;
    // Shown under the deciding ban in `bans list`; a lift under the ban the last (active) write came from.
    const write = await queue.enqueue(game, user, want.banId ?? last?.banId ?? null, nowMs);
    drift.push({
      externalId: user,
      desired: { active: want.active, expiresAt: want.expiresAt === null ? null : new Date(want.expiresAt) },
      lastWritten: last && { id: last.id, active: last.active, durationSeconds: last.durationSeconds, writtenAt: last.writtenAt },
      queuedWriteId: write.id,
    });
  }
  return { gameId, checked: users.size, drift, rescheduled };
}
