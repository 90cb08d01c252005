/**
 * Moderator accounts for console tests (issue #31): made through the same service as `admin moderators
 * add`, so their tokens have shared digests like real ones.
 */
import { addModerator, type IssuedModerator, type ModeratorStoreDeps } from '../../src/auth/moderators/moderator-accounts.js';
import type { ModeratorRole } from '../../src/auth/moderators/console-permissions.js';
import { VerifiedDigests } from '../../src/auth/verified-digests.js';
import type { Harness } from './harness.js';

/** The store dependencies of the account functions over the harness's connections. */
export function moderatorStore(h: Harness): ModeratorStoreDeps {
  return { db: h.db, redis: h.redis, keySpace: h.keySpace, digests: new VerifiedDigests(h.redis, h.keySpace) };
}

/** A new account `name` with `role` in `workspaceId`, with its token. */
export function moderator(h: Harness, workspaceId: string, role: ModeratorRole, name = `${role}-${Math.random().toString(36).slice(2, 8)}`): Promise<IssuedModerator> {
  return addModerator(moderatorStore(h), { workspaceId, name, role }, 'test');
}
