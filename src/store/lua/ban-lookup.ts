/**
 * The typed builder of a `ban-lookup.lua` call (one user's entry of a workspace's blocklist, and whether
 * the blocklist is built): KEYS = blocklist meta hash, blocklist hash.
 */
import type { WorkspaceKeys } from '../keys.js';
import type { ScriptCall } from '../redis.js';

/** KEYS and named arguments of `ban-lookup.lua` for user `externalId` in `keys`' workspace. */
export function banLookupCall(keys: WorkspaceKeys, call: { externalId: string }): ScriptCall {
  return { keys: [keys.banMeta(), keys.banList()], args: { u: call.externalId } };
}
