/**
 * Retiring cached door decisions when the people side changes (issue #5: "any change to … the member's
 * positions, records, clock-in state or the schedule that could change a decision invalidates or
 * versions the cache"). Whoever writes those tables calls one of these after the write has committed:
 *
 * | change (issue #4 tables)                                                   | call                    |
 * |-----------------------------------------------------------------------------|-------------------------|
 * | Assignment added/removed, MemberRecord issued/revoked/edited, Shift opened/ | {@link memberChanged}   |
 * | closed, Member created/deleted/joinedAt changed                             |                         |
 * | Operation created/changed/deleted; Unit parent/organization changed, Unit/  | {@link workspaceChanged}|
 * | Position/Organization deleted, Position moved to another unit               |                         |
 *
 * Each raises a counter in `GameKeys.doorSubjects` of every game of the workspace (the member's field, or
 * `w` for the whole workspace). Those counters are part of every decision-cache key, so the next check
 * reads a new key and evaluates afresh; nothing is deleted, and a decision computed from older data can
 * only have been stored under the older key. Time alone (a record expiring, an operation starting,
 * tenure reached, a time window) needs no call: decisions end at those boundaries by themselves.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Field of `GameKeys.doorSubjects` that versions everything workspace-wide (schedule, org tree). */
export const WORKSPACE_FIELD = 'w';
/** Field of `GameKeys.doorSubjects` that versions one member (prefixed so no externalId can collide with `w`). */
export function memberField(externalId: string): string {
  return `u:${externalId}`;
}

export class DoorSubjectInvalidator {
  constructor(private readonly db: Db, private readonly redis: AppRedis, private readonly keySpace: KeySpace) {}

  /** A member's positions, records, clock-in state or join date changed (`externalId` = Member.externalId). */
  async memberChanged(workspaceId: string, externalId: string): Promise<void> {
    await this.raise(workspaceId, memberField(externalId));
  }

  /** The workspace's schedule (operations) or org tree changed: every member's decisions are retired. */
  async workspaceChanged(workspaceId: string): Promise<void> {
    await this.raise(workspaceId, WORKSPACE_FIELD);
  }

  private async raise(workspaceId: string, field: string): Promise<void> {
    const games = await this.db.game.findMany({ where: { workspaceId }, select: { id: true } });
    if (!games.length) return;
    const pipe = this.redis.pipeline();
    for (const g of games) pipe.hincrby(this.keySpace.game(g.id).doorSubjects(), field, 1);
    const results = await pipe.exec();
    const failed = results?.find(([err]) => err)?.[0];
    if (failed) throw failed;
  }
}
