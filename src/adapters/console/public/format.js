// Readable durations and times, the same shapes as the operator CLI (src/adapters/admin/format.ts).

/** Whole seconds as 45s, 12m05s, 3h07m or 2d04h. */
export function duration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${pad(Math.floor((s % 86400) / 3600))}h`;
}

/** An ISO time as HH:MM:SS in the browser's zone. */
export function clock(iso) {
  return iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : '-';
}

/** An ISO time as a short date and time. */
export function stamp(iso) {
  return iso ? new Date(iso).toLocaleString([], { hour12: false }) : '-';
}
