/**
 * Whether a user's active bans apply to a connection (spec: POST bans/check: a ban applies when it is
 * active, i.e. not lifted and not expired, and its scope covers the requesting key's game and server).
 * Pure functions: the caller supplies server time, so expiry is exact to the millisecond.
 */
import type { BanDecision, BanTarget, BlocklistEntry } from './ban-types.js';

/** True while `entry` has not expired at `nowMs` (a ban with expiresAt T applies while now < T). */
export function isUnexpired(entry: Pick<BlocklistEntry, 'expiresAt'>, nowMs: number): boolean {
  return entry.expiresAt === null || nowMs < entry.expiresAt;
}

/**
 * True when the scope of `entry` covers `target`. The caller has already limited entries to the key's
 * workspace (the blocklist is per workspace), so a `workspace` ban covers every game there.
 */
export function covers(entry: BlocklistEntry, target: BanTarget): boolean {
  switch (entry.scope) {
    case 'workspace':
      return true;
    case 'game':
      return entry.gameId === target.gameId;
    case 'server':
      return entry.gameId === target.gameId && entry.externalServerId === target.externalServerId;
  }
}

const WIDTH = { server: 0, game: 1, workspace: 2 } as const;

/** Sort key "lasts longer": permanent first, then later expiry, then the wider scope. */
function outlasts(a: BlocklistEntry, b: BlocklistEntry): boolean {
  if (a.expiresAt !== b.expiresAt) {
    if (a.expiresAt === null) return true;
    if (b.expiresAt === null) return false;
    return a.expiresAt > b.expiresAt;
  }
  return WIDTH[a.scope] > WIDTH[b.scope];
}

/**
 * Decides a connection from the user's blocklist entries at server time `nowMs`. When several bans
 * apply, the one that lasts longest decides, so `expiresAt` tells when the user may connect again.
 */
export function decideBan(entries: readonly BlocklistEntry[], target: BanTarget, nowMs: number): BanDecision {
  let best: BlocklistEntry | null = null;
  for (const e of entries) {
    if (!isUnexpired(e, nowMs) || !covers(e, target)) continue;
    if (!best || outlasts(e, best)) best = e;
  }
  if (!best) return { banned: false, scope: null, expiresAt: null, reason: null, banId: null };
  return { banned: true, scope: best.scope, expiresAt: best.expiresAt, reason: best.reason, banId: best.id };
}
