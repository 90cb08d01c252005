/**
 * `workspace import`: loads a whole org chart (organizations, units, positions with rules, members with
 * their positions, operations, records, and optionally the workspace's week settings) from one file in one
 * transaction (issue #4). The file format is {@link workspaceFileSchema} (src/schemas/workspace-import.ts).
 *
 * All or nothing: the file is checked whole first (ajv with every error, then every cross-reference,
 * duplicate, cycle and rule), and any problem refuses the whole file with every problem listed and nothing
 * written. The import only adds: an organization name or a member externalId that already exists in the
 * workspace is a problem, not an update. The writes run in one Postgres transaction, so a failure half-way
 * (a concurrent insert hitting a unique constraint, a lost connection) also leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Prisma } from '@prisma/client';
import type { Db } from '../store/prisma.js';
import { ValidationError } from '../errors.js';
import { workspaceFileSchema, type WorkspaceFile } from '../schemas/workspace-import.js';
import { requireWorkspace } from './workspace-lookup.js';
import { isTimeZone } from './calendar.js';
import { positionRuleProblems } from './positions.js';
import { operationProblems } from './operations.js';
import { recordProblems } from './records.js';
import { reportWorkspaceChange, type SubjectChanges } from './subject-changes.js';

// ajv-formats ships CommonJS with `exports.default`; under ESM interop the callable is either form.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;
/** Its own ajv instance: the shared one stops at the first error, an import lists them all. */
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validateFile = ajv.compile(workspaceFileSchema);

/** Longest transaction an import may hold, ms (a file of tens of thousands of rows). */
const IMPORT_TIMEOUT_MS = 120_000;

/** 400 `invalid_import`: the file was refused and nothing was written; `problems` lists every reason. */
export class ImportRefusedError extends ValidationError {
  constructor(readonly problems: string[]) {
    super(`import refused, nothing was written: ${problems.length} problem(s): ${problems.join('; ')}`, 'invalid_import');
  }
}

/** How many rows of each kind an import created. */
export interface ImportSummary {
  workspaceId: string;
  organizations: number;
  units: number;
  positions: number;
  members: number;
  assignments: number;
  operations: number;
  records: number;
  /** True when the file set the workspace's timeZone or weekStartsOn. */
  settingsUpdated: boolean;
}

/** What already exists in the target workspace, for the checks that need it. */
interface Existing {
  organizationNames: Set<string>;
  /** externalId → member id. */
  members: Map<string, string>;
  gameIds: Set<string>;
}

function ajvProblem(e: ErrorObject): string {
  const where = e.instancePath || '/';
  if (e.keyword === 'additionalProperties') return `${where}: unknown field "${String(e.params.additionalProperty)}"`;
  if (e.keyword === 'const') return `${where}: must be ${JSON.stringify(e.params.allowedValue)}`;
  return `${where}: ${e.message ?? 'is invalid'}`;
}

/** Every structural problem of `data` (ajv, all errors); empty when the structure is valid. */
function structureProblems(data: unknown): string[] {
  if (validateFile(data)) return [];
  return [...new Set((validateFile.errors ?? []).map(ajvProblem))];
}

// The reference checks also run on a structurally invalid file (to list every problem at once), so they
// read it defensively: anything that is not an array/object/string is treated as absent.
type Loose = Record<string, unknown>;
const items = (v: unknown): Loose[] => (Array.isArray(v) ? v.map((x) => (x && typeof x === 'object' ? (x as Loose) : {})) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const date = (v: unknown): Date | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : null);

function duplicates(section: string, rows: Loose[], field: string, problems: string[]): Set<string> {
  const seen = new Set<string>();
  rows.forEach((r, i) => {
    const k = str(r[field]);
    if (k === undefined) return;
    if (seen.has(k)) problems.push(`/${section}/${i}/${field}: duplicate ${field} "${k}"`);
    seen.add(k);
  });
  return seen;
}

