/**
 * Issue #4 "Payout accrual": each closed shift (and, for open shifts, the time so far) accrues
 * hours × the rate of the member's best-paid eligible position into the ledger, in integer minor units;
 * `payouts list` totals per member. Sessions are stored directly here so shifts can last hours.
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { listPayouts } from '../../src/derived/payout-ledger.js';
import { createPosition } from '../../src/workspace/positions.js';
import { assignPosition } from '../../src/workspace/assignments.js';
import { RecordingChanges, forgetGames, insertSession, liveDerivation, memberWithPosition } from './fixtures.js';

const at = (hhmmss: string) => Date.parse(`2026-03-02T${hhmmss}Z`);

describe('payout ledger', () => {
  const h = new Harness();
  const games: string[] = [];
  after(async () => {
    await forgetGames(h, games);
    await h.close();
  });

  it('accrues hours × the best eligible rate per shift, exact to the minor unit, and follows an open shift', async () => {
    const g = await h.game();
    games.push(g.gameId);
    const changes = new RecordingChanges();
    const { member, unit, position: base } = await memberWithPosition(h, g.workspaceId, 'payee', { autoClockIn: true, payoutRateMinor: 1250n, payoutUnit: 'USD' });
    const vip = await createPosition(h.db, { workspaceId: g.workspaceId, unitId: unit.id, name: 'vip guard', autoClockIn: true, clockInScopeIds: ['vip'], payoutRateMinor: 2000n, payoutUnit: 'USD' });
    await assignPosition(h.db, member.id, vip.id, changes);
    await insertSession(h, g.gameId, { externalId: 'payee', openedAt: at('10:00:00'), closedAt: at('11:30:00') }); // 5400 s
    await insertSession(h, g.gameId, { externalId: 'payee', openedAt: at('12:00:00'), closedAt: at('12:00:01.999') }); // 1 s
    await insertSession(h, g.gameId, { externalId: 'payee', scope: 'vip', openedAt: at('13:00:00'), closedAt: at('14:00:00') }); // vip rate
    await insertSession(h, g.gameId, { externalId: 'payee', server: 'srv-open', openedAt: at('15:00:00') });
    await h.db.gameServer.create({
      data: { gameId: g.gameId, externalServerId: 'srv-open', sdkVersion: '1', maxPlayers: 10, firstSeenAt: new Date(at('15:00:00')), lastSeenAt: new Date(at('15:45:00')) },
    });
    const live = liveDerivation(h, changes, { accrualRefreshMs: 0 });
    await live.run();

    const ledger = async () =>
      (await h.db.payoutEntry.findMany({ where: { memberId: member.id }, include: { shift: true }, orderBy: { accruedAt: 'asc' } })).map((e) => ({
        opened: e.shift.openedAt.toISOString().slice(11, 19),
        closed: e.shift.closedAt?.toISOString().slice(11, 19) ?? null,
        seconds: e.seconds,
        rate: e.rateMinor,
        amount: e.amountMinor,
        unit: e.unit,
        position: e.positionId,
        accruedAt: e.accruedAt.toISOString().slice(11, 19),
      }));
    expect(await ledger()).to.deep.equal([
      { opened: '10:00:00', closed: '11:30:00', seconds: 5400, rate: 1250n, amount: 1875n, unit: 'USD', position: base.id, accruedAt: '11:30:00' },
      { opened: '12:00:00', closed: '12:00:01', seconds: 1, rate: 1250n, amount: 0n, unit: 'USD', position: base.id, accruedAt: '12:00:01' },
      { opened: '13:00:00', closed: '14:00:00', seconds: 3600, rate: 2000n, amount: 2000n, unit: 'USD', position: vip.id, accruedAt: '14:00:00' },
      // open: time so far runs to the server's last known heartbeat; 2700 s × 1250 / 3600 = 937.5 → 938
      { opened: '15:00:00', closed: null, seconds: 2700, rate: 1250n, amount: 938n, unit: 'USD', position: base.id, accruedAt: '15:45:00' },
    ]);

    const report = await listPayouts(h.db, g.workspaceId, new Date(at('00:00:00')), new Date(at('23:59:59')));
    expect(report.entries).to.have.length(4);
    expect(report.memberTotals).to.deep.equal([{ memberId: member.id, externalId: 'payee', unit: 'USD', shifts: 4, seconds: 11701, amountMinor: 4813n }]);
    expect(report.totals).to.deep.equal([{ memberId: null, externalId: null, unit: 'USD', shifts: 4, seconds: 11701, amountMinor: 4813n }]);
    const morning = await listPayouts(h.db, g.workspaceId, new Date(at('00:00:00')), new Date(at('12:00:00')));
    expect(morning.memberTotals[0]).to.include({ shifts: 1, seconds: 5400, amountMinor: 1875n });

    // the liveness sweep copies a later heartbeat: the open shift accrues further
    await h.db.gameServer.updateMany({ where: { gameId: g.gameId, externalServerId: 'srv-open' }, data: { lastSeenAt: new Date(at('16:00:00')) } });
    await live.run();
    expect((await ledger())[3]).to.include({ seconds: 3600, amount: 1250n, accruedAt: '16:00:00', closed: null });

    // the member leaves at 16:10:10: the shift closes there and its row becomes final
    await h.db.session.updateMany({ where: { gameId: g.gameId, externalServerId: 'srv-open' }, data: { closedAt: new Date(at('16:10:10')), closeReason: 'left' } });
    await live.run();
    // 4210 s × 1250 / 3600 = 1461.8 → 1462
    expect((await ledger())[3]).to.include({ seconds: 4210, amount: 1462n, accruedAt: '16:10:10', closed: '16:10:10' });
  });

  it('writes no ledger row for shifts of unpaid positions, and drops rows when a rebuild finds the rate gone', async () => {
    const g = await h.game();
    games.push(g.gameId);
    const { member: unpaid } = await memberWithPosition(h, g.workspaceId, 'volunteer', { autoClockIn: true });
    const { member: paid, position } = await memberWithPosition(h, g.workspaceId, 'staff', { autoClockIn: true, payoutRateMinor: 100n, payoutUnit: 'points' });
    await insertSession(h, g.gameId, { externalId: 'volunteer', openedAt: at('10:00:00'), closedAt: at('11:00:00') });
    await insertSession(h, g.gameId, { externalId: 'staff', openedAt: at('10:00:00'), closedAt: at('11:00:00') });
    const live = liveDerivation(h);
    const { deriver } = live;
    const run = () => live.run();
    await run();
    expect(await h.db.shift.count({ where: { memberId: unpaid.id } })).to.equal(1);
    expect(await h.db.payoutEntry.count({ where: { memberId: unpaid.id } })).to.equal(0);
    expect((await h.db.payoutEntry.findFirstOrThrow({ where: { memberId: paid.id } })).amountMinor).to.equal(100n);

    await h.db.position.update({ where: { id: position.id }, data: { payoutRateMinor: null, payoutUnit: null } });
    const ws = await deriver.loadWorkspace(g.workspaceId);
    const r = await deriver.recomputeMember(ws, paid.id, at('00:00:00'), at('23:00:00'));
    expect(r).to.include({ shifts: 1, created: 0, deleted: 0, payoutsDeleted: 1 });
    expect(await h.db.payoutEntry.count({ where: { memberId: paid.id } })).to.equal(0);
  });
});
