/**
 * Pushed door invalidation (src/doors/subject-invalidation.ts; docs/decisions.md "Door cache TTL and
 * pushed invalidation"): a member's change reaches the server they are on as a `refresh_permissions`
 * command aimed at them (spec: Command types), issued and delivered like any other command, recorded in
 * the audit trail as issued by {@link PERMISSIONS_ISSUER}.
 */
import { issueCommand, MIN_EXPIRY_SECONDS, type CommandServiceDeps } from '../commands/command-service.js';
import type { PermissionsRefresher } from './subject-invalidation.js';

/** `issuedBy` of the service's own `refresh_permissions` commands. */
export const PERMISSIONS_ISSUER = 'system:doors';

/**
 * A {@link PermissionsRefresher} that issues `refresh_permissions` with target `{ externalId }`, expiring
 * after `doorCacheTtlSeconds` (config `DOOR_CACHE_TTL_SECONDS`): by then the client has dropped the
 * decisions anyway.
 */
export function commandPermissionsRefresher(deps: CommandServiceDeps, doorCacheTtlSeconds: number): PermissionsRefresher {
  const expiresInSeconds = Math.max(MIN_EXPIRY_SECONDS, doorCacheTtlSeconds);
  return async ({ gameId, externalId }) => {
    await issueCommand(deps, { gameId, type: 'refresh_permissions', payload: {}, target: { externalId }, expiresInSeconds, issuedBy: PERMISSIONS_ISSUER });
  };
}
