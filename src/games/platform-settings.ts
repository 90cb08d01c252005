/**
 * A game's platform settings (Game.platform, universeId, cloudApiBaseUrl, cloudApiKey, nativeBans): what
 * the service needs to drive the platform's own cloud API, e.g. user restrictions for games that ban
 * natively (issue #6). No game API field depends on them (spec: What the service does, item 6).
 *
 * cloudApiKey is a credential: it is stored, used in request headers, and never returned by
 * {@link describePlatformSettings}, logged or written to the audit trail.
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { appendAudit } from '../audit/audit-chain.js';
import type { KeyRecords } from '../auth/key-records.js';

/** Per-game settings of the platform's cloud API (Game.universeId, cloudApiBaseUrl, cloudApiKey). */
export interface PlatformSettings {
  universeId: string;
  /** Origin (and optional path prefix) of the cloud API, e.g. `https://apis.example.com`. */
  cloudApiBaseUrl: string;
  cloudApiKey: string;
}

/** What may be changed; absent fields keep their value, null clears a text field. */
export interface PlatformSettingsChange {
  platform?: string | null;
  universeId?: string | null;
  cloudApiBaseUrl?: string | null;
  cloudApiKey?: string | null;
  nativeBans?: boolean;
}

/** A game's platform settings without the credential. */
export interface PlatformSettingsView {
  id: string;
  platform: string | null;
  universeId: string | null;
  cloudApiBaseUrl: string | null;
  /** Whether an API key is stored (the key itself is never shown). */
  cloudApiKeySet: boolean;
  nativeBans: boolean;
}

interface GamePlatformColumns {
  id: string;
  universeId: string | null;
  cloudApiBaseUrl: string | null;
  cloudApiKey: string | null;
  nativeBans: boolean;
  platform: string | null;
}

/** The cloud API settings of `game` when it bans natively and all of them are set; null otherwise. */
export function nativeBanSettings(game: GamePlatformColumns): PlatformSettings | null {
  if (!game.nativeBans || !game.universeId || !game.cloudApiBaseUrl || !game.cloudApiKey) return null;
  return { universeId: game.universeId, cloudApiBaseUrl: game.cloudApiBaseUrl, cloudApiKey: game.cloudApiKey };
}

/** The settings of `game` as shown to operators (no credential). */
export function describePlatformSettings(game: GamePlatformColumns): PlatformSettingsView {
  return {
    id: game.id,
    platform: game.platform,
    universeId: game.universeId,
    cloudApiBaseUrl: game.cloudApiBaseUrl,
    cloudApiKeySet: Boolean(game.cloudApiKey),
    nativeBans: game.nativeBans,
  };
}

function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError(`cloud API base URL "${url}" is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new ValidationError('cloud API base URL must be http(s)');
  if (parsed.search || parsed.hash) throw new ValidationError('cloud API base URL takes no query or fragment');
  return url.replace(/\/+$/, '');
}

/**
 * Changes the platform settings of `gameId` and writes an audit row (`game.set-platform`, without the key);
 * given `records`, updates the game's Redis record after the commit (src/auth/key-records.ts; the cloud
 * API key is never copied there).
 * @throws {NotFoundError} unknown game. @throws {ValidationError} a malformed base URL, an empty value,
 *   or nativeBans on without universe, base URL and API key all set.
 */
export async function setPlatformSettings(db: Db, gameId: string, change: PlatformSettingsChange, actor = 'operator', records?: KeyRecords): Promise<PlatformSettingsView> {
  const game = await db.game.findUnique({ where: { id: gameId } });
  if (!game) throw new NotFoundError(`game ${gameId} not found`);
  for (const [field, value] of Object.entries(change)) {
    if (typeof value === 'string' && !value.trim()) throw new ValidationError(`${field} must not be empty`);
  }
  const data = {
    ...(change.platform !== undefined ? { platform: change.platform?.trim() ?? null } : {}),
    ...(change.universeId !== undefined ? { universeId: change.universeId?.trim() ?? null } : {}),
    ...(change.cloudApiBaseUrl !== undefined ? { cloudApiBaseUrl: change.cloudApiBaseUrl === null ? null : checkUrl(change.cloudApiBaseUrl.trim()) } : {}),
    ...(change.cloudApiKey !== undefined ? { cloudApiKey: change.cloudApiKey?.trim() ?? null } : {}),
    ...(change.nativeBans !== undefined ? { nativeBans: change.nativeBans } : {}),
  };
  const next = { ...game, ...data };
  if (next.nativeBans && !nativeBanSettings(next)) {
    throw new ValidationError('native bans need the universe id, the cloud API base URL and the cloud API key');
  }
  const updated = await db.$transaction(async (tx) => {
    const row = await tx.game.update({ where: { id: gameId }, data });
    const detail = describePlatformSettings(row);
    await appendAudit(tx, { workspaceId: row.workspaceId, gameId, actor, action: 'game.set-platform', detail: { ...detail, cloudApiKeyChanged: change.cloudApiKey !== undefined } });
    return row;
  });
  await records?.putGame(updated);
  return describePlatformSettings(updated);
}
