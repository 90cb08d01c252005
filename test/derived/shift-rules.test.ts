/**
 * Issue #4 shift and payout rules as pure functions (src/derived/shift-merge.ts, payout-math.ts): sessions
 * merge into shifts, the bridging gap, time so far of an open shift, and money without floating point.
 */
import { expect } from 'chai';
import { mergeSessions, ruleCoversSession, type SessionSpan } from '../../src/derived/shift-merge.js';
import { bestPaidPosition, payoutAmountMinor, wholeSeconds, type PayRule } from '../../src/derived/payout-math.js';

const T0 = Date.parse('2026-11-16T10:00:00Z');
const min = (n: number) => T0 + n * 60_000;
function session(openMin: number, closeMin: number | null, over: Partial<SessionSpan> = {}): SessionSpan {
  return { gameId: 'g1', externalServerId: 's1', externalScopeId: 'p1', openedAtMs: min(openMin), closedAtMs: closeMin === null ? null : min(closeMin), serverLastSeenMs: null, ...over };
}
/** 20 s intervals on both sides: a gap of up to 40 s continues the shift. */
const bridge = () => 40_000;

describe('shift rules (pure)', () => {
  it('merges overlapping sessions on two servers into one shift, whatever the input order', () => {
    const a = session(0, 30, { externalServerId: 's1' });
    const b = session(10, 45, { externalServerId: 's2' });
    for (const input of [[a, b], [b, a]]) {
      const shifts = mergeSessions(input, bridge);
      expect(shifts.map((s) => [s.openedAtMs, s.closedAtMs])).to.deep.equal([[min(0), min(45)]]);
    }
  });

  it('continues a shift across a gap heartbeat sampling explains, and starts a new one after a longer gap', () => {
    const shifts = mergeSessions([session(0, 10), { ...session(10, 20), openedAtMs: min(10) + 40_000 }, session(21, 30)], bridge);
    expect(shifts.map((s) => [s.openedAtMs, s.closedAtMs])).to.deep.equal([
      [min(0), min(20)],
      [min(21), min(30)],
    ]);
    // the bridge is per pair of games: 15 s + 60 s intervals
    const perGame = (x: SessionSpan, y: SessionSpan) => ({ g1: 15_000, g2: 60_000 })[x.gameId as 'g1'] + ({ g1: 15_000, g2: 60_000 })[y.gameId as 'g1'];
    const mixed = mergeSessions([session(0, 10), { ...session(0, 20, { gameId: 'g2' }), openedAtMs: min(10) + 75_000 }], perGame);
    expect(mixed).to.have.length(1);
    const tooLate = mergeSessions([session(0, 10), { ...session(0, 20, { gameId: 'g2' }), openedAtMs: min(10) + 75_001 }], perGame);
    expect(tooLate).to.have.length(2);
  });

  it('leaves a shift with an open session open, accrued to the latest known heartbeat', () => {
    const [shift] = mergeSessions([session(0, 50), session(5, null, { serverLastSeenMs: min(42) })], bridge);
    expect(shift!.closedAtMs).to.equal(null);
    expect(shift!.accruedUntilMs).to.equal(min(50)); // the closed session was seen later than the server's copy
    const [other] = mergeSessions([session(0, 20), session(5, null, { serverLastSeenMs: min(42) })], bridge);
    expect(other!.accruedUntilMs).to.equal(min(42));
  });

  it('applies game and scope filters of clock-in rules', () => {
    const rule = { autoClockIn: true, clockInGameIds: ['g1'], clockInScopeIds: ['hq'] };
    expect(ruleCoversSession(rule, { gameId: 'g1', externalScopeId: 'hq' })).to.equal(true);
    expect(ruleCoversSession(rule, { gameId: 'g2', externalScopeId: 'hq' })).to.equal(false);
    expect(ruleCoversSession(rule, { gameId: 'g1', externalScopeId: null })).to.equal(false);
    expect(ruleCoversSession({ autoClockIn: true, clockInGameIds: [], clockInScopeIds: [] }, { gameId: 'g9', externalScopeId: null })).to.equal(true);
    expect(ruleCoversSession({ autoClockIn: false, clockInGameIds: [], clockInScopeIds: [] }, { gameId: 'g1', externalScopeId: 'hq' })).to.equal(false);
  });

  it('computes amount = seconds × rate / 3600 exactly, halves rounded up', () => {
    expect(payoutAmountMinor(5400, 1250n)).to.equal(1875n); // 1.5 h at 12.50 = 18.75
    expect(payoutAmountMinor(1, 1800n)).to.equal(1n); // 0.5 → 1
    expect(payoutAmountMinor(1, 1799n)).to.equal(0n); // 0.4997 → 0
    expect(payoutAmountMinor(1800, 1n)).to.equal(1n); // 0.5 → 1
    expect(payoutAmountMinor(0, 999n)).to.equal(0n);
    // far beyond a double's exact range: 10^9 s at 10^12 minor units per hour
    expect(payoutAmountMinor(1_000_000_000, 10n ** 12n)).to.equal(277_777_777_777_777_778n);
    expect(() => payoutAmountMinor(-1, 1n)).to.throw(RangeError);
    expect(wholeSeconds(0, 1999)).to.equal(1);
    expect(wholeSeconds(5000, 1000)).to.equal(0);
  });

  it('never goes through floating point, where hours × rate would drift', () => {
    // 115 s at 18.00/h is exactly 57.5 minor units; as a float, 115 / 3600 * 1800 = 57.49999999999999.
    expect(115 / 3600 * 1800).to.be.lessThan(57.5);
    expect(payoutAmountMinor(115, 1800n)).to.equal(58n);
    // Totals are exact sums of the rows: 3600 one-second rows at 3600/h are 1 each.
    let total = 0n;
    for (let i = 0; i < 3600; i++) total += payoutAmountMinor(1, 3600n);
    expect(total).to.equal(3600n);
  });

  it('pays the best-paid eligible position, ties broken by unit then id', () => {
    const p = (id: string, rate: bigint | null, over: Partial<PayRule> = {}): PayRule => ({ id, autoClockIn: true, clockInGameIds: [], clockInScopeIds: [], payoutRateMinor: rate, payoutUnit: rate === null ? null : 'USD', ...over });
    const sessions = [session(0, 60)];
    expect(bestPaidPosition([p('a', 100n), p('b', 300n), p('c', null)], sessions)?.id).to.equal('b');
    expect(bestPaidPosition([p('b', 300n, { clockInGameIds: ['other'] }), p('a', 100n)], sessions)?.id).to.equal('a');
    expect(bestPaidPosition([p('z', 300n), p('y', 300n)], sessions)?.id).to.equal('y');
    expect(bestPaidPosition([p('a', 300n, { payoutUnit: 'USD' }), p('b', 300n, { payoutUnit: 'EUR' })], sessions)?.id).to.equal('b');
    expect(bestPaidPosition([p('a', 300n, { autoClockIn: false })], sessions)).to.equal(null);
  });
});
