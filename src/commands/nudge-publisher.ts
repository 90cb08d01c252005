/**
 * The publisher interface of urgent nudges (spec: Events › Urgent nudge): an out-of-band message telling a
 * game's live servers to heartbeat early. One topic per game, at most {@link MAX_NUDGE_BYTES} bytes, no
 * command data (commands are only ever fetched through the heartbeat). Delivery is not guaranteed and
 * nothing depends on it. A platform implements {@link NudgePublisher}; a game whose platform has no push
 * gets no publisher and so no nudge (src/commands/nudge-sender.ts).
 */

/** Topic the servers of a game subscribe to; the game's universe holds exactly this one nudge topic. */
export const NUDGE_TOPIC = 'gis-nudge';
/** Platform messaging payload limit (spec: Limits), bytes. */
export const MAX_NUDGE_BYTES = 1024;

/** What one publish attempt came to. Implementations never throw for HTTP or network outcomes. */
export type PublishResult =
  | { kind: 'sent' }
  /** The platform answered 429; try again after `retryAfterMs`. */
  | { kind: 'rate_limited'; retryAfterMs: number }
  /** 5xx, timeout or network error: may succeed later. */
  | { kind: 'unavailable'; reason: string }
  /** Any other refusal (bad key, unknown universe, ...): a setup problem, retrying will not help. */
  | { kind: 'rejected'; status: number; reason: string };

/** Publishes nudges on one game's topic. */
export interface NudgePublisher {
  /** Sends `message` (≤ {@link MAX_NUDGE_BYTES} bytes) to every subscribed server of the game. */
  publish(message: string): Promise<PublishResult>;
}

/**
 * The nudge message: a kind, a format version and the server time. It carries no command data, so a
 * leaked or spoofed nudge can at most cause one extra heartbeat.
 */
export function nudgeMessage(nowMs: number): string {
  return JSON.stringify({ kind: 'nudge', v: 1, at: new Date(nowMs).toISOString() });
}
