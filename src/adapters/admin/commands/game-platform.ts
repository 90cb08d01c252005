/**
 * `admin games set-platform`: a game's platform settings (src/games/platform-settings.ts), among them
 * whether the platform enforces bans itself (issue #6). Kept apart from games.ts so the bans concern can
 * change it alone. The cloud API key is never printed (output says only whether one is set) and never
 * taken from argv: it comes from stdin (`--cloud-api-key-stdin`) or `GIS_CLOUD_API_KEY`.
 */
import { setPlatformSettings, type PlatformSettingsChange } from '../../../games/platform-settings.js';
import { KeyRecords } from '../../../auth/key-records.js';
import { UsageError, type AdminCommand } from '../command.js';
import { formatFields } from '../format.js';
import { readSecret, retiredSecretOption, secretOptions, type SecretSource } from '../secret-input.js';

/** The platform cloud API key: piped to `--cloud-api-key-stdin` or in `GIS_CLOUD_API_KEY`. */
export const CLOUD_API_KEY: SecretSource = { option: 'cloud-api-key', envVar: 'GIS_CLOUD_API_KEY', label: 'platform cloud API key' };

/**
 * `games set-platform --game G [--platform P] [--universe U] [--cloud-api-base-url URL]
 * [--cloud-api-key-stdin] [--native-bans | --no-native-bans]` → `{ id, platform, universeId,
 * cloudApiBaseUrl, cloudApiKeySet, nativeBans }`. Settings not given keep their value; the key is also
 * changed when `GIS_CLOUD_API_KEY` is set.
 * @throws {UsageError} no setting given, the retired `--cloud-api-key`, or an empty key (exit 2).
 * @throws {ValidationError} malformed URL, empty value, or native bans without universe, URL and key.
 * @throws {NotFoundError} unknown game.
 */
const setPlatform: AdminCommand = {
  group: 'games',
  name: 'set-platform',
  summary: 'Set a game\'s platform, cloud API settings and whether the platform enforces bans',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    platform: { type: 'string', valueName: 'NAME', description: 'platform name (free text, e.g. roblox)' },
    universe: { type: 'string', valueName: 'ID', description: 'the platform universe/experience id' },
    'cloud-api-base-url': { type: 'string', valueName: 'URL', description: 'origin of the platform cloud API, e.g. https://apis.example.com' },
    ...secretOptions(CLOUD_API_KEY),
    'native-bans': { type: 'boolean', negatable: true, description: 'the platform enforces bans: ban changes are written to it (--no-native-bans: not)' },
  },
  retiredOptions: retiredSecretOption(CLOUD_API_KEY),
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const change: PlatformSettingsChange = {
      platform: ctx.args.optionalString('platform'),
      universeId: ctx.args.optionalString('universe'),
      cloudApiBaseUrl: ctx.args.optionalString('cloud-api-base-url'),
      cloudApiKey: await readSecret(ctx, CLOUD_API_KEY),
      nativeBans: ctx.args.optionalFlag('native-bans'),
    };
    for (const k of Object.keys(change) as (keyof PlatformSettingsChange)[]) if (change[k] === undefined) delete change[k];
    if (!Object.keys(change).length) throw new UsageError('give at least one setting to change');
    const view = await setPlatformSettings(ctx.db(), gameId, change, ctx.actor, new KeyRecords(ctx.redis(), ctx.keySpace));
    return {
      json: { ...view },
      text: formatFields([
        ['game', view.id],
        ['platform', view.platform],
        ['universe', view.universeId],
        ['cloud API base URL', view.cloudApiBaseUrl],
        ['cloud API key', view.cloudApiKeySet ? 'set' : 'not set'],
        ['native bans', view.nativeBans ? 'yes' : 'no'],
      ]),
    };
  },
};

export const gamePlatformCommands: AdminCommand[] = [setPlatform];