function refProblem(path: string, kind: string, value: unknown, known: Set<string>): string[] {
  const k = str(value);
  return k !== undefined && !known.has(k) ? [`${path}: unknown ${kind} key "${k}"`] : [];
}

/** Every cross-reference, duplicate, cycle and rule problem of `data` against `existing`. */
function referenceProblems(data: unknown, existing: Existing): string[] {
  const file = (data && typeof data === 'object' ? data : {}) as Loose;
  const problems: string[] = [];
  const tz = str((file.workspace as Loose | undefined)?.timeZone);
  if (tz !== undefined && !isTimeZone(tz)) problems.push(`/workspace/timeZone: unknown time zone "${tz}"`);

  const orgs = items(file.organizations);
  const orgKeys = duplicates('organizations', orgs, 'key', problems);
  const orgNames = new Set<string>();
  orgs.forEach((o, i) => {
    const name = str(o.name)?.trim();
    if (name === undefined) return;
    if (orgNames.has(name)) problems.push(`/organizations/${i}/name: duplicate name "${name}"`);
    else if (existing.organizationNames.has(name)) problems.push(`/organizations/${i}/name: the workspace already has an organization "${name}"`);
    orgNames.add(name);
  });

  const units = items(file.units);
  const unitKeys = duplicates('units', units, 'key', problems);
  units.forEach((u, i) => {
    problems.push(...refProblem(`/units/${i}/parent`, 'unit', u.parent, unitKeys));
    problems.push(...refProblem(`/units/${i}/organization`, 'organization', u.organization, orgKeys));
  });
  problems.push(...cycleProblems(units));

  const positions = items(file.positions);
  const positionKeys = duplicates('positions', positions, 'key', problems);
  positions.forEach((p, i) => {
    problems.push(...refProblem(`/positions/${i}/unit`, 'unit', p.unit, unitKeys));
    const rate = p.payoutRateMinor;
    const rules = {
      autoClockIn: p.autoClockIn === true,
      clockInGameIds: Array.isArray(p.clockInGameIds) ? p.clockInGameIds.filter((g): g is string => typeof g === 'string') : [],
      clockInScopeIds: Array.isArray(p.clockInScopeIds) ? p.clockInScopeIds.filter((s): s is string => typeof s === 'string') : [],
      payoutRateMinor: typeof rate === 'number' && Number.isSafeInteger(rate) ? BigInt(rate) : null,
      payoutUnit: str(p.payoutUnit) ?? null,
      quotaMinutesPerWeek: typeof p.quotaMinutesPerWeek === 'number' ? p.quotaMinutesPerWeek : null,
    };
    if (typeof rate === 'number' && !Number.isSafeInteger(rate)) problems.push(`/positions/${i}/payoutRateMinor: must be a safe integer`);
    for (const msg of positionRuleProblems(rules, existing.gameIds)) problems.push(`/positions/${i}: ${msg}`);
  });

  const members = items(file.members);
  const memberIds = duplicates('members', members, 'externalId', problems);
  members.forEach((m, i) => {
    const ext = str(m.externalId);
    if (ext !== undefined && existing.members.has(ext)) problems.push(`/members/${i}/externalId: the workspace already has a member "${ext}"`);
    const held = new Set<string>();
    (Array.isArray(m.positions) ? m.positions : []).forEach((k, j) => {
      problems.push(...refProblem(`/members/${i}/positions/${j}`, 'position', k, positionKeys));
      if (typeof k === 'string' && held.has(k)) problems.push(`/members/${i}/positions/${j}: position "${k}" listed twice`);
      if (typeof k === 'string') held.add(k);
    });
  });

  items(file.operations).forEach((o, i) => {
    problems.push(...refProblem(`/operations/${i}/unit`, 'unit', o.unit, unitKeys));
    problems.push(...refProblem(`/operations/${i}/organization`, 'organization', o.organization, orgKeys));
    const startsAt = date(o.startsAt);
    const endsAt = date(o.endsAt);
    if (startsAt && endsAt) {
      for (const msg of operationProblems({ type: str(o.type) ?? 'x', title: str(o.title) ?? 'x', startsAt, endsAt })) problems.push(`/operations/${i}: ${msg}`);
    }
  });

  items(file.records).forEach((r, i) => {
    const ext = str(r.member);
    if (ext !== undefined && !memberIds.has(ext) && !existing.members.has(ext)) {
      problems.push(`/records/${i}/member: no member with externalId "${ext}" in the file or the workspace`);
    }
    const issuedAt = date(r.issuedAt);
    if (issuedAt) {
      for (const msg of recordProblems({ type: str(r.type) ?? 'x', issuedAt, expiresAt: date(r.expiresAt) })) problems.push(`/records/${i}: ${msg}`);
    }
  });
  return problems;
}

