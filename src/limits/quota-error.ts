/**
 * 429 `rate_limited` from a per-key quota (spec: Errors 429, Limits; quotas in ./quotas.ts). Carries the
 * game and quota kind so the one place that counts 429s per game (src/adapters/metrics/observed-services.ts) can
 * label them; the envelope and the always-present `Retry-After` (whole seconds, at least 1) come from
 * {@link RateLimitError}.
 */
import { RateLimitError } from '../errors.js';
import type { QuotaKind } from './quotas.js';

/** 429 of one `quota` for `gameId`; `Retry-After` = `retryAfterSeconds` rounded up, at least 1. */
export class QuotaExceededError extends RateLimitError {
  constructor(
    readonly gameId: string,
    readonly quota: QuotaKind,
    retryAfterSeconds: number,
  ) {
    super(retryAfterSeconds, `over the ${quota} quota of this key; retry after the Retry-After seconds (quotas follow the heartbeat interval and the door cache TTL)`);
  }
}
