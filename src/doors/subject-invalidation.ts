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
 *
 * Clients cache a decision for up to the door cache TTL (`DOOR_CACHE_TTL_SECONDS`, 300 s by default), so
 * the change is also pushed to them (docs/decisions.md "Door cache TTL and pushed invalidation"):
 * - a member's change: a `refresh_permissions` command aimed at the user, on every game where they are on
 *   a server now (the game's server forgets that user's decisions and bulk-checks them again; a user on
 *   no server has nothing cached and is bulk-checked when they join);
 * - a workspace change: the doors version of every game of the workspace is raised, which every server
 *   sees in its next heartbeat's `config.doorsVersion` (it refetches the manifest and forgets every
 *   decision made under another version).
 * A push that fails is logged: the change still reaches each client within the TTL.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { locateUserCall } from '../store/lua/locate-user.js';
import { log } from '../log.js';
import { incrementDoorsVersion } from './doors-version.js';
import { raiseDoorsVersion } from '../store/lua/raise-doors-version.js';

/** Field of `GameKeys.doorSubjects` that versions everything workspace-wide (schedule, org tree). */
export const WORKSPACE_FIELD = 'w';
/** Field of `GameKeys.doorSubjects` that versions one member (prefixed so no externalId can collide with `w`). */
export function memberField(externalId: string): string {
  return `u:${externalId}`;
}

/**
 * Queues a `refresh_permissions` command for user `externalId` in game `gameId` (spec: Command types),
 * delivered to the server they are on with its next heartbeat; src/doors/permissions-refresh.ts
 * implements it with the commands service.
 * @throws what issuing a command throws (e.g. CommandQueueFullError); the invalidator logs it.
 */
export type PermissionsRefresher = (refresh: { gameId: string; externalId: string }) => Promise<void>;

export class DoorSubjectInvalidator {
  /** Without `refresh` a member's change is not pushed to the clients (it reaches them within the TTL). */
  constructor(
    private readonly db: Db,
    private readonly redis: AppRedis,
    private readonly keySpace: KeySpace,
    private readonly refresh: PermissionsRefresher | null = null,
  ) {}

  /**
   * A member's positions, records, clock-in state or join date changed (`externalId` = Member.externalId):
   * raises their subject version in every game of the workspace, then pushes `refresh_permissions` to
   * each game where they are on a server.
   * @throws the Redis or Postgres error of the raise (a failed push is logged instead).
   */
  async memberChanged(workspaceId: string, externalId: string): Promise<void> {
    const games = await this.gamesOf(workspaceId);
    await this.raise(games, memberField(externalId));
    if (this.refresh) await this.pushToUser(games, externalId, this.refresh);
  }

  /**
   * The workspace's schedule (operations) or org tree changed: every member's decisions are retired, and
   * every game's doors version is raised so that its servers forget their cached decisions.
   * @throws the Redis or Postgres error of either raise.
   */
  async workspaceChanged(workspaceId: string): Promise<void> {
    const games = await this.gamesOf(workspaceId);
    await this.raise(games, WORKSPACE_FIELD);
    for (const gameId of games) {
      const version = await this.db.$transaction((tx) => incrementDoorsVersion(tx, gameId));
      await raiseDoorsVersion(this.redis, this.keySpace, gameId, version);
    }
  }

  private async gamesOf(workspaceId: string): Promise<string[]> {
    const games = await this.db.game.findMany({ where: { workspaceId }, select: { id: true } });
    return games.map((g) => g.id);
  }

  private async raise(games: string[], field: string): Promise<void> {
    // one command per game, not one pipeline: on a Redis Cluster each game's keys live in a slot of their own
    await Promise.all(games.map((id) => this.redis.hincrby(this.keySpace.game(id).doorSubjects(), field, 1)));
  }

  private async pushToUser(games: string[], externalId: string, refresh: PermissionsRefresher): Promise<void> {
    // one locate per game: each game's keys are in their own Cluster slot
    await Promise.all(games.map(async (gameId) => {
      try {
        const call = locateUserCall(this.keySpace.game(gameId), { externalId });
        const server = await this.redis.runScript('locateUser', call.keys, call.args);
        if (typeof server === 'string' && server) await refresh({ gameId, externalId });
      } catch (err) {
        log.warn('could not push refresh_permissions to a member\'s server; their cached decisions end with the door cache TTL', { gameId, externalId, err: String(err) });
      }
    }));
  }
}
