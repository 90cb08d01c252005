/**
 * User locations: externalId → externalServerId of every user on a live server's roster (a user-target
 * command is routed there, spec: Command lifecycle; a ban kicks there). The scripts that read or write them
 * (heartbeat, sweep-server, issue-command, locate-user) take the two keys and the flag built here and
 * call `userLocations`, `locateUsers`, `placeUsers`, `releaseUsers` of src/store/lua/lib/user-locations.lua.
 *
 * Layout (issue #32 item 4): a sharded hash (linear hashing over listpack-sized hashes, ~40 users each),
 * headed by {@link GameKeys.userLocations}, no expiry; it counts the fields present (a release uncounts),
 * so its shard count follows the game's peak population. A user's field is their externalId, its shard
 * chosen by the id itself when it is decimal (Roblox ids) or by its SHA-1 otherwise; its value the server,
 * or `<server>\n<previous server>` when it was claimed from a server that still listed the user, which
 * gets the user back when the claimant releases them (so a heartbeat locates only the users it newly
 * lists; it re-locates its whole roster on its first heartbeat and every five minutes). A server is named
 * by its ordinal, `\n<n>` ({@link GameKeys.serverOrdinals}: a few bytes instead of an externalServerId of
 * 15–36; builds before 2026-11-30 wrote the id itself, which is still read and rewritten by the
 * five-minute re-locate). Before 2026-11-29 it
 * was one hash per game ({@link GameKeys.where}), in Redis's hash-table encoding past 128 users: ~64 B a
 * user instead of ~20 B (`npm run bench:memory`).
 *
 * Upgrading (docs/running.md "Upgrading"): old processes read and write only the old hash. A user is in
 * at most one of the two layouts: a process writes the shards, or the old hash with `LEGACY_LAYOUT_WRITES`
 * (as the old processes do), and deletes the user from the other; it reads and releases in both (the old
 * hash only while it exists). A heartbeat that re-locates its whole roster (when its roster changed while
 * the old hash exists, and at the five-minute refresh) rewrites every listed user it found in the other
 * layout, so once no process writes the old hash it empties within five minutes of every server.
 */
import type { GameKeys } from '../../keys.js';

/** The KEYS (at the indexes each script's header names) and named argument of the user locations. */
export interface UserLocationArgs {
  /** [the shards' head, the hash of the layout before 2026-11-29]. */
  keys: [string, string];
  /** `wl`: write the old hash instead of the shards (an upgrade's first step); `b`: the game's key base (server ordinals, rosters). */
  args: { wl: boolean; b: string };
}

/** The user locations of `keys`' game, in the layout `keys` writes. */
export function userLocationArgs(keys: GameKeys): UserLocationArgs {
  return { keys: [keys.userLocations(), keys.where()], args: { wl: keys.legacyWrites, b: keys.base } };
}
