/**
 * Issue #4 "All derived data is recomputable: a command rebuilds shifts, payouts and quota progress for a
 * period from stored sessions, and gives the same result as the live path (a test proves it)".
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { sweepGame } from '../../src/presence/liveness-sweep.js';
import { rebuildDerived } from '../../src/derived/rebuild.js';
import { quotaProgress } from '../../src/derived/quota-progress.js';
import { weekContaining } from '../../src/workspace/calendar.js';
import { FAR_FUTURE_MS } from '../../src/derived/shift-deriver.js';
import { RecordingChanges, forgetGames, heartbeatAt, insertSession, liveDerivation, memberWithPosition } from './fixtures.js';

/** Everything derived about a workspace, without row ids (a rebuild from scratch makes new ones). */
async function derivedState(h: Harness, workspaceId: string, atMs: number) {
  const shifts = await h.db.shift.findMany({
    where: { workspaceId },
    include: { member: { select: { externalId: true } }, payouts: true },
  });
  const week = weekContaining(atMs, 'UTC', 1);
  const byTimeThenMember = (a: (typeof shifts)[number], b: (typeof shifts)[number]) =>
    a.openedAt.getTime() - b.openedAt.getTime() || (a.member.externalId < b.member.externalId ? -1 : a.member.externalId > b.member.externalId ? 1 : 0);
  return {
    shifts: shifts.sort(byTimeThenMember).map((s) => ({
      member: s.member.externalId,
      openedAt: s.openedAt.toISOString(),
      closedAt: s.closedAt?.toISOString() ?? null,
      payout: s.payouts.map((p) => ({ seconds: p.seconds, rate: p.rateMinor, amount: p.amountMinor, unit: p.unit, position: p.positionId, accruedAt: p.accruedAt.toISOString() })),
    })),
    quotas: await quotaProgress(h.db, workspaceId, week, new Date(atMs)),
  };
}

