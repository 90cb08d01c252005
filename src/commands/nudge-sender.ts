/**
 * Sends one requested nudge of a game (the work of the `publish-nudges` worker role; requests come from
 * src/commands/nudge-queue.ts, already coalesced). Order: game settings → age → budget → publish.
 *
 * - No push (nudges disabled, or no universe id or API key): skipped. Those games wait for their next
 *   scheduled heartbeat (spec: "Platforms without push wait for the next scheduled heartbeat").
 * - Older than {@link NUDGE_MAX_AGE_MS}: skipped, every server has heartbeated since.
 * - Budget exhausted (src/commands/nudge-budget.ts) or the platform answered 429: retry after the time
 *   given (the Retry-After for a 429), still as one coalesced job.
 * - 5xx, timeout, network: retry after {@link UNAVAILABLE_RETRY_MS}. Other refusals: failed, not retried.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { admitNudge } from './nudge-budget.js';
import { CloudMessagingPublisher } from './cloud-messaging-publisher.js';
import { nudgeMessage, type NudgePublisher } from './nudge-publisher.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** A nudge request older than this is dropped, ms: the longest heartbeat interval (spec: 15 to 60 s). */
export const NUDGE_MAX_AGE_MS = 60_000;
/** Wait before retrying after 5xx, timeout or network error, ms. */
export const UNAVAILABLE_RETRY_MS = 2_000;

/** A game's push settings as stored on Game. `cloudApiKey` is a credential: never logged. */
export interface GamePushSettings {
  nudgesEnabled: boolean;
  universeId: string | null;
  cloudApiBaseUrl: string | null;
  cloudApiKey: string | null;
}

/** The game's publisher, or null when its platform has no push configured. */
export type PublisherFactory = (settings: GamePushSettings) => NudgePublisher | null;

/** Default factory: the cloud messaging publisher when the game has a universe id and an API key. */
export const cloudMessagingFor: PublisherFactory = (s) =>
  s.universeId && s.cloudApiKey ? new CloudMessagingPublisher({ universeId: s.universeId, apiKey: s.cloudApiKey, baseUrl: s.cloudApiBaseUrl ?? undefined }) : null;

export type NudgeOutcome =
  | { kind: 'sent'; servers: number; budgetPerMinute: number }
  | { kind: 'skipped'; reason: 'unknown_game' | 'no_push' | 'no_live_servers' | 'stale' }
  | { kind: 'retry'; afterMs: number; reason: 'budget' | 'rate_limited' | 'unavailable' }
  | { kind: 'failed'; status: number; reason: string };

export interface NudgeSenderDeps {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  /** Default {@link cloudMessagingFor}. */
  publisherFor?: PublisherFactory;
}

export class NudgeSender {
  private readonly publisherFor: PublisherFactory;

  constructor(private readonly deps: NudgeSenderDeps) {
    this.publisherFor = deps.publisherFor ?? cloudMessagingFor;
  }

  /**
   * Sends the nudge of `gameId` requested at `requestedAtMs`, at server time `nowMs` (both ms).
   * Never throws for platform answers; a `retry` outcome tells the caller when to call again.
   */
  async send(gameId: string, nowMs: number, requestedAtMs: number): Promise<NudgeOutcome> {
    const settings = await this.deps.db.game.findUnique({
      where: { id: gameId },
      select: { nudgesEnabled: true, universeId: true, cloudApiBaseUrl: true, cloudApiKey: true },
    });
    if (!settings) return { kind: 'skipped', reason: 'unknown_game' };
    const publisher = settings.nudgesEnabled ? this.publisherFor(settings) : null;
    if (!publisher) return { kind: 'skipped', reason: 'no_push' };
    if (nowMs - requestedAtMs > NUDGE_MAX_AGE_MS) return { kind: 'skipped', reason: 'stale' };

    const admission = await admitNudge(this.deps.redis, this.deps.keySpace, gameId, nowMs);
    if (admission.kind === 'no_servers') return { kind: 'skipped', reason: 'no_live_servers' };
    if (admission.kind === 'wait') return { kind: 'retry', afterMs: admission.retryAfterMs, reason: 'budget' };

    const result = await publisher.publish(nudgeMessage(nowMs));
    switch (result.kind) {
      case 'sent':
        return { kind: 'sent', servers: admission.servers, budgetPerMinute: admission.budget };
      case 'rate_limited':
        return { kind: 'retry', afterMs: result.retryAfterMs, reason: 'rate_limited' };
      case 'unavailable':
        return { kind: 'retry', afterMs: UNAVAILABLE_RETRY_MS, reason: 'unavailable' };
      case 'rejected':
        return { kind: 'failed', status: result.status, reason: result.reason };
    }
  }
}
