/**
 * The user restriction a game that bans natively should carry for one user (issue #6, "Enforcement on
 * platforms that ban natively"), derived from Postgres, and how it compares with what was last written.
 *
 * A platform restriction covers the whole universe, so only bans covering the whole game count: scope
 * `workspace`, or `game` for this game. A `server` ban cannot be expressed as a universe restriction;
 * it is enforced by the kick issued at ban time and by POST bans/check.
 */
import type { Db } from '../store/prisma.js';

/** Longest display reason sent to the platform (characters). */
export const MAX_DISPLAY_REASON = 400;
/** Longest private reason sent to the platform (characters). */
export const MAX_PRIVATE_REASON = 1000;
/**
 * Two active restrictions count as the same when their ends differ by at most this, ms: a written
 * duration is rounded up to whole seconds and counts from when the platform applied it.
 */
export const EXPIRY_TOLERANCE_MS = 5_000;

/** The restriction the user should have. */
export interface DesiredRestriction {
  active: boolean;
  /** Epoch ms the restriction should end; null = permanent (or inactive). */
  expiresAt: number | null;
  /** The ban that lasts longest (it decides the duration and the reasons); null when inactive. */
  banId: string | null;
  /** For moderators on the platform: ban id, issuer and reason. */
  privateReason: string;
  /** Shown to the user by the platform. */
  displayReason: string;
}

/** The body of one write: `durationSeconds` null = permanent (or not active). */
export interface RestrictionWriteState {
  active: boolean;
  durationSeconds: number | null;
}

/** A written PlatformBanWrite row, as far as the comparison needs it. */
export interface WrittenRestriction {
  active: boolean;
  durationSeconds: number | null;
  writtenAt: Date | null;
}

interface BanRowForPlatform {
  id: string;
  externalId: string;
  expiresAt: Date | null;
  reason: string;
  issuedBy: string;
}

/** No active ban covers the game. */
export const NO_RESTRICTION: Readonly<DesiredRestriction> = { active: false, expiresAt: null, banId: null, privateReason: 'no active ban', displayReason: '' };

/** The desired restriction from a user's bans that cover the whole game and are active at `nowMs`. */
export function desiredFromBans(bans: readonly BanRowForPlatform[], nowMs: number): DesiredRestriction {
  let best: BanRowForPlatform | null = null;
  for (const b of bans) {
    if (b.expiresAt && b.expiresAt.getTime() <= nowMs) continue;
    if (!best || (best.expiresAt !== null && (b.expiresAt === null || b.expiresAt > best.expiresAt))) best = b;
  }
  if (!best) return NO_RESTRICTION;
  return {
    active: true,
    expiresAt: best.expiresAt ? best.expiresAt.getTime() : null,
    banId: best.id,
    privateReason: `ban ${best.id} by ${best.issuedBy}: ${best.reason}`.slice(0, MAX_PRIVATE_REASON),
    displayReason: best.reason.slice(0, MAX_DISPLAY_REASON),
  };
}

/** The Prisma filter: bans of `game`'s workspace, not lifted, unexpired at `nowMs`, covering the whole game. */
function coveringWhere(game: { id: string; workspaceId: string }, nowMs: number) {
  return {
    workspaceId: game.workspaceId,
    liftedAt: null,
    AND: [
      { OR: [{ scope: 'workspace' }, { scope: 'game', gameId: game.id }] },
      { OR: [{ expiresAt: null }, { expiresAt: { gt: new Date(nowMs) } }] },
    ],
  };
}

const SELECT = { id: true, externalId: true, expiresAt: true, reason: true, issuedBy: true } as const;

/** The restriction `externalId` should have in `game` at `nowMs`, from Postgres. */
export async function desiredRestriction(db: Db, game: { id: string; workspaceId: string }, externalId: string, nowMs: number): Promise<DesiredRestriction> {
  const bans = await db.ban.findMany({ where: { ...coveringWhere(game, nowMs), externalId }, select: SELECT });
  return desiredFromBans(bans, nowMs);
}

/** Every user with an active restriction in `game` at `nowMs`, from Postgres (users without one are absent). */
export async function desiredRestrictions(db: Db, game: { id: string; workspaceId: string }, nowMs: number): Promise<Map<string, DesiredRestriction>> {
  const bans = await db.ban.findMany({ where: coveringWhere(game, nowMs), select: SELECT });
  const byUser = new Map<string, BanRowForPlatform[]>();
  for (const b of bans) byUser.set(b.externalId, [...(byUser.get(b.externalId) ?? []), b]);
  const out = new Map<string, DesiredRestriction>();
  for (const [user, list] of byUser) out.set(user, desiredFromBans(list, nowMs));
  return out;
}

/** What to send for `desired` at `nowMs`: the remaining time rounded up to whole seconds (at least 1). */
export function writeStateFor(desired: DesiredRestriction, nowMs: number): RestrictionWriteState {
  if (!desired.active) return { active: false, durationSeconds: null };
  if (desired.expiresAt === null) return { active: true, durationSeconds: null };
  return { active: true, durationSeconds: Math.max(1, Math.ceil((desired.expiresAt - nowMs) / 1000)) };
}

/** Whether the platform still enforces `written` at `nowMs` (a timed restriction lapses on its own). */
export function platformActive(written: WrittenRestriction | null, nowMs: number): boolean {
  if (!written?.active || !written.writtenAt) return false;
  return written.durationSeconds === null || written.writtenAt.getTime() + written.durationSeconds * 1000 > nowMs;
}

/**
 * True when the platform, as last written, already enforces `desired` at `nowMs`. A user never written
 * counts as unrestricted, so a final "not banned" state of someone never banned there is not written.
 */
export function matchesPlatform(desired: DesiredRestriction, written: WrittenRestriction | null, nowMs: number): boolean {
  const active = platformActive(written, nowMs);
  if (!desired.active || !active) return desired.active === active;
  if (desired.expiresAt === null || written!.durationSeconds === null) return desired.expiresAt === null && written!.durationSeconds === null;
  const writtenEnd = written!.writtenAt!.getTime() + written!.durationSeconds * 1000;
  return Math.abs(writtenEnd - desired.expiresAt) <= EXPIRY_TOLERANCE_MS;
}
