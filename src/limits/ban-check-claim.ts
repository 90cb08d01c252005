/**
 * Replay claim plus quota of POST /api/v1/game/bans/check in one Redis script (`ban-check-claim.lua`),
 * replacing the plain replay claim so the quota costs no extra round trip: one connect-time lookup per
 * user, `BAN_CHECK_QUOTA` per (key, user) per minute (src/limits/quotas.ts `banCheckQuota`).
 */
import type { AppRedis } from '../store/redis.js';
import { ReplayError } from '../errors.js';
import type { SignedRequest } from '../auth/signed-request.js';
import { banCheckQuota } from './quotas.js';
import { QuotaExceededError } from './quota-error.js';
import { ThrottleMarks } from './throttle-marks.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { banCheckClaimCall } from '../store/lua/ban-check-claim.js';

/** The replay claim and ban-check quota of one process, over its API Redis client. */
export class BanCheckClaim {
  private readonly throttled: ThrottleMarks;

  constructor(private readonly redis: AppRedis, private readonly keySpace: KeySpace) {
    this.throttled = new ThrottleMarks(redis, keySpace);
  }

  /**
   * Claims `signed`'s signature and counts a check of `externalId` at server time `nowMs` (ms).
   * @throws {ReplayError} 409 `replayed_signature`. @throws {QuotaExceededError} 429 with Retry-After.
   */
  async claim(signed: SignedRequest, externalId: string, nowMs: number): Promise<void> {
    const keys = this.keySpace.game(signed.key.gameId);
    const call = banCheckClaimCall(keys, { keyId: signed.key.keyId, signature: signed.signature, signedAtSeconds: signed.timestampSeconds, quota: banCheckQuota(externalId), nowMs });
    const [outcome, retryAfter] = (await this.redis.runScript('banCheckClaim', call.keys, call.args)) as [string, string?];
    if (outcome === 'replay') throw new ReplayError('replayed_signature', 'this signature was already used; re-sign with a fresh timestamp');
    if (outcome === 'limited') {
      this.throttled.mark(signed.key.gameId, nowMs);
      throw new QuotaExceededError(signed.key.gameId, 'ban_check', Number(retryAfter));
    }
  }
}