/** A problem for every unit whose parent chain loops back to itself. */
function cycleProblems(units: Loose[]): string[] {
  const parent = new Map<string, string>();
  for (const u of units) {
    const k = str(u.key);
    const p = str(u.parent);
    if (k !== undefined && p !== undefined) parent.set(k, p);
  }
  const problems: string[] = [];
  units.forEach((u, i) => {
    const start = str(u.key);
    if (start === undefined) return;
    const seen = new Set<string>();
    for (let k: string | undefined = start; k !== undefined; k = parent.get(k)) {
      if (seen.has(k)) {
        if (k === start) problems.push(`/units/${i}/parent: unit "${start}" is its own ancestor (cycle)`);
        return;
      }
      seen.add(k);
    }
  });
  return problems;
}

/** Units ordered so every parent comes before its children. */
function parentsFirst<T extends { key: string; parent?: string | null }>(units: T[]): T[] {
  const byKey = new Map(units.map((u) => [u.key, u]));
  const out: T[] = [];
  const placed = new Set<string>();
  const place = (u: T) => {
    if (placed.has(u.key)) return;
    placed.add(u.key);
    const p = u.parent ? byKey.get(u.parent) : undefined;
    if (p) place(p);
    out.push(u);
  };
  units.forEach(place);
  return out;
}

async function loadExisting(tx: Prisma.TransactionClient, workspaceId: string): Promise<Existing> {
  const [orgs, members, games] = await Promise.all([
    tx.organization.findMany({ where: { workspaceId }, select: { name: true } }),
    tx.member.findMany({ where: { workspaceId }, select: { id: true, externalId: true } }),
    tx.game.findMany({ where: { workspaceId }, select: { id: true } }),
  ]);
  return {
    organizationNames: new Set(orgs.map((o) => o.name)),
    members: new Map(members.map((m) => [m.externalId, m.id])),
    gameIds: new Set(games.map((g) => g.id)),
  };
}

