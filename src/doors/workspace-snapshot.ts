/**
 * The workspace-wide half of a door subject context, cached per API process: the unit tree (parent and
 * organization of every unit), the unit of every position, and the operations overlapping the next
 * `2 × TTL`. It is keyed by the workspace's door subject version (the `w` field of
 * `GameKeys.doorSubjects`, raised on every schedule or org-tree change; subject-invalidation.ts) and
 * reloaded at least once per TTL, so a cold evaluation costs Postgres only the member's own rows.
 *
 * It also holds who is a member ({@link WorkspaceSnapshot.memberIds}), so that a player with no Member row
 * (most players of a game: the staff are the members) is evaluated without any SQL at all; see
 * `DoorAccessService` for when that set is trusted (issue #32 item 2: a fleet's join storm asked
 * Postgres for the rows of every joining player, and nearly all came back empty).
 */
import type { Db } from '../store/prisma.js';

export interface OperationSpan {
  type: string;
  startsAtMs: number;
  endsAtMs: number;
  unitId: string | null;
  organizationId: string | null;
}

export interface WorkspaceSnapshot {
  /** The workspace subject version it was loaded under. */
  version: string;
  /** Reusable while `now ≤ freshUntilMs` (operations are loaded up to `freshUntilMs + TTL`). */
  freshUntilMs: number;
  unitParent: ReadonlyMap<string, string | null>;
  unitOrganization: ReadonlyMap<string, string | null>;
  positionUnit: ReadonlyMap<string, string>;
  operations: readonly OperationSpan[];
  /**
   * externalIds of the workspace's Member rows at load time; null when there are more than
   * {@link MAX_MEMBER_IDS} (then every evaluation reads the member's rows).
   */
  memberIds: ReadonlySet<string> | null;
}

/** Most member ids a snapshot holds (~50 B each per API process); a larger workspace is not listed. */
export const MAX_MEMBER_IDS = 100_000;

export class WorkspaceSnapshots {
  private readonly cache = new Map<string, WorkspaceSnapshot>();
  private readonly inflight = new Map<string, Promise<WorkspaceSnapshot>>();

  /** `ttlMs`: the decision cache TTL; a snapshot serves evaluations up to that far ahead. */
  constructor(private readonly db: Db, private readonly ttlMs: number) {}

  /** The snapshot of `workspaceId` at subject version `version`, loaded when missing, stale or older. */
  async get(workspaceId: string, version: string, nowMs: number): Promise<WorkspaceSnapshot> {
    const cached = this.cache.get(workspaceId);
    if (cached && cached.version === version && nowMs <= cached.freshUntilMs) return cached;
    const key = `${workspaceId}:${version}`;
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.load(workspaceId, version, nowMs).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async load(workspaceId: string, version: string, nowMs: number): Promise<WorkspaceSnapshot> {
    const freshUntilMs = nowMs + this.ttlMs;
    const [units, positions, operations, members] = await Promise.all([
      this.db.unit.findMany({ where: { workspaceId }, select: { id: true, parentId: true, organizationId: true } }),
      this.db.position.findMany({ where: { workspaceId }, select: { id: true, unitId: true } }),
      this.db.operation.findMany({
        where: { workspaceId, endsAt: { gt: new Date(nowMs) }, startsAt: { lt: new Date(freshUntilMs + this.ttlMs) } },
        select: { type: true, startsAt: true, endsAt: true, unitId: true, organizationId: true },
      }),
      this.db.member.findMany({ where: { workspaceId }, select: { externalId: true }, take: MAX_MEMBER_IDS + 1 }),
    ]);
    const snapshot: WorkspaceSnapshot = {
      version,
      freshUntilMs,
      unitParent: new Map(units.map((u) => [u.id, u.parentId])),
      unitOrganization: new Map(units.map((u) => [u.id, u.organizationId])),
      positionUnit: new Map(positions.map((p) => [p.id, p.unitId])),
      operations: operations.map((o) => ({ type: o.type, startsAtMs: o.startsAt.getTime(), endsAtMs: o.endsAt.getTime(), unitId: o.unitId, organizationId: o.organizationId })),
      memberIds: members.length > MAX_MEMBER_IDS ? null : new Set(members.map((m) => m.externalId)),
    };
    this.cache.set(workspaceId, snapshot);
    return snapshot;
  }
}
