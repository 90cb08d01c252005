/**
 * Positions and their rules (issue #4 "Rules"): whether presence in a game clocks the member in
 * automatically (optionally only for some games or externalScopeIds), a payout rate per hour clocked in
 * (integer minor units of a currency or points), and a weekly quota of minutes clocked in. A position
 * belongs to a unit of the same workspace; deleting it removes its assignments (schema cascade).
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { checkName, requireInWorkspace, requireWorkspace } from './workspace-lookup.js';
import { isPayoutUnit } from './payout-units.js';
import { reportWorkspaceChange, type SubjectChanges } from './subject-changes.js';

/** Most minutes a weekly quota can ask for (the whole week). */
export const MAX_QUOTA_MINUTES = 7 * 24 * 60;
/** Largest payout rate in minor units per hour (keeps every ledger amount far inside Postgres bigint). */
export const MAX_RATE_MINOR = 10n ** 12n;

/** The rules of a position. */
export interface PositionRules {
  /** Presence in a game of the workspace clocks the member in. */
  autoClockIn: boolean;
  /** Only these game ids clock in; empty = every game of the workspace. */
  clockInGameIds: string[];
  /** Only these externalScopeIds clock in; empty = any scope (a session without a scope only matches empty). */
  clockInScopeIds: string[];
  /** Payout per hour clocked in, in minor units of {@link payoutUnit}; null = unpaid. */
  payoutRateMinor: bigint | null;
  /** `points` or an ISO 4217 code; set exactly when the rate is. */
  payoutUnit: string | null;
  /** Minutes clocked in per quota week the position requires; null = no quota. */
  quotaMinutesPerWeek: number | null;
}

/** One Position row with its rules. */
export interface PositionRow extends PositionRules {
  id: string;
  workspaceId: string;
  unitId: string;
  name: string;
  createdAt: Date;
}

/** Rules of a position created without any: no clock-in, unpaid, no quota. */
export const DEFAULT_RULES: PositionRules = {
  autoClockIn: false,
  clockInGameIds: [],
  clockInScopeIds: [],
  payoutRateMinor: null,
  payoutUnit: null,
  quotaMinutesPerWeek: null,
};

const select = {
  id: true,
  workspaceId: true,
  unitId: true,
  name: true,
  autoClockIn: true,
  clockInGameIds: true,
  clockInScopeIds: true,
  payoutRateMinor: true,
  payoutUnit: true,
  quotaMinutesPerWeek: true,
  createdAt: true,
} as const;

/**
 * Every problem with `rules`, one message per problem naming the field (empty = valid). `gameIds` are the
 * games of the workspace, which `clockInGameIds` must come from. Shared by the CLI and the import.
 */
export function positionRuleProblems(rules: PositionRules, gameIds: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  if ((rules.payoutRateMinor === null) !== (rules.payoutUnit === null)) problems.push('payoutRateMinor and payoutUnit must be given together');
  if (rules.payoutRateMinor !== null && (rules.payoutRateMinor < 0n || rules.payoutRateMinor > MAX_RATE_MINOR)) {
    problems.push(`payoutRateMinor must be an integer from 0 to ${MAX_RATE_MINOR}`);
  }
  if (rules.payoutUnit !== null && !isPayoutUnit(rules.payoutUnit)) problems.push(`payoutUnit "${rules.payoutUnit}" is neither "points" nor an ISO 4217 currency code`);
  const q = rules.quotaMinutesPerWeek;
  if (q !== null && (!Number.isInteger(q) || q < 1 || q > MAX_QUOTA_MINUTES)) problems.push(`quotaMinutesPerWeek must be an integer from 1 to ${MAX_QUOTA_MINUTES}`);
  for (const g of rules.clockInGameIds) if (!gameIds.has(g)) problems.push(`clockInGameIds: ${g} is not a game of this workspace`);
  for (const s of rules.clockInScopeIds) if (!s || s.length > 128) problems.push('clockInScopeIds: each scope is 1 to 128 characters');
  return problems;
}

/** The game ids of `workspaceId`. */
export async function workspaceGameIds(db: Db, workspaceId: string): Promise<Set<string>> {
  return new Set((await db.game.findMany({ where: { workspaceId }, select: { id: true } })).map((g) => g.id));
}

/**
 * Creates position `name` in unit `unitId` of `workspaceId` with `rules` (missing ones default to
 * {@link DEFAULT_RULES}).
 * @throws {NotFoundError} unknown workspace or unit. @throws {ValidationError} `invalid_rules` listing every problem.
 */
export async function createPosition(db: Db, input: { workspaceId: string; unitId: string; name: string } & Partial<PositionRules>): Promise<PositionRow> {
  const name = checkName('position', input.name);
  await requireWorkspace(db, input.workspaceId);
  requireInWorkspace(await db.unit.findUnique({ where: { id: input.unitId } }), 'unit', input.unitId, input.workspaceId);
  const rules: PositionRules = {
    autoClockIn: input.autoClockIn ?? DEFAULT_RULES.autoClockIn,
    clockInGameIds: [...new Set(input.clockInGameIds ?? [])],
    clockInScopeIds: [...new Set(input.clockInScopeIds ?? [])],
    payoutRateMinor: input.payoutRateMinor ?? null,
    payoutUnit: input.payoutUnit ?? null,
    quotaMinutesPerWeek: input.quotaMinutesPerWeek ?? null,
  };
  const problems = positionRuleProblems(rules, await workspaceGameIds(db, input.workspaceId));
  if (problems.length) throw new ValidationError(problems.join('; '), 'invalid_rules');
  return db.position.create({ data: { workspaceId: input.workspaceId, unitId: input.unitId, name, ...rules }, select });
}

/** The positions of `workspaceId` (only unit `unitId`'s when given), by name. @throws {NotFoundError} unknown workspace. */
export async function listPositions(db: Db, workspaceId: string, filter: { unitId?: string } = {}): Promise<PositionRow[]> {
  await requireWorkspace(db, workspaceId);
  return db.position.findMany({ where: { workspaceId, unitId: filter.unitId }, orderBy: [{ name: 'asc' }, { id: 'asc' }], select });
}

/**
 * Deletes position `id` (and its assignments) and returns it; reports a workspace change (its holders'
 * door decisions). @throws {NotFoundError} `position_not_found`.
 */
export async function deletePosition(db: Db, id: string, changes: SubjectChanges): Promise<PositionRow> {
  const row = await db.position.findUnique({ where: { id }, select });
  if (!row) throw new NotFoundError(`position ${id} not found`, 'position_not_found');
  await db.position.deleteMany({ where: { id } });
  await reportWorkspaceChange(changes, row.workspaceId);
  return row;
}
