/**
 * The one table of Redis key suffixes (issue #18, "a key suffix is spelled in exactly one file").
 *
 * A key is `<base><suffix>[<variable part>]`, where `<base>` is `<prefix>:{g:<gameId>}` for a game's keys
 * (src/store/keys.ts). TypeScript builds keys from this table; the Lua scripts get the same table as a
 * generated preamble (`local SFX = {...}`, see {@link luaSuffixPreamble}), so a script that must derive a
 * key from data it reads (a server it finds, a command id in a queue) writes `base .. SFX.roster .. sid`
 * and never spells a suffix itself. Suffixes that end in `:` take a variable part.
 */
export const GAME_SUFFIXES = {
  /** string per 120 s bucket: its replay claims' count; `<key>:<shard>` sets of the claims (src/store/lua/lib/replay-claim.ts). */
  replayClaims: ':rq:',
  /** hash per 120 s bucket: replay tags in the layout before 2026-11-29, read and written during an upgrade (src/store/lua/lib/replay-claim.ts). */
  replay: ':rp:',
  server: ':server:',
  servers: ':servers',
  roster: ':roster:',
  /** hash shards, no TTL: externalId → externalServerId of every user on a roster (src/store/lua/lib/user-location.ts). */
  userLocations: ':loc',
  /** hash: the same in the layout before 2026-11-29, read and written during an upgrade (src/store/lua/lib/user-location.ts). */
  where: ':where',
  /** string, no TTL: the last server ordinal given in the game (src/store/lua/lib/user-locations.lua). */
  serverOrdinal: ':srvn',
  /** hash per 100 ordinals: live server ordinal → externalServerId, the form user locations name servers in. */
  serverOrdinals: ':srvn:',
  events: ':events',
  sessions: ':sessions',
  cmdlog: ':cmdlog',
  command: ':cmd:',
  pending: ':cmd:pending:',
  dispatched: ':cmd:dispatched:',
  userCommands: ':cmd:user:',
  commandExpiry: ':cmd:expiry',
  keysUsed: ':keys-used',
  nudgeLog: ':nudge:sent',
  banWriteSlots: ':banw:slots',
  banWriteUserSlots: ':banw:slots:u:',
  banWritePause: ':banw:pause',
  /** hash, no TTL: the game's settings a heartbeat answers with when Postgres is down (src/auth/key-records.ts). */
  gameRecord: ':game',
  doorsVersion: ':doors:ver',
  doorSubjects: ':doors:subjects',
  /** hash per doors version and door-cache window: users' decisions in compact form (src/doors/decision-cache.ts). */
  doorDecisions: ':doors:dc:',
  /** hash per doors version: subject context name → ordinal, field "" the last ordinal (src/store/lua/door-store.lua). */
  doorContexts: ':doors:ctx:',
  access: ':access',
  deadLetters: ':dead-letters',
  deadLetterCounts: ':dead-letters:count',
  rateWindow: ':rl:',
  throttled: ':rl:429:',
} as const;

export type GameSuffix = keyof typeof GAME_SUFFIXES;

/**
 * `local SFX = {name = 'suffix', ...}`: the table above as Lua source, prepended to every script by
 * src/store/redis.ts. Suffixes are plain ASCII without quotes, so `%q` quoting is not needed.
 */
export function luaSuffixPreamble(): string {
  const fields = Object.entries(GAME_SUFFIXES).map(([name, sfx]) => `${name} = '${sfx}'`);
  return `local SFX = {${fields.join(', ')}}\n`;
}
