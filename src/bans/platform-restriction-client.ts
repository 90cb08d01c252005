/**
 * HTTP writer for the main platform's cloud user-restriction endpoint (issue #6: "PATCH of a user
 * restriction with an active flag, duration, private and display reasons"; base URL and API key per game).
 *
 *   PATCH {cloudApiBaseUrl}/cloud/v2/universes/{universeId}/user-restrictions/{userId}
 *         ?updateMask=gameJoinRestriction&idempotencyKey.key={key}&idempotencyKey.firstSent={RFC 3339}
 *   x-api-key: {cloudApiKey}
 *   { "gameJoinRestriction": { "active", "duration": "<seconds>s" (omitted = permanent),
 *                              "privateReason", "displayReason", "excludeAltAccounts": false } }
 *
 * Every retry of one write sends the same idempotency key, first-sent time and body, so a write the
 * platform applied before its answer was lost is not applied twice. The API key is a credential: it goes
 * in the header only and never into an error message or a log line.
 */
import type { PlatformSettings } from '../games/platform-settings.js';

/** One user-restriction write. */
export interface RestrictionWrite {
  /** The platform user id (the ban's externalId). */
  userId: string;
  active: boolean;
  /** Seconds the restriction lasts from when the platform applies it; null = permanent (or inactive). */
  durationSeconds: number | null;
  privateReason: string;
  displayReason: string;
  /** The same on every retry of this write (PlatformBanWrite.idempotencyKey). */
  idempotencyKey: string;
  /** Sent as `idempotencyKey.firstSent`: a fixed time of this write (when it was queued), the same on every retry. */
  firstSentAt: Date;
}

/**
 * A write the platform did not accept. `retryable` for 408, 429, 5xx, network errors and timeouts;
 * `retryAfterMs` from a Retry-After header (seconds or an HTTP date), when present.
 */
export class PlatformWriteError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
    this.name = 'PlatformWriteError';
  }
}

/** Default per-request timeout, ms. */
export const PLATFORM_TIMEOUT_MS = 10_000;

/** Parses Retry-After (delta seconds or an HTTP date) into ms from `nowMs`; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}

export class PlatformRestrictionClient {
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(
    private readonly settings: PlatformSettings,
    opts: { timeoutMs?: number; fetch?: typeof fetch } = {},
  ) {
    this.fetchImpl = opts.fetch ?? fetch;
    this.timeoutMs = opts.timeoutMs ?? PLATFORM_TIMEOUT_MS;
  }

  /** The request URL of `write` (no credential in it). */
  url(write: Pick<RestrictionWrite, 'userId' | 'idempotencyKey' | 'firstSentAt'>): string {
    const base = this.settings.cloudApiBaseUrl.replace(/\/+$/, '');
    const path = `/cloud/v2/universes/${encodeURIComponent(this.settings.universeId)}/user-restrictions/${encodeURIComponent(write.userId)}`;
    const query = new URLSearchParams({
      updateMask: 'gameJoinRestriction',
      'idempotencyKey.key': write.idempotencyKey,
      'idempotencyKey.firstSent': write.firstSentAt.toISOString(),
    });
    return `${base}${path}?${query.toString()}`;
  }

  /**
   * Sends one PATCH. Resolves on any 2xx.
   * @throws {PlatformWriteError} on any other status, a network error or the timeout.
   */
  async write(write: RestrictionWrite): Promise<void> {
    const body = JSON.stringify({
      gameJoinRestriction: {
        active: write.active,
        ...(write.active && write.durationSeconds !== null ? { duration: `${write.durationSeconds}s` } : {}),
        privateReason: write.privateReason,
        displayReason: write.displayReason,
        excludeAltAccounts: false,
      },
    });
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(write), {
        method: 'PATCH',
        headers: { 'x-api-key': this.settings.cloudApiKey, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const timeout = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new PlatformWriteError(timeout ? `no answer within ${this.timeoutMs} ms` : `network error: ${err instanceof Error ? err.message : String(err)}`, null, true, null);
    }
    const text = await res.text().catch(() => '');
    if (res.ok) return;
    const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), Date.now());
    throw new PlatformWriteError(`platform answered ${res.status}${text ? `: ${text.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`, res.status, retryable, retryAfterMs);
  }
}
