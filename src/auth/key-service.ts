/**
 * Creating, listing and revoking server keys (the operator side; spec: "the interface through which keys
 * are created and revoked: not shown" — this project's answer is the operator CLI over these functions).
 * Every create and revoke appends an audit row naming the key by prefix only (src/audit/audit-chain.ts).
 */
import argon2 from 'argon2';
import type { Redis } from 'ioredis';
import type { Db } from '../store/prisma.js';
import { generateServerKey } from './server-key.js';
import { keyedDigest, VerifiedDigests } from './verified-digests.js';
import { isScope, type Scope } from './scopes.js';
import { ValidationError, NotFoundError } from '../errors.js';
import { appendAudit } from '../audit/audit-chain.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { KeyRecords } from './key-records.js';

export interface CreatedKey {
  /** The full key `svc_live_<prefix>.<secret>`: returned once, never stored. */
  key: string;
  prefix: string;
  id: string;
  scopes: Scope[];
}

export interface KeyListing {
  prefix: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Parses a comma-separated scope list. @throws {ValidationError} on an unknown or empty list. */
export function parseScopes(list: string): Scope[] {
  const scopes = [...new Set(list.split(',').map((s) => s.trim()).filter(Boolean))];
  const bad = scopes.filter((s) => !isScope(s));
  if (bad.length) throw new ValidationError(`unknown scope(s): ${bad.join(', ')}`);
  if (!scopes.length) throw new ValidationError('at least one scope is required');
  return scopes as Scope[];
}

/**
 * Creates a key for `gameId` with `scopes`; stores the prefix and the argon2id hash of the secret, and,
 * given `digests`, the key's shared verified digest, so the key is never cold on any API process even
 * if wrong secrets flood its prefix before its first use (src/auth/verified-digests.ts); given `records`,
 * the key's and its game's Redis records, so it verifies during a Postgres outage (src/auth/key-records.ts).
 * Redis is written after the Postgres commit: a Redis error then propagates, and the next boot reconcile
 * or first verification writes the records the key missed.
 * @throws {NotFoundError} when the game does not exist.
 */
export async function createKey(db: Db, gameId: string, scopes: Scope[], actor = 'operator', digests?: VerifiedDigests, records?: KeyRecords): Promise<CreatedKey> {
  const game = await db.game.findUnique({ where: { id: gameId } });
  if (!game) throw new NotFoundError(`game ${gameId} not found`);
  const { key, prefix, secret } = generateServerKey();
  const secretHash = await argon2.hash(secret, { type: argon2.argon2id });
  const row = await db.$transaction(async (tx) => {
    const created = await tx.apiKey.create({ data: { gameId, prefix, secretHash, scopes } });
    await appendAudit(tx, { workspaceId: game.workspaceId, gameId, actor, action: 'key.create', keyPrefix: prefix, detail: { scopes } });
    return created;
  });
  await Promise.all([digests?.set(prefix, keyedDigest(secretHash, secret)), records?.putKey(prefix, row), records?.putGame(game)]);
  return { key, prefix, id: row.id, scopes };
}

/** Lists the keys of a game, newest first; never returns secrets or hashes. */
export async function listKeys(db: Db, gameId: string): Promise<KeyListing[]> {
  return db.apiKey.findMany({
    where: { gameId },
    orderBy: { createdAt: 'desc' },
    select: { prefix: true, scopes: true, createdAt: true, lastUsedAt: true, revokedAt: true },
  });
}

/**
 * Revokes the key with `prefix`, marks its Redis record revoked (so a process verifying from Redis during
 * a Postgres outage refuses it too) and tells every API process (Redis pub/sub) to drop it from its
 * verification cache at once. Revoking twice keeps the first revocation time.
 * @throws {NotFoundError} when no key has that prefix.
 */
export async function revokeKey(db: Db, redis: Redis, keySpace: KeySpace, prefix: string, actor = 'operator'): Promise<{ prefix: string; revokedAt: Date }> {
  const row = await db.apiKey.findUnique({ where: { prefix }, include: { game: true } });
  if (!row) throw new NotFoundError(`no key with prefix ${prefix}`);
  let revokedAt = row.revokedAt;
  if (!revokedAt) {
    const now = new Date();
    // Conditional update: of two concurrent revokes only one changes the row and writes the audit.
    const won = await db.$transaction(async (tx) => {
      const n = await tx.apiKey.updateMany({ where: { prefix, revokedAt: null }, data: { revokedAt: now } });
      if (n.count) await appendAudit(tx, { workspaceId: row.game.workspaceId, gameId: row.gameId, actor, action: 'key.revoke', keyPrefix: prefix });
      return n.count === 1;
    });
    revokedAt = won ? now : (await db.apiKey.findUniqueOrThrow({ where: { prefix } })).revokedAt!;
  }
  await new KeyRecords(redis, keySpace).putKey(prefix, { ...row, revokedAt });
  await new VerifiedDigests(redis, keySpace).delete(prefix);
  await publishInvalidation(redis, keySpace, `key:${prefix}`);
  return { prefix, revokedAt };
}

/** Publishes `key:<prefix>` or `game:<gameId>` so every API process drops cached auth data for it. */
export async function publishInvalidation(redis: Redis, keySpace: KeySpace, message: string): Promise<void> {
  await redis.publish(keySpace.global.authChannel(), message);
}
