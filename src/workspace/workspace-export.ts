/**
 * `workspace export`: the workspace model as one {@link WorkspaceFile} (the import format), so it can be
 * kept under version control, edited and imported into another workspace. Keys are made from names
 * (lower-case, dashes; `-2`, `-3` … when two names collide); members are keyed by externalId. Derived
 * data (shifts, payouts) is not part of the model and is not exported.
 */
import type { Db } from '../store/prisma.js';
import type { WorkspaceFile } from '../schemas/workspace-import.js';
import { requireWorkspace } from './workspace-lookup.js';
import { treeOrder } from './units.js';

/** Gives each id a readable key derived from its name, unique within one section. */
function keyMaker(): (id: string, name: string) => string {
  const used = new Set<string>();
  const keys = new Map<string, string>();
  return (id, name) => {
    const existing = keys.get(id);
    if (existing) return existing;
    const base = name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 90) || 'item';
    let key = base;
    for (let n = 2; used.has(key); n++) key = `${base}-${n}`;
    used.add(key);
    keys.set(id, key);
    return key;
  };
}

/** The model of `workspaceId` in the import format. @throws {NotFoundError} unknown workspace. */
export async function exportWorkspace(db: Db, workspaceId: string): Promise<WorkspaceFile> {
  const ws = await requireWorkspace(db, workspaceId);
  const where = { workspaceId };
  const [orgs, units, positions, members, operations, records] = await Promise.all([
    db.organization.findMany({ where, orderBy: [{ name: 'asc' }, { id: 'asc' }] }),
    db.unit.findMany({ where, orderBy: [{ name: 'asc' }, { id: 'asc' }] }),
    db.position.findMany({ where, orderBy: [{ name: 'asc' }, { id: 'asc' }] }),
    db.member.findMany({ where, orderBy: { externalId: 'asc' }, include: { assignments: { select: { positionId: true } } } }),
    db.operation.findMany({ where, orderBy: [{ startsAt: 'asc' }, { id: 'asc' }] }),
    db.memberRecord.findMany({ where, orderBy: [{ issuedAt: 'asc' }, { id: 'asc' }], include: { member: { select: { externalId: true } } } }),
  ]);
  const orgKey = keyMaker();
  const unitKey = keyMaker();
  const positionKey = keyMaker();
  for (const o of orgs) orgKey(o.id, o.name);
  const orderedUnits = treeOrder(units);
  for (const u of orderedUnits) unitKey(u.id, u.name);
  for (const p of positions) positionKey(p.id, p.name);
  const unitIds = new Set(units.map((u) => u.id));
  const orgIds = new Set(orgs.map((o) => o.id));
  const orgRef = (id: string | null) => (id && orgIds.has(id) ? orgKey(id, '') : null);
  const unitRef = (id: string | null) => (id && unitIds.has(id) ? unitKey(id, '') : null);
  return {
    version: 1,
    workspace: { timeZone: ws.timeZone, weekStartsOn: ws.weekStartsOn },
    organizations: orgs.map((o) => ({ key: orgKey(o.id, o.name), name: o.name })),
    units: orderedUnits.map((u) => ({ key: unitKey(u.id, u.name), name: u.name, parent: unitRef(u.parentId), organization: orgRef(u.organizationId) })),
    positions: positions.map((p) => ({
      key: positionKey(p.id, p.name),
      unit: unitKey(p.unitId, ''),
      name: p.name,
      autoClockIn: p.autoClockIn,
      clockInGameIds: p.clockInGameIds,
      clockInScopeIds: p.clockInScopeIds,
      // Rates are capped at 10^12 (positions.ts), far inside a JSON number's exact range.
      payoutRateMinor: p.payoutRateMinor === null ? null : Number(p.payoutRateMinor),
      payoutUnit: p.payoutUnit,
      quotaMinutesPerWeek: p.quotaMinutesPerWeek,
    })),
    members: members.map((m) => ({
      externalId: m.externalId,
      displayName: m.displayName,
      joinedAt: m.joinedAt.toISOString(),
      positions: m.assignments.map((a) => positionKey(a.positionId, '')).sort(),
    })),
    operations: operations.map((o) => ({
      type: o.type,
      title: o.title,
      startsAt: o.startsAt.toISOString(),
      endsAt: o.endsAt.toISOString(),
      unit: unitRef(o.unitId),
      organization: orgRef(o.organizationId),
    })),
    records: records.map((r) => ({
      member: r.member.externalId,
      type: r.type,
      reason: r.reason,
      issuedAt: r.issuedAt.toISOString(),
      expiresAt: r.expiresAt?.toISOString() ?? null,
      revoked: r.revoked,
    })),
  };
}
