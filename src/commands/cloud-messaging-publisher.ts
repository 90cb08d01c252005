/**
 * {@link NudgePublisher} for the main game platform's cloud messaging API: an HTTP POST of
 * `{"message": "<text>"}` to `<baseUrl>/messaging-service/v1/universes/<universeId>/topics/<topic>` with the
 * API key in the `x-api-key` header. The platform fans the message out to every server of the universe
 * subscribed to the topic. The base URL is a per-game setting (tests and benchmarks point it at a local
 * imitation); the API key is a credential and never appears in a result, a log line or an error.
 */
import { MAX_NUDGE_BYTES, NUDGE_TOPIC, type NudgePublisher, type PublishResult } from './nudge-publisher.js';

/** Base URL used when a game has a universe and a key but no base URL of its own. */
export const DEFAULT_CLOUD_API_BASE_URL = 'https://apis.roblox.com';
/** Wait after a 429 without a usable Retry-After, ms. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

/** Where and how to publish: the game's platform settings (Game.universeId, cloudApiBaseUrl, cloudApiKey). */
export interface CloudMessagingTarget {
  universeId: string;
  apiKey: string;
  /** Default {@link DEFAULT_CLOUD_API_BASE_URL}. */
  baseUrl?: string;
  /** Default {@link NUDGE_TOPIC}. */
  topic?: string;
}

export interface CloudMessagingOptions {
  /** Per-request timeout, ms. Default 5000. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Retry-After in seconds or as an HTTP date, as ms from `nowMs`; null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}

export class CloudMessagingPublisher implements NudgePublisher {
  private readonly url: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(target: CloudMessagingTarget, opts: CloudMessagingOptions = {}) {
    const base = (target.baseUrl ?? DEFAULT_CLOUD_API_BASE_URL).replace(/\/+$/, '');
    const topic = target.topic ?? NUDGE_TOPIC;
    this.url = `${base}/messaging-service/v1/universes/${encodeURIComponent(target.universeId)}/topics/${encodeURIComponent(topic)}`;
    this.apiKey = target.apiKey;
    this.timeoutMs = opts.timeoutMs ?? 5_000;
    this.fetchFn = opts.fetch ?? fetch;
  }

  /**
   * Publishes `message`. 2xx → sent; 429 → rate_limited with the Retry-After (default
   * {@link DEFAULT_RETRY_AFTER_MS}); 5xx, 408, timeout, network error → unavailable; other statuses →
   * rejected.
   * @throws {RangeError} when `message` exceeds {@link MAX_NUDGE_BYTES} bytes (a programming error).
   */
  async publish(message: string): Promise<PublishResult> {
    const bytes = Buffer.byteLength(message);
    if (bytes > MAX_NUDGE_BYTES) throw new RangeError(`nudge message is ${bytes} bytes; the platform allows ${MAX_NUDGE_BYTES}`);
    let res: Response;
    try {
      res = await this.fetchFn(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': this.apiKey },
        body: JSON.stringify({ message }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const name = (err as Error).name;
      return { kind: 'unavailable', reason: name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : `network error (${name})` };
    }
    await res.arrayBuffer().catch(() => undefined);
    if (res.ok) return { kind: 'sent' };
    if (res.status === 429) return { kind: 'rate_limited', retryAfterMs: retryAfterMs(res.headers.get('retry-after'), Date.now()) ?? DEFAULT_RETRY_AFTER_MS };
    if (res.status >= 500 || res.status === 408) return { kind: 'unavailable', reason: `HTTP ${res.status}` };
    return { kind: 'rejected', status: res.status, reason: `HTTP ${res.status}` };
  }
}
