/**
 * Readable output of the operator CLI (the non-`--json` mode): aligned tables and short time formats.
 * Machine consumers use `--json`; nothing here is meant to be parsed.
 */

/** A cell value; null and undefined print as `-`. */
export type Cell = string | number | boolean | Date | null | undefined;

/** Renders one cell: dates as {@link formatDate}, null/undefined as `-`. */
export function formatCell(value: Cell): string {
  if (value === null || value === undefined || value === '') return '-';
  if (value instanceof Date) return formatDate(value);
  return String(value);
}

/**
 * Renders `rows` under `headers` as left-aligned columns separated by two spaces; `empty` (e.g.
 * `(no keys)`) when there are no rows.
 */
export function formatTable(headers: string[], rows: Cell[][], empty = '(none)'): string {
  if (!rows.length) return empty;
  const cells = rows.map((r) => r.map(formatCell));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/** Renders `key: value` lines with the keys aligned. */
export function formatFields(fields: [string, Cell][]): string {
  const width = Math.max(0, ...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${formatCell(v)}`).join('\n');
}

/** UTC timestamp to the second, e.g. `2025-01-31 12:00:05Z`. */
export function formatDate(d: Date): string {
  return d.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

/** A duration in whole seconds as `45s`, `12m05s`, `3h07m` or `2d04h`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${pad(Math.floor((s % 86400) / 3600))}h`;
}
