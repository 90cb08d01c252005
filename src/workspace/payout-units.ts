/**
 * Units of payout rates (issue #4: "a payout rate (amount per hour clocked in, with a currency or points
 * unit)"). Money is never a float: rates and amounts are integers of the unit's minor unit (cents for
 * USD, yen for JPY, 1 point for `points`); the number of decimals comes from the runtime's ISO 4217 data.
 */

/** The points unit: minor unit = 1 point (no decimals). */
export const POINTS = 'points';

let currencies: Set<string> | undefined;

/** True for `points` or an ISO 4217 code this runtime knows (upper case, e.g. `USD`). */
export function isPayoutUnit(unit: string): boolean {
  if (unit === POINTS) return true;
  currencies ??= new Set(Intl.supportedValuesOf('currency'));
  return /^[A-Z]{3}$/.test(unit) && currencies.has(unit);
}

/** Decimals of `unit`'s major unit: 0 for points and JPY, 2 for USD, 3 for KWD. */
export function minorDigits(unit: string): number {
  if (unit === POINTS) return 0;
  return new Intl.NumberFormat('en', { style: 'currency', currency: unit }).resolvedOptions().maximumFractionDigits ?? 2;
}

/** `amountMinor` in major units, exactly (string arithmetic, no float): 1250n USD → `12.50 USD`. */
export function formatMinor(amountMinor: bigint, unit: string): string {
  const digits = minorDigits(unit);
  const negative = amountMinor < 0n;
  const abs = (negative ? -amountMinor : amountMinor).toString().padStart(digits + 1, '0');
  const major = digits ? `${abs.slice(0, -digits)}.${abs.slice(-digits)}` : abs;
  return `${negative ? '-' : ''}${major} ${unit}`;
}
