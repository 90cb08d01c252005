/**
 * Issue #4 "Quota progress": minutes clocked in this period vs the quota of each of the member's
 * positions, periods in the workspace's time zone and week start (src/derived/quota-progress.ts).
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { quotaProgress } from '../../src/derived/quota-progress.js';
import { parseWeekLabel } from '../../src/workspace/calendar.js';
import { setWeekSettings } from '../../src/workspace/workspace-settings.js';
import { createPosition } from '../../src/workspace/positions.js';
import { assignPosition } from '../../src/workspace/assignments.js';
import { RecordingChanges, memberWithPosition } from './fixtures.js';

describe('quota progress', () => {
  const h = new Harness();
  after(() => h.close());

  it('counts clocked minutes inside the week, split at week boundaries in the workspace time zone', async () => {
    const g = await h.game();
    const changes = new RecordingChanges();
    await setWeekSettings(h.db, g.workspaceId, { timeZone: 'America/New_York', weekStartsOn: 7 });
    const { member, unit } = await memberWithPosition(h, g.workspaceId, 'q1', { autoClockIn: true, quotaMinutesPerWeek: 180 });
    const big = await createPosition(h.db, { workspaceId: g.workspaceId, unitId: unit.id, name: 'big quota', quotaMinutesPerWeek: 300 });
    await assignPosition(h.db, member.id, big.id, changes);
    await memberWithPosition(h, g.workspaceId, 'q2', { autoClockIn: true, quotaMinutesPerWeek: 60 });
    await memberWithPosition(h, g.workspaceId, 'no-quota', { autoClockIn: true });
    const shift = (openedAt: string, closedAt: string | null) =>
      h.db.shift.create({ data: { workspaceId: g.workspaceId, memberId: member.id, openedAt: new Date(openedAt), closedAt: closedAt ? new Date(closedAt) : null } });
    // 2026-W10 with Sunday starts in New York: Sun 8 Mar 00:00 EST (05:00Z) to Sun 15 Mar 00:00 EDT (04:00Z)
    await shift('2026-03-08T04:00:00Z', '2026-03-08T06:00:00Z'); // Sat 23:00 – Sun 01:00 EST: 60 min inside
    await shift('2026-03-15T03:30:00Z', '2026-03-15T04:30:00Z'); // Sat 23:30 – Sun 00:30 EDT: 30 min inside
    await shift('2026-03-13T00:00:00Z', null); // open: counts up to the moment asked
    const asOf = new Date('2026-03-13T02:00:30Z');

    const ws = await h.db.workspace.findUniqueOrThrow({ where: { id: g.workspaceId } });
    const period = parseWeekLabel('2026-W10', ws.timeZone, ws.weekStartsOn);
    expect([period.start.toISOString(), period.end.toISOString()]).to.deep.equal(['2026-03-08T05:00:00.000Z', '2026-03-15T04:00:00.000Z']);
    const rows = await quotaProgress(h.db, g.workspaceId, period, asOf);
    expect(rows.map((r) => [r.externalId, r.positionName, r.clockedMinutes, r.quotaMinutes, r.percent, r.met])).to.deep.equal([
      ['q1', 'big quota', 210, 300, 70, false],
      ['q1', 'position of q1', 210, 180, 116, true],
      ['q2', 'position of q2', 0, 60, 0, false],
    ]);
    expect(rows[0]!.clockedSeconds).to.equal(210 * 60 + 30);

    // the week before gets the other half of the Saturday-night shift
    const before = await quotaProgress(h.db, g.workspaceId, parseWeekLabel('2026-W09', ws.timeZone, ws.weekStartsOn), asOf, { memberId: member.id });
    expect(before.map((r) => r.clockedMinutes)).to.deep.equal([60, 60]);

    // the same shifts under the default settings (ISO weeks, UTC): W10 is 2 – 9 March UTC
    const utc = await quotaProgress(h.db, g.workspaceId, parseWeekLabel('2026-W10', 'UTC', 1), asOf, { memberId: member.id });
    expect(utc.map((r) => r.clockedMinutes)).to.deep.equal([120, 120]);
    const future = await quotaProgress(h.db, g.workspaceId, parseWeekLabel('2026-W12', 'UTC', 1), asOf, { memberId: member.id });
    expect(future.map((r) => [r.clockedSeconds, r.percent, r.met])).to.deep.equal([[0, 0, false], [0, 0, false]]);
  });
});
