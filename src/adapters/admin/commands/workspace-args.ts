/**
 * Option parsing shared by the workspace-model and derived-data commands: instants, lists and integers
 * the generic {@link ArgReader} does not know. Every malformed value is a {@link UsageError} (exit 2).
 */
import { UsageError, type ArgReader } from '../command.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Help text of an instant option. */
export const INSTANT_HELP = 'RFC 3339 time, e.g. 2026-11-16T09:00:00Z (a bare date 2026-11-16 means 00:00 UTC)';

/** Parses an RFC 3339 instant with an offset, or a bare date (00:00 UTC). @throws {UsageError} otherwise. */
export function parseInstant(name: string, value: string): Date {
  const v = value.trim();
  const ms = DATE_ONLY.test(v) ? Date.parse(`${v}T00:00:00Z`) : RFC3339.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--${name} must be an RFC 3339 time with an offset (e.g. 2026-11-16T09:00:00Z) or a date (got "${value}")`);
  return new Date(ms);
}

/** Option `name` as an instant. @throws {UsageError} when absent or malformed. */
export function instant(args: ArgReader, name: string): Date {
  return parseInstant(name, args.string(name));
}

/** Option `name` as an instant, or undefined when absent. @throws {UsageError} when malformed. */
export function optionalInstant(args: ArgReader, name: string): Date | undefined {
  const v = args.optionalString(name);
  return v === undefined ? undefined : parseInstant(name, v);
}

/** Option `name` as a comma-separated list (blank items dropped); [] when absent. */
export function list(args: ArgReader, name: string): string[] {
  return (args.optionalString(name) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Option `name` as a non-negative integer of any size, or undefined. @throws {UsageError} when not digits. */
export function optionalBigInt(args: ArgReader, name: string): bigint | undefined {
  const v = args.optionalString(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim())) throw new UsageError(`--${name} must be a non-negative integer`);
  return BigInt(v.trim());
}
