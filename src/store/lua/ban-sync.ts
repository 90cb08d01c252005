/**
 * The typed builder of a `ban-sync.lua` call (blocklist entries written under a ticket, so a stale
 * writer never overwrites a newer one): KEYS = blocklist meta hash, blocklist hash.
 */
import type { WorkspaceKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';

/**
 * KEYS and named arguments of `ban-sync.lua` in `keys`' workspace: `ticket` from the meta hash's `seq`;
 * `markBuilt` marks the blocklist built afterwards; `entries` flat: externalId, entry JSON ('' removes), ...
 */
export function banSyncCall(keys: WorkspaceKeys, call: { ticket: number; markBuilt: boolean; entries: string[] }): ScriptCall {
  return { keys: [keys.banMeta(), keys.banList()], args: { t: String(call.ticket), m: call.markBuilt, e: call.entries } };
}