async function write(tx: Prisma.TransactionClient, workspaceId: string, file: WorkspaceFile, existing: Existing, now: Date): Promise<ImportSummary> {
  const settings = file.workspace ?? {};
  const settingsUpdated = settings.timeZone !== undefined || settings.weekStartsOn !== undefined;
  if (settingsUpdated) await tx.workspace.update({ where: { id: workspaceId }, data: { timeZone: settings.timeZone, weekStartsOn: settings.weekStartsOn } });

  const orgId = new Map((file.organizations ?? []).map((o) => [o.key, randomUUID()]));
  const unitId = new Map((file.units ?? []).map((u) => [u.key, randomUUID()]));
  const positionId = new Map((file.positions ?? []).map((p) => [p.key, randomUUID()]));
  const memberId = new Map([...existing.members, ...(file.members ?? []).map((m) => [m.externalId, randomUUID()] as const)]);
  const optional = (ids: Map<string, string>, k: string | null | undefined) => (k ? ids.get(k)! : null);

  await tx.organization.createMany({ data: (file.organizations ?? []).map((o) => ({ id: orgId.get(o.key)!, workspaceId, name: o.name.trim() })) });
  await tx.unit.createMany({
    data: parentsFirst(file.units ?? []).map((u) => ({
      id: unitId.get(u.key)!,
      workspaceId,
      name: u.name.trim(),
      parentId: optional(unitId, u.parent),
      organizationId: optional(orgId, u.organization),
    })),
  });
  await tx.position.createMany({
    data: (file.positions ?? []).map((p) => ({
      id: positionId.get(p.key)!,
      workspaceId,
      unitId: unitId.get(p.unit)!,
      name: p.name.trim(),
      autoClockIn: p.autoClockIn ?? false,
      clockInGameIds: [...new Set(p.clockInGameIds ?? [])],
      clockInScopeIds: [...new Set(p.clockInScopeIds ?? [])],
      payoutRateMinor: p.payoutRateMinor === undefined || p.payoutRateMinor === null ? null : BigInt(p.payoutRateMinor),
      payoutUnit: p.payoutUnit ?? null,
      quotaMinutesPerWeek: p.quotaMinutesPerWeek ?? null,
    })),
  });
  const members = file.members ?? [];
  await tx.member.createMany({
    data: members.map((m) => ({
      id: memberId.get(m.externalId)!,
      workspaceId,
      externalId: m.externalId,
      displayName: m.displayName?.trim() || null,
      joinedAt: m.joinedAt ? new Date(m.joinedAt) : now,
    })),
  });
  const assignments = members.flatMap((m) => (m.positions ?? []).map((k) => ({ memberId: memberId.get(m.externalId)!, positionId: positionId.get(k)! })));
  await tx.assignment.createMany({ data: assignments });
  await tx.operation.createMany({
    data: (file.operations ?? []).map((o) => ({
      workspaceId,
      type: o.type.trim(),
      title: o.title.trim(),
      startsAt: new Date(o.startsAt),
      endsAt: new Date(o.endsAt),
      unitId: optional(unitId, o.unit),
      organizationId: optional(orgId, o.organization),
    })),
  });
  await tx.memberRecord.createMany({
    data: (file.records ?? []).map((r) => ({
      workspaceId,
      memberId: memberId.get(r.member)!,
      type: r.type.trim(),
      reason: r.reason?.trim() || null,
      issuedAt: new Date(r.issuedAt),
      expiresAt: r.expiresAt ? new Date(r.expiresAt) : null,
      revoked: r.revoked ?? false,
    })),
  });
  return {
    workspaceId,
    organizations: orgId.size,
    units: unitId.size,
    positions: positionId.size,
    members: members.length,
    assignments: assignments.length,
    operations: (file.operations ?? []).length,
    records: (file.records ?? []).length,
    settingsUpdated,
  };
}

/**
 * Imports `data` (the parsed file) into `workspaceId` at server time `now` (the joinedAt of members that
 * give none). Returns how many rows of each kind were created; reports one workspace change (which retires
 * every cached door decision of the workspace).
 * @throws {NotFoundError} unknown workspace.
 * @throws {ImportRefusedError} 400 `invalid_import` with every problem; nothing is written.
 */
export async function importWorkspace(db: Db, workspaceId: string, data: unknown, changes: SubjectChanges, now = new Date()): Promise<ImportSummary> {
  await requireWorkspace(db, workspaceId);
  const structural = structureProblems(data);
  const summary = await db.$transaction(
    async (tx) => {
      const existing = await loadExisting(tx, workspaceId);
      const problems = [...structural, ...referenceProblems(data, existing)];
      if (problems.length) throw new ImportRefusedError(problems);
      return write(tx, workspaceId, data as WorkspaceFile, existing, now);
    },
    { timeout: IMPORT_TIMEOUT_MS, maxWait: 10_000 },
  );
  await reportWorkspaceChange(changes, workspaceId);
  return summary;
}
