/**
 * `admin keys create|list|revoke`: server keys `svc_live_<prefix>.<secret>` (spec: Resources › Server
 * key). The full key is printed once, by `create`; only the prefix and an argon2id hash are stored, and no
 * other command can show the secret. Create and revoke write audit rows (in key-service).
 */
import { createKey, listKeys, parseScopes, revokeKey } from '../../../auth/key-service.js';
import { VerifiedDigests } from '../../../auth/verified-digests.js';
import { KeyRecords } from '../../../auth/key-records.js';
import { SCOPES } from '../../../auth/scopes.js';
import { UsageError, type AdminCommand } from '../command.js';
import { formatDate, formatFields, formatTable } from '../format.js';
import { requireGame } from './games.js';

/**
 * `keys create --game G --scopes a,b` → `{ key, prefix, gameId, scopes }`. In readable mode the key is
 * the only stdout line besides labels, and stderr warns that it is not shown again.
 * @throws {ValidationError} unknown or empty scopes. @throws {NotFoundError} unknown game.
 */
const create: AdminCommand = {
  group: 'keys',
  name: 'create',
  summary: 'Create a server key for a game (the key is shown once)',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    scopes: { type: 'string', required: true, valueName: 'LIST', description: `comma-separated: ${SCOPES.join(',')}` },
  },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const scopes = parseScopes(ctx.args.string('scopes'));
    const created = await createKey(ctx.db(), gameId, scopes, ctx.actor, new VerifiedDigests(ctx.redis(), ctx.keySpace), new KeyRecords(ctx.redis(), ctx.keySpace));
    ctx.notice('warning: this is the only time the full key is shown; store it now (a lost key is revoked and replaced).');
    return {
      json: { key: created.key, prefix: created.prefix, gameId, scopes: created.scopes },
      text: formatFields([['key', created.key], ['prefix', created.prefix], ['game', gameId], ['scopes', created.scopes.join(',')]]),
    };
  },
};

/**
 * `keys list --game G` → `{ keys: [{ prefix, scopes, createdAt, lastUsedAt, revokedAt }] }`, newest
 * first; never a secret or hash. lastUsedAt lags by up to one liveness sweep.
 * @throws {NotFoundError} unknown game.
 */
const list: AdminCommand = {
  group: 'keys',
  name: 'list',
  summary: 'List the keys of a game (prefix, scopes, created, last used, revoked)',
  options: { game: { type: 'string', required: true, valueName: 'ID', description: 'game id' } },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    await requireGame(ctx.db(), gameId);
    const keys = (await listKeys(ctx.db(), gameId)).map((k) => ({
      prefix: k.prefix,
      scopes: k.scopes,
      createdAt: k.createdAt,
      lastUsedAt: k.lastUsedAt,
      revokedAt: k.revokedAt,
    }));
    return {
      json: { keys },
      text: formatTable(
        ['PREFIX', 'SCOPES', 'CREATED', 'LAST USED', 'REVOKED'],
        keys.map((k) => [k.prefix, k.scopes.join(','), k.createdAt, k.lastUsedAt, k.revokedAt]),
        '(no keys)',
      ),
    };
  },
};

/**
 * `keys revoke --prefix P` → `{ prefix, revokedAt }`; idempotent (a second revoke reports the first
 * time). Every API process drops the key from its cache at once (published invalidation).
 * @throws {UsageError} when given a full key instead of its prefix (the secret is not echoed).
 * @throws {NotFoundError} no key has that prefix.
 */
const revoke: AdminCommand = {
  group: 'keys',
  name: 'revoke',
  summary: 'Revoke a key by its prefix (takes effect on every API process at once)',
  destructive: 'revokes the key on every API process',
  options: { prefix: { type: 'string', required: true, valueName: 'PREFIX', description: 'the public key prefix (never the full key)' } },
  async run(ctx) {
    let prefix = ctx.args.string('prefix').trim();
    if (prefix.includes('.')) throw new UsageError('--prefix takes the key prefix only, never the full key');
    if (prefix.startsWith('svc_live_')) prefix = prefix.slice('svc_live_'.length);
    const revoked = await revokeKey(ctx.db(), ctx.redis(), ctx.keySpace, prefix, ctx.actor);
    return {
      json: { prefix: revoked.prefix, revokedAt: revoked.revokedAt },
      text: `key ${revoked.prefix} revoked at ${formatDate(revoked.revokedAt)}`,
    };
  },
};

export const keyCommands: AdminCommand[] = [create, list, revoke];
