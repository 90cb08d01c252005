/**
 * Pure payout arithmetic (issue #4 "Payout accrual": amount = hours × the rate of the member's best-paid
 * eligible position). Integers only, so no floating-point drift, ever:
 *
 * - Time: a shift's duration is truncated to whole seconds (`seconds`, stored on the ledger row).
 * - Amount: `amountMinor = round(seconds × rateMinor / 3600)` with halves rounded up, computed exactly in
 *   BigInt as `(seconds × rateMinor + 1800) / 3600` (integer division). Rounding happens once per ledger
 *   row (one row per shift); totals are exact sums of rows and are never re-rounded. So a row can always be
 *   re-checked from its own `seconds` and `rateMinor`.
 * - Eligible positions for a shift: the member's positions that clock in automatically, have a rate and
 *   cover at least one session of the shift (its game and scope filters). The best-paid is the highest
 *   `rateMinor`; ties go to the unit that sorts first, then the smallest position id. Rates in different
 *   units are compared by their number (a workspace is expected to pay in one unit; each shift is paid in
 *   exactly one unit, because the ledger has one row per shift).
 */
import { ruleCoversSession, type ClockInRule, type SessionSpan } from './shift-merge.js';

const SECONDS_PER_HOUR = 3600n;

/** A position's pay rule. */
export interface PayRule extends ClockInRule {
  id: string;
  /** Minor units per hour; null = unpaid. */
  payoutRateMinor: bigint | null;
  payoutUnit: string | null;
}

/** Whole seconds from `fromMs` to `untilMs` (truncated; 0 when `untilMs` is not later). */
export function wholeSeconds(fromMs: number, untilMs: number): number {
  return Math.max(0, Math.floor((untilMs - fromMs) / 1000));
}

/** `round(seconds × rateMinor / 3600)`, halves up, exact. @throws RangeError on negative input. */
export function payoutAmountMinor(seconds: number, rateMinor: bigint): bigint {
  if (!Number.isSafeInteger(seconds) || seconds < 0 || rateMinor < 0n) throw new RangeError('seconds and rate must be non-negative integers');
  return (BigInt(seconds) * rateMinor + SECONDS_PER_HOUR / 2n) / SECONDS_PER_HOUR;
}

/** The best-paid position eligible for a shift made of `sessions`, or null when none is paid. */
export function bestPaidPosition(positions: readonly PayRule[], sessions: readonly SessionSpan[]): (PayRule & { payoutRateMinor: bigint; payoutUnit: string }) | null {
  let best: (PayRule & { payoutRateMinor: bigint; payoutUnit: string }) | null = null;
  for (const p of positions) {
    if (p.payoutRateMinor === null || p.payoutUnit === null) continue;
    if (!sessions.some((s) => ruleCoversSession(p, s))) continue;
    const candidate = p as PayRule & { payoutRateMinor: bigint; payoutUnit: string };
    if (
      !best ||
      candidate.payoutRateMinor > best.payoutRateMinor ||
      (candidate.payoutRateMinor === best.payoutRateMinor && (candidate.payoutUnit < best.payoutUnit || (candidate.payoutUnit === best.payoutUnit && candidate.id < best.id)))
    ) {
      best = candidate;
    }
  }
  return best;
}
