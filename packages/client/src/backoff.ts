/**
 * Retry delays (spec: Errors, rows 429 and 5xx; Limits: "Clients base back-off on the status code, not a
 * hardcoded number"): exponential backoff with jitter for 5xx and network errors, `Retry-After` in
 * seconds for 429.
 */

/** Exponential backoff bounds, in milliseconds. */
export interface BackoffOptions {
  /** Delay ceiling of the first retry, ms (the actual delay is jittered below it). Default 1000. */
  baseMs: number;
  /** Largest delay ceiling, ms. Default 60 000 (the longest heartbeat interval the spec allows). */
  maxMs: number;
}

/** The client's backoff: first retry within 0.5–1 s, ceilings doubling up to 60 s. */
export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({ baseMs: 1000, maxMs: 60_000 });

/**
 * Delay before retry number `attempt` (1 for the first retry), in ms: "equal jitter", a uniformly random
 * value between half and all of `min(maxMs, baseMs × 2^(attempt−1))`, so a fleet that failed together
 * does not retry together. `random` returns a number in [0, 1) (injectable for tests).
 */
export function backoffDelayMs(attempt: number, opts: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(0, attempt - 1), 30);
  const ceiling = Math.min(opts.maxMs, opts.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Parses a `Retry-After` header into milliseconds. The spec sends seconds (spec: Limits, "429 Retry-After:
 * seconds"); an HTTP date is accepted too and measured against `nowMs`. Returns null when the header is
 * missing or unusable, so the caller falls back to {@link backoffDelayMs}.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** Most jitter added to a `Retry-After`, ms (one second: the header's own resolution). */
export const RETRY_AFTER_JITTER_MS = 1000;

/**
 * Delay before retrying a refused request (429, or 503 with `Retry-After`), in ms: the header's seconds
 * plus a uniform jitter in [0, `jitterMs`), so clients refused in the same second (a fleet that booted
 * together) do not all come back in the same one. Null when the header is missing or unusable (the
 * caller falls back to {@link backoffDelayMs}).
 */
export function retryAfterWithJitterMs(value: string | null | undefined, nowMs: number, random: () => number = Math.random, jitterMs = RETRY_AFTER_JITTER_MS): number | null {
  const ms = parseRetryAfterMs(value, nowMs);
  return ms === null ? null : ms + Math.floor(random() * jitterMs);
}
