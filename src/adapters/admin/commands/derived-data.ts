/**
 * Commands over the data derived from rosters (issue #4): `payouts list`, `quotas show`,
 * `analytics show` and `derived rebuild` (src/derived/). Money prints as integer minor units in JSON
 * (decimal strings: bigint) and in major units in readable mode.
 */
import { listPayouts } from '../../../derived/payout-ledger.js';
import { quotaProgress } from '../../../derived/quota-progress.js';
import { gameAnalytics, MAX_ANALYTICS_DAYS } from '../../../derived/analytics.js';
import { rebuildDerived } from '../../../derived/rebuild.js';
import { ShiftDeriver } from '../../../derived/shift-deriver.js';
import { parseWeekLabel, weekContaining } from '../../../workspace/calendar.js';
import { requireWorkspace } from '../../../workspace/workspace-lookup.js';
import { formatMinor } from '../../../workspace/payout-units.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatDate, formatDuration, formatFields, formatTable } from '../format.js';
import { requireGame } from './games.js';
import { INSTANT_HELP, instant } from './workspace-args.js';

const period = {
  from: { type: 'string', required: true, valueName: 'TIME', description: `start, inclusive; ${INSTANT_HELP}` },
  to: { type: 'string', required: true, valueName: 'TIME', description: 'end, exclusive' },
} as const;

/**
 * `payouts list --workspace W --from T --to T [--member M]` → `{ workspaceId, from, to, entries,
 * memberTotals, totals }` (payout-ledger.ts): ledger lines accrued in [from, to), per-member and overall
 * totals per unit. @throws {ValidationError} `to` not after `from`.
 */
const payouts: AdminCommand = {
  group: 'payouts',
  name: 'list',
  summary: 'Show payout ledger lines accrued in a period, with per-member totals',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    ...period,
    member: { type: 'string', valueName: 'ID', description: 'only this member' },
  },
  async run(ctx) {
    const r = await listPayouts(ctx.db(), ctx.args.uuid('workspace'), instant(ctx.args, 'from'), instant(ctx.args, 'to'), { memberId: ctx.args.optionalUuid('member') });
    const text = [
      formatTable(
        ['MEMBER', 'OPENED', 'CLOSED', 'TIME', 'RATE/H', 'AMOUNT'],
        r.entries.map((e) => [e.externalId, e.openedAt, e.closedAt ?? 'open', formatDuration(e.seconds), formatMinor(e.rateMinor, e.unit), formatMinor(e.amountMinor, e.unit)]),
        '(no payouts in this period)',
      ),
      '',
      'totals per member:',
      formatTable(['MEMBER', 'SHIFTS', 'TIME', 'AMOUNT'], r.memberTotals.map((t) => [t.externalId, t.shifts, formatDuration(t.seconds), formatMinor(t.amountMinor, t.unit)]), '(none)'),
      '',
      `total: ${r.totals.map((t) => formatMinor(t.amountMinor, t.unit)).join(', ') || '0'}`,
    ].join('\n');
    return { json: { ...r }, text };
  },
};

/**
 * `quotas show --workspace W [--period 2026-W47] [--member M]` → `{ workspaceId, period: { label, start,
 * end, timeZone, weekStartsOn }, asOf, rows }` (quota-progress.ts); the period defaults to the current
 * week in the workspace's time zone. @throws {ValidationError} `invalid_period`.
 */
const quotas: AdminCommand = {
  group: 'quotas',
  name: 'show',
  summary: 'Show quota progress (met / not met / percent) for a week of the workspace',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    period: { type: 'string', valueName: 'YYYY-Www', description: 'quota week, e.g. 2026-W47 (default: the current one)' },
    member: { type: 'string', valueName: 'ID', description: 'only this member' },
  },
  async run(ctx) {
    const db = ctx.db();
    const ws = await requireWorkspace(db, ctx.args.uuid('workspace'));
    const label = ctx.args.optionalString('period');
    const p = label === undefined ? weekContaining(ctx.nowMs, ws.timeZone, ws.weekStartsOn) : parseWeekLabel(label, ws.timeZone, ws.weekStartsOn);
    const asOf = new Date(ctx.nowMs);
    const rows = await quotaProgress(db, ws.id, p, asOf, { memberId: ctx.args.optionalUuid('member') });
    const text = [
      `period ${p.label}: ${formatDate(p.start)} to ${formatDate(p.end)} (${p.timeZone}, weeks start on ISO day ${p.weekStartsOn})`,
      formatTable(
        ['MEMBER', 'POSITION', 'CLOCKED MIN', 'QUOTA MIN', 'PERCENT', 'MET'],
        rows.map((q) => [q.externalId, q.positionName, q.clockedMinutes, q.quotaMinutes, `${q.percent}%`, q.met ? 'met' : 'not met']),
        '(no member holds a position with a quota)',
      ),
    ].join('\n');
    return { json: { workspaceId: ws.id, period: p, asOf, rows }, text };
  },
};

