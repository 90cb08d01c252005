/**
 * Shapes shared by the ban service, the Redis blocklist and the check endpoint (spec: What the service
 * does, item 5; Resources › Ban check result). Bans belong to the workspace that issued them; nothing
 * here ever crosses workspaces.
 */

/** What a ban covers: one server of one game, one game, or every game of the workspace. */
export const BAN_SCOPES = ['server', 'game', 'workspace'] as const;
export type BanScope = (typeof BAN_SCOPES)[number];

/** True when `s` is one of {@link BAN_SCOPES}. */
export function isBanScope(s: string): s is BanScope {
  return (BAN_SCOPES as readonly string[]).includes(s);
}

/**
 * One active (not lifted) ban as the blocklist keeps it. Expiry is checked at read time against server
 * time, so an entry may be expired by the time it is read.
 */
export interface BlocklistEntry {
  /** Ban id (Ban.id). */
  id: string;
  scope: BanScope;
  /** The game of a `game` or `server` ban; null for `workspace`. */
  gameId: string | null;
  /** The server of a `server` ban; null otherwise. */
  externalServerId: string | null;
  /** Epoch ms the ban ends at (it applies while now < expiresAt); null = permanent. */
  expiresAt: number | null;
  reason: string;
}

/** Where a user is connecting: the requesting key's game and the server named in the request. */
export interface BanTarget {
  gameId: string;
  externalServerId: string;
}

/** The outcome of a ban check (spec: Ban check result); `banned` is the only field clients rely on. */
export interface BanDecision {
  banned: boolean;
  /** Scope of the deciding ban; null when not banned. */
  scope: BanScope | null;
  /** Epoch ms the user may connect again (the latest expiry of the applying bans); null = permanent or not banned. */
  expiresAt: number | null;
  reason: string | null;
  /** Id of the deciding ban; null when not banned. */
  banId: string | null;
}
