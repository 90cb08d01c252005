/**
 * Turning urgent nudges on or off for a game (Game.nudgesEnabled; spec: Events › Urgent nudge). Nudges go
 * through the game's platform settings (universe id, cloud API key and base URL, set with
 * `admin games set-platform`), so they can only be turned on once a universe and a key are stored.
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { appendAudit } from '../audit/audit-chain.js';
import { DEFAULT_CLOUD_API_BASE_URL } from './cloud-messaging-publisher.js';
import { NUDGE_TOPIC } from './nudge-publisher.js';

/** What a game's nudges look like after a change; never the API key. */
export interface NudgeSettingsView {
  gameId: string;
  nudgesEnabled: boolean;
  universeId: string | null;
  /** Where nudges are published (the game's base URL, or the platform default). */
  cloudApiBaseUrl: string;
  topic: string;
}

/**
 * Sets `gameId`'s nudgesEnabled and writes an audit row `game.set-nudges` naming `actor`.
 * @throws {NotFoundError} unknown game.
 * @throws {ValidationError} `push_not_configured` when enabling without a universe id and API key.
 */
export async function setNudges(db: Db, gameId: string, enabled: boolean, actor: string): Promise<NudgeSettingsView> {
  const game = await db.game.findUnique({
    where: { id: gameId },
    select: { id: true, workspaceId: true, nudgesEnabled: true, universeId: true, cloudApiBaseUrl: true, cloudApiKey: true },
  });
  if (!game) throw new NotFoundError(`game ${gameId} not found`);
  if (enabled && (!game.universeId || !game.cloudApiKey)) {
    throw new ValidationError('set the game\'s universe and cloud API key first (admin games set-platform)', 'push_not_configured');
  }
  await db.$transaction(async (tx) => {
    await tx.game.update({ where: { id: game.id }, data: { nudgesEnabled: enabled } });
    await appendAudit(tx, { workspaceId: game.workspaceId, gameId: game.id, actor, action: 'game.set-nudges', detail: { from: game.nudgesEnabled, to: enabled } });
  });
  return {
    gameId: game.id,
    nudgesEnabled: enabled,
    universeId: game.universeId,
    cloudApiBaseUrl: game.cloudApiBaseUrl ?? DEFAULT_CLOUD_API_BASE_URL,
    topic: NUDGE_TOPIC,
  };
}
