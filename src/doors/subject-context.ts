/**
 * Everything a door evaluation needs to know about one user (issue #5; the tables of issue #4: Member,
 * Assignment, Position, Unit tree, Organization, Shift, MemberRecord, Operation). The workspace-wide part
 * comes from a {@link WorkspaceSnapshot} (cached per process); the member's own rows come from one SQL
 * statement shared by the loads of the same moment ({@link MemberRow}, src/doors/member-rows.ts).
 *
 * Definitions used by the evaluation (README "Doors"):
 * - positions: the positions the member is assigned to; direct units: the units of those positions;
 *   units: the direct units and all their ancestors (parent chain; a cycle stops the walk);
 *   organizations: the organization of any of those units.
 * - clocked in: the member has a shift with no `closedAt`.
 * - records: not revoked and not expired; a record is active from `issuedAt` until `expiresAt`
 *   (null = never expires). Future-issued ones are loaded too: their start is a cache boundary.
 * - tenure: whole days since `Member.joinedAt`.
 * - operations: those of the snapshot (overlapping the next 2 × TTL) that apply to the user: an
 *   operation naming no unit and no organization applies to everyone; one naming a unit applies to that
 *   unit's subtree; one naming an organization to its members; one naming both to members of both.
 * A user with no Member row in the workspace has no positions, units, organizations or records, is not
 * clocked in, has no tenure, and sees only operations that name no unit or organization.
 */
import type { MemberRow } from './member-rows.js';
import type { OperationSpan, WorkspaceSnapshot } from './workspace-snapshot.js';

export type { OperationSpan } from './workspace-snapshot.js';

export interface RecordSpan {
  type: string;
  /** ms since the epoch. */
  issuedAtMs: number;
  /** ms since the epoch; null = never expires. */
  expiresAtMs: number | null;
}

/** One user's standing in a workspace at load time. */
export interface SubjectContext {
  externalId: string;
  /** False when the user has no Member row in the workspace. */
  isMember: boolean;
  /** Member.joinedAt in ms; null for non-members. */
  joinedAtMs: number | null;
  positionIds: ReadonlySet<string>;
  /** Units of the member's positions. */
  directUnitIds: ReadonlySet<string>;
  /** Direct units plus every ancestor unit. */
  unitIds: ReadonlySet<string>;
  organizationIds: ReadonlySet<string>;
  clockedIn: boolean;
  /** Records not revoked and not expired at load time (including future-issued ones). */
  records: readonly RecordSpan[];
  /** Operations of the snapshot that apply to this user. */
  operations: readonly OperationSpan[];
}

/**
 * The {@link SubjectContext} of `externalId` from its Member rows (`row`, undefined for a user with no
 * Member row in the workspace; src/doors/member-rows.ts) and the workspace snapshot. Pure.
 */
export function buildSubjectContext(workspace: WorkspaceSnapshot, externalId: string, row: MemberRow | undefined): SubjectContext {
  const positionIds = new Set(row?.positions ?? []);
  const directUnitIds = new Set<string>();
  for (const p of positionIds) {
    const unit = workspace.positionUnit.get(p);
    if (unit) directUnitIds.add(unit);
  }
  const unitIds = new Set<string>();
  const organizationIds = new Set<string>();
  for (const start of directUnitIds) {
    for (let u: string | null | undefined = start; u && !unitIds.has(u); u = workspace.unitParent.get(u)) {
      unitIds.add(u);
      const org = workspace.unitOrganization.get(u);
      if (org) organizationIds.add(org);
    }
  }
  return {
    externalId,
    isMember: row !== undefined,
    joinedAtMs: row ? Number(row.joined_ms) : null,
    positionIds,
    directUnitIds,
    unitIds,
    organizationIds,
    clockedIn: row?.clocked_in ?? false,
    records: (row?.records ?? []).map((r) => ({ type: r.type, issuedAtMs: Number(r.issued), expiresAtMs: r.expires === null ? null : Number(r.expires) })),
    operations: workspace.operations.filter((o) => (!o.unitId || unitIds.has(o.unitId)) && (!o.organizationId || organizationIds.has(o.organizationId))),
  };
}
