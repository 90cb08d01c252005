/**
 * A game's settings in the console (issue #31, item 3: "admin: … game settings"), through the same
 * functions as `admin games set-interval` and `admin games set-platform` (src/games/game-service.ts,
 * src/games/platform-settings.ts), so validation, the audit row and the refresh of the game's cached
 * record on every API process are the CLI's:
 *
 * - `PATCH /console/api/games/:gameId/settings` body {@link GameSettingsBody} (at least one member) →
 *   `{ settings: GameSettingsView, serverTime }`. Permission `games.settings` (admin); the members
 *   `cloudApiBaseUrl` and `cloudApiKey` also need `operator.only`, so a workspace admin who sends one gets
 *   403 `forbidden` naming it and nothing changes. The cloud API key is never returned (`cloudApiKeySet`).
 *
 * Errors: 400 `invalid_request` (an unknown member, an interval outside 15–60 s, an empty body, a
 * malformed base URL, native bans without universe, URL and key); 403 `forbidden`;
 * 404 `unknown_game` (also a game of a workspace the caller has no account in).
 */
import { Router } from 'express';
import { NotFoundError } from '../../../errors.js';
import { setHeartbeatInterval } from '../../../games/game-service.js';
import { describePlatformSettings, setPlatformSettings, type PlatformSettingsChange, type PlatformSettingsView } from '../../../games/platform-settings.js';
import { KeyRecords } from '../../../auth/key-records.js';
import { OPERATOR_GAME_SETTINGS } from '../../../auth/moderators/console-permissions.js';
import { compileValidator } from '../../../schemas/validator.js';
import { gameSettingsSchema, type GameSettingsBody } from '../console-schemas.js';
import type { ConsoleServices } from '../console-services.js';
import { authorize, gameAccess } from './console-request.js';

const validate = compileValidator<GameSettingsBody>(gameSettingsSchema);
const PLATFORM_FIELDS = ['platform', 'universeId', 'nativeBans', 'cloudApiBaseUrl', 'cloudApiKey'] as const;

/** A game's settings as the console shows them (never the cloud API key). */
export interface GameSettingsView extends PlatformSettingsView {
  /** Seconds, 15–60. */
  heartbeatIntervalSeconds: number;
}

/** The settings route of the module comment; mounted under /console/api. */
export function gameSettingsApi(services: ConsoleServices): Router {
  const router = Router();

  router.patch('/games/:gameId/settings', async (req, res) => {
    const body = validate(req.body);
    const { game, actor } = await gameAccess(req, res, services.db, 'games.settings');
    const notFound = () => new NotFoundError(`game ${game.id} not found`, 'unknown_game');
    for (const [field, permission] of Object.entries(OPERATOR_GAME_SETTINGS)) {
      if (field in body) authorize(res, game.workspaceId, permission, notFound);
    }
    const change: PlatformSettingsChange = {};
    for (const field of PLATFORM_FIELDS) if (body[field] !== undefined) Object.assign(change, { [field]: body[field] });
    // Platform settings first: their checks (URL, native bans' prerequisites) run inside the call, while
    // the interval is already range-checked by the schema, so a refused request changes nothing.
    if (Object.keys(change).length) await setPlatformSettings(services.db, game.id, change, actor, new KeyRecords(services.redis, services.keySpace));
    if (body.heartbeatIntervalSeconds !== undefined) {
      await setHeartbeatInterval(services.db, services.redis, services.keySpace, game.id, body.heartbeatIntervalSeconds, actor);
    }
    const row = await services.db.game.findUniqueOrThrow({ where: { id: game.id } });
    const settings: GameSettingsView = { ...describePlatformSettings(row), heartbeatIntervalSeconds: row.heartbeatIntervalSeconds };
    res.json({ settings, serverTime: new Date().toISOString() });
  });

  return router;
}