/**
 * `analytics show --game G --from T --to T` → the {@link gameAnalytics} report: concurrency per minute,
 * events per type per hour, session length distribution, top custom types.
 * @throws {NotFoundError} unknown game. @throws {ValidationError} `invalid_period`.
 */
const analytics: AdminCommand = {
  group: 'analytics',
  name: 'show',
  summary: `Concurrency per minute, events per type per hour, session lengths, top custom types (at most ${MAX_ANALYTICS_DAYS} days)`,
  options: { game: { type: 'string', required: true, valueName: 'ID', description: 'game id' }, ...period },
  async run(ctx) {
    const db = ctx.db();
    const game = await requireGame(db, ctx.args.uuid('game'));
    const a = await gameAnalytics(db, game.id, instant(ctx.args, 'from'), instant(ctx.args, 'to'));
    const sampled = a.concurrency.points.filter((p) => p.source === 'sample').length;
    const { types, rows } = a.eventsPerHour;
    const text = [
      `game ${game.name} (${game.id}), ${formatDate(a.from)} to ${formatDate(a.to)}`,
      `concurrent players: peak ${a.concurrency.peakPlayers}${a.concurrency.peakMinute ? ` at ${formatDate(a.concurrency.peakMinute)}` : ''}; ${a.concurrency.points.length} minutes (${sampled} sampled, the rest from sessions; --json for the series)`,
      '',
      'events per hour:',
      formatTable(['HOUR', ...types.map((t) => t.toUpperCase())], rows.filter((r) => r.counts.some(Boolean)).map((r) => [r.hour, ...r.counts]), '(no events)'),
      '',
      `sessions opened: ${a.sessionLengths.closed} closed, ${a.sessionLengths.open} still open; median ${a.sessionLengths.medianSeconds === null ? '-' : formatDuration(a.sessionLengths.medianSeconds)}, p90 ${a.sessionLengths.p90Seconds === null ? '-' : formatDuration(a.sessionLengths.p90Seconds)}`,
      formatTable(['LENGTH', 'SESSIONS'], a.sessionLengths.buckets.map((b) => [b.label, b.count])),
      '',
      'top custom event types:',
      formatTable(['TYPE', 'COUNT'], a.topCustomTypes.map((t) => [t.type, t.count]), '(none)'),
    ].join('\n');
    return { json: { ...a }, text };
  },
};

/**
 * `derived rebuild --workspace W --from T --to T` → `{ workspaceId, from, to, members, shifts, created,
 * updated, deleted, payoutsWritten, payoutsDeleted }` (rebuild.ts): shifts and payouts recomputed from
 * stored sessions with the live path's own function; quota progress follows the shifts.
 */
const rebuild: AdminCommand = {
  group: 'derived',
  name: 'rebuild',
  summary: 'Recompute shifts, payouts and quota progress of a workspace for a period from stored sessions',
  options: { workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' }, ...period },
  async run(ctx) {
    const db = ctx.db();
    const deriver = new ShiftDeriver(db, ctx.redis(), ctx.keySpace, doorInvalidation(ctx));
    const s = await rebuildDerived(db, deriver, ctx.args.uuid('workspace'), instant(ctx.args, 'from'), instant(ctx.args, 'to'));
    return {
      json: { ...s },
      text: formatFields([
        ['members', s.members],
        ['shifts', s.shifts],
        ['created', s.created],
        ['updated', s.updated],
        ['deleted', s.deleted],
        ['payouts written', s.payoutsWritten],
        ['payouts deleted', s.payoutsDeleted],
      ]),
    };
  },
};

export const derivedDataCommands: AdminCommand[] = [payouts, quotas, analytics, rebuild];
