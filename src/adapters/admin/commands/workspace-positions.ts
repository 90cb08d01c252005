/**
 * `admin positions create|list|delete`: positions and their rules (auto clock-in with optional game and
 * scope filters, payout rate in integer minor units per hour, weekly quota in minutes;
 * src/workspace/positions.ts).
 */
import { createPosition, deletePosition, listPositions, type PositionRow } from '../../../workspace/positions.js';
import { formatMinor } from '../../../workspace/payout-units.js';
import { NotFoundError } from '../../../errors.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';
import { list as listOption, optionalBigInt } from './workspace-args.js';

/** A position as the CLI prints it (rate as a decimal string: bigint). */
function view(p: PositionRow) {
  return {
    id: p.id,
    unitId: p.unitId,
    name: p.name,
    autoClockIn: p.autoClockIn,
    clockInGameIds: p.clockInGameIds,
    clockInScopeIds: p.clockInScopeIds,
    payoutRateMinor: p.payoutRateMinor,
    payoutUnit: p.payoutUnit,
    quotaMinutesPerWeek: p.quotaMinutesPerWeek,
    createdAt: p.createdAt,
  };
}

function rateText(p: PositionRow): string | null {
  return p.payoutRateMinor === null || p.payoutUnit === null ? null : `${formatMinor(p.payoutRateMinor, p.payoutUnit)}/h`;
}

/**
 * `positions create --unit U --name N [--auto-clock-in] [--clock-in-games G1,G2] [--clock-in-scopes S1,S2]
 * [--payout-rate-minor R --payout-unit USD|points] [--quota-minutes M]` → the position (rate as a decimal
 * string). @throws {ValidationError} `invalid_rules` listing every problem. @throws {NotFoundError} unknown unit.
 */
const create: AdminCommand = {
  group: 'positions',
  name: 'create',
  summary: 'Create a position in a unit, with its clock-in, payout and quota rules',
  options: {
    unit: { type: 'string', required: true, valueName: 'ID', description: 'unit id (the position joins its workspace)' },
    name: { type: 'string', required: true, valueName: 'NAME', description: 'name' },
    'auto-clock-in': { type: 'boolean', description: 'presence in a game clocks the member in' },
    'clock-in-games': { type: 'string', valueName: 'IDS', description: 'only these game ids clock in (comma-separated; default every game)' },
    'clock-in-scopes': { type: 'string', valueName: 'IDS', description: 'only these externalScopeIds clock in (comma-separated; default any)' },
    'payout-rate-minor': { type: 'string', valueName: 'N', description: 'pay per hour clocked in, integer minor units (1250 = 12.50 USD)' },
    'payout-unit': { type: 'string', valueName: 'UNIT', description: 'ISO 4217 currency (USD, EUR, JPY, ...) or "points"' },
    'quota-minutes': { type: 'string', valueName: 'N', description: 'minutes clocked in required per quota week' },
  },
  async run(ctx) {
    const db = ctx.db();
    const unitId = ctx.args.uuid('unit');
    const unit = await db.unit.findUnique({ where: { id: unitId }, select: { workspaceId: true } });
    if (!unit) throw new NotFoundError(`unit ${unitId} not found`, 'unit_not_found');
    const p = await createPosition(db, {
      workspaceId: unit.workspaceId,
      unitId,
      name: ctx.args.string('name'),
      autoClockIn: ctx.args.flag('auto-clock-in'),
      clockInGameIds: listOption(ctx.args, 'clock-in-games'),
      clockInScopeIds: listOption(ctx.args, 'clock-in-scopes'),
      payoutRateMinor: optionalBigInt(ctx.args, 'payout-rate-minor') ?? null,
      payoutUnit: ctx.args.optionalString('payout-unit')?.trim() || null,
      quotaMinutesPerWeek: ctx.args.optionalInt('quota-minutes') ?? null,
    });
    return {
      json: view(p),
      text: formatFields([
        ['id', p.id],
        ['name', p.name],
        ['auto clock-in', p.autoClockIn],
        ['games', p.clockInGameIds.join(',') || 'all'],
        ['scopes', p.clockInScopeIds.join(',') || 'any'],
        ['rate', rateText(p)],
        ['quota', p.quotaMinutesPerWeek === null ? null : `${p.quotaMinutesPerWeek} min/week`],
      ]),
    };
  },
};

/** `positions list --workspace W [--unit U]` → `{ positions: [...] }` by name. */
const list: AdminCommand = {
  group: 'positions',
  name: 'list',
  summary: 'List the positions of a workspace (or of one unit) with their rules',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    unit: { type: 'string', valueName: 'ID', description: 'only this unit' },
  },
  async run(ctx) {
    const rows = await listPositions(ctx.db(), ctx.args.uuid('workspace'), { unitId: ctx.args.optionalUuid('unit') });
    return {
      json: { positions: rows.map(view) },
      text: formatTable(
        ['ID', 'NAME', 'UNIT', 'AUTO', 'RATE', 'QUOTA MIN/WEEK'],
        rows.map((p) => [p.id, p.name, p.unitId, p.autoClockIn, rateText(p), p.quotaMinutesPerWeek]),
        '(no positions)',
      ),
    };
  },
};

/** `positions delete --id P` → `{ deleted: { id, name } }`; its assignments go with it. */
const remove: AdminCommand = {
  group: 'positions',
  name: 'delete',
  summary: 'Delete a position and its assignments',
  destructive: 'deletes the position and its assignments',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'position id' } },
  async run(ctx) {
    const p = await deletePosition(ctx.db(), ctx.args.uuid('id'), doorInvalidation(ctx));
    return { json: { deleted: { id: p.id, name: p.name } }, text: `position ${p.name} (${p.id}) deleted` };
  },
};

export const positionCommands: AdminCommand[] = [create, list, remove];