describe('derived rebuild equals the live path', () => {
  const h = new Harness();
  const games: string[] = [];
  after(async () => {
    await forgetGames(h, games);
    await h.close();
  });

  it('rebuilds from stored sessions exactly what the live worker derived, and repairs damaged rows', async () => {
    const g = await h.game();
    games.push(g.gameId);
    const changes = new RecordingChanges();
    await memberWithPosition(h, g.workspaceId, 'm1', { autoClockIn: true, payoutRateMinor: 1250n, payoutUnit: 'USD', quotaMinutesPerWeek: 120 });
    await memberWithPosition(h, g.workspaceId, 'm2', { autoClockIn: true, clockInScopeIds: ['hq'], payoutRateMinor: 100n, payoutUnit: 'points', quotaMinutesPerWeek: 30 });
    await memberWithPosition(h, g.workspaceId, 'm3', { autoClockIn: false, quotaMinutesPerWeek: 60 });
    const live = liveDerivation(h, changes);

    // history stored earlier (hours long), then live play through the API in several worker ticks
    const now = Date.now();
    const hoursAgo = (n: number) => now - n * 3_600_000;
    await insertSession(h, g.gameId, { externalId: 'm1', openedAt: hoursAgo(30), closedAt: hoursAgo(28) });
    await insertSession(h, g.gameId, { externalId: 'm1', server: 'srv-2', openedAt: hoursAgo(29), closedAt: hoursAgo(27.5) });
    await insertSession(h, g.gameId, { externalId: 'm2', scope: 'hq', openedAt: hoursAgo(26), closedAt: hoursAgo(25) });
    await insertSession(h, g.gameId, { externalId: 'm2', scope: 'lobby', openedAt: hoursAgo(24), closedAt: hoursAgo(23) });
    await insertSession(h, g.gameId, { externalId: 'm3', openedAt: hoursAgo(20), closedAt: hoursAgo(19) });
    await live.run();

    await heartbeatAt(h, g, ['m1', 'm2', 'm3', 'guest'], 'srv-a', { externalScopeId: 'hq' });
    await heartbeatAt(h, g, ['m1'], 'srv-b', { externalScopeId: 'lobby' });
    await h.flush(g.gameId);
    await live.run();
    await heartbeatAt(h, g, ['m2', 'guest'], 'srv-a', { externalScopeId: 'hq' });
    const lastB = await heartbeatAt(h, g, ['m1'], 'srv-b', { externalScopeId: 'lobby' });
    await h.flush(g.gameId);
    await live.run();
    await sweepGame(h.redis, h.db, h.keySpace, g.gameId, h.config.goneAfterMissedIntervals, lastB + 3_600_000); // both servers crash
    await h.flush(g.gameId);
    await live.run();

    const atMs = Date.now();
    const liveState = await derivedState(h, g.workspaceId, atMs);
    expect(liveState.shifts.map((s) => s.member)).to.deep.equal(['m1', 'm2', 'm1', 'm2']);
    expect(liveState.shifts.every((s) => s.closedAt !== null)).to.equal(true);
    expect(liveState.shifts[0]!.payout[0]).to.include({ seconds: 2.5 * 3600, amount: 3125n }); // 30 h → 27.5 h ago, one shift over two servers

    const from = new Date(hoursAgo(48));
    const to = new Date(atMs + 3_600_000);
    // 1. a rebuild over the live result changes nothing
    const noop = await rebuildDerived(h.db, live.deriver, g.workspaceId, from, to);
    expect(noop).to.include({ members: 3, shifts: 4, created: 0, updated: 0, deleted: 0, payoutsWritten: 0, payoutsDeleted: 0 });
    expect(await derivedState(h, g.workspaceId, atMs)).to.deep.equal(liveState);

    // 2. damaged rows, including a shift the period only cuts through, are put back
    const victim = await h.db.shift.findFirstOrThrow({ where: { workspaceId: g.workspaceId }, orderBy: { openedAt: 'asc' } });
    await h.db.shift.update({ where: { id: victim.id }, data: { closedAt: new Date(victim.openedAt.getTime() + 1000) } });
    await h.db.payoutEntry.updateMany({ where: { shiftId: victim.id }, data: { amountMinor: 1n } });
    await h.db.shift.create({ data: { workspaceId: g.workspaceId, memberId: victim.memberId, openedAt: new Date(hoursAgo(10)), closedAt: new Date(hoursAgo(9)) } });
    await rebuildDerived(h.db, live.deriver, g.workspaceId, new Date(hoursAgo(29.5)), new Date(hoursAgo(29.4)));
    await rebuildDerived(h.db, live.deriver, g.workspaceId, new Date(hoursAgo(12)), to);
    expect(await derivedState(h, g.workspaceId, atMs)).to.deep.equal(liveState);

    // 3. from nothing at all
    await h.db.shift.deleteMany({ where: { workspaceId: g.workspaceId } });
    const fromScratch = await rebuildDerived(h.db, live.deriver, g.workspaceId, from, to);
    expect(fromScratch).to.include({ shifts: 4, created: 4, payoutsWritten: 4 });
    expect(await derivedState(h, g.workspaceId, atMs)).to.deep.equal(liveState);
  });

  it('recomputes a shift made of a long chain of short sessions whole, from any period inside it', async () => {
    const g = await h.game();
    games.push(g.gameId);
    const { member } = await memberWithPosition(h, g.workspaceId, 'hopper', { autoClockIn: true, payoutRateMinor: 3600n, payoutUnit: 'points' });
    // 120 visits of 4 minutes with 30 s between them (under the 40 s bridge): one 8.9-hour shift; then a
    // visit after a 2-minute gap: a second shift
    const start = Date.parse('2026-10-01T08:00:00Z');
    const visit = 270_000;
    for (let i = 0; i < 120; i++) {
      await insertSession(h, g.gameId, { externalId: 'hopper', server: `srv-${i % 3}`, openedAt: start + i * visit, closedAt: start + i * visit + 240_000 });
    }
    const chainEnd = start + 119 * visit + 240_000;
    await insertSession(h, g.gameId, { externalId: 'hopper', openedAt: chainEnd + 120_000, closedAt: chainEnd + 180_000 });
    const { deriver } = liveDerivation(h);
    const ws = await deriver.loadWorkspace(g.workspaceId);
    const mid = start + 60 * visit;
    const r = await deriver.recomputeMember(ws, member.id, mid, mid + 1);
    expect([r.fromMs, r.toMs]).to.deep.equal([start, chainEnd]);
    const shifts = await h.db.shift.findMany({ where: { memberId: member.id }, include: { payouts: true } });
    expect(shifts.map((x) => [x.openedAt.getTime(), x.closedAt!.getTime(), x.payouts[0]!.amountMinor])).to.deep.equal([[start, chainEnd, BigInt((chainEnd - start) / 1000)]]);
    // the live path, from the first session on, finds the same shift and the separate one after the gap
    await deriver.recomputeMember(ws, member.id, start, FAR_FUTURE_MS);
    expect(await h.db.shift.count({ where: { memberId: member.id } })).to.equal(2);
    expect((await h.db.shift.findFirstOrThrow({ where: { memberId: member.id }, orderBy: { openedAt: 'asc' } })).closedAt!.getTime()).to.equal(chainEnd);
  });
});
