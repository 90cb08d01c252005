/**
 * Everything a door evaluation needs to know about one user (issue #5; the tables of issue #4: Member,
 * Assignment, Position, Unit tree, Organization, Shift, MemberRecord, Operation). The workspace-wide part
 * comes from a {@link WorkspaceSnapshot} (cached per process); the member's own rows cost one SQL
 * statement.
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
import type { Db } from '../store/prisma.js';
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

interface MemberRow {
  joined_ms: number;
  positions: string[] | null;
  clocked_in: boolean;
  records: { type: string; issued: number; expires: number | null }[] | null;
}

/**
 * Loads the {@link SubjectContext} of `externalId` in the snapshot's workspace at `nowMs` (epoch ms).
 * @throws on Postgres failure.
 */
export async function loadSubjectContext(db: Db, workspace: WorkspaceSnapshot, workspaceId: string, externalId: string, nowMs: number): Promise<SubjectContext> {
  const rows = await db.$queryRaw<MemberRow[]>`
    SELECT
      (extract(epoch FROM m."joinedAt") * 1000)::float8 AS joined_ms,
      (SELECT array_agg(a."positionId"::text) FROM "Assignment" a WHERE a."memberId" = m.id) AS positions,
      EXISTS (SELECT 1 FROM "Shift" s WHERE s."memberId" = m.id AND s."closedAt" IS NULL) AS clocked_in,
      (SELECT json_agg(json_build_object(
          'type', r.type,
          'issued', (extract(epoch FROM r."issuedAt") * 1000)::float8,
          'expires', (extract(epoch FROM r."expiresAt") * 1000)::float8))
        FROM "MemberRecord" r
        WHERE r."memberId" = m.id AND NOT r.revoked AND (r."expiresAt" IS NULL OR r."expiresAt" > ${new Date(nowMs)})) AS records
    FROM "Member" m
    WHERE m."workspaceId" = ${workspaceId}::uuid AND m."externalId" = ${externalId}`;
  const row = rows[0];
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
