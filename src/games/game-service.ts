/**
 * Workspaces and games, the operator side (spec: a game belongs to a workspace; its heartbeat interval is
 * 15–60 s, default 20, and the response dictates it). Changing a game tells API processes to drop cached
 * key data so the new interval is served at once.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../store/prisma.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { appendAudit } from '../audit/audit-chain.js';
import { publishInvalidation } from '../auth/key-service.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { KeyRecords } from '../auth/key-records.js';

export const MIN_INTERVAL_SECONDS = 15;
export const MAX_INTERVAL_SECONDS = 60;
export const DEFAULT_INTERVAL_SECONDS = 20;

/** Creates a workspace; returns its id. @throws {ValidationError} on an empty name. */
export async function createWorkspace(db: Db, name: string): Promise<{ id: string; name: string }> {
  if (!name.trim()) throw new ValidationError('workspace name is required');
  return db.workspace.create({ data: { name: name.trim() }, select: { id: true, name: true } });
}

/** @throws {ValidationError} unless 15 ≤ seconds ≤ 60 and an integer. */
export function checkInterval(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < MIN_INTERVAL_SECONDS || seconds > MAX_INTERVAL_SECONDS) {
    throw new ValidationError(`heartbeat interval must be an integer from ${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS} seconds`);
  }
  return seconds;
}

/**
 * Creates a game in `workspaceId` with a heartbeat interval in seconds (default 20).
 * @throws {NotFoundError} unknown workspace. @throws {ValidationError} bad name or interval.
 */
export async function createGame(
  db: Db,
  input: { workspaceId: string; name: string; heartbeatIntervalSeconds?: number },
  actor = 'operator',
): Promise<{ id: string; name: string; heartbeatIntervalSeconds: number }> {
  if (!input.name.trim()) throw new ValidationError('game name is required');
  const interval = checkInterval(input.heartbeatIntervalSeconds ?? DEFAULT_INTERVAL_SECONDS);
  const ws = await db.workspace.findUnique({ where: { id: input.workspaceId } });
  if (!ws) throw new NotFoundError(`workspace ${input.workspaceId} not found`);
  return db.$transaction(async (tx) => {
    const game = await tx.game.create({
      data: { workspaceId: ws.id, name: input.name.trim(), heartbeatIntervalSeconds: interval },
      select: { id: true, name: true, heartbeatIntervalSeconds: true },
    });
    await appendAudit(tx, { workspaceId: ws.id, gameId: game.id, actor, action: 'game.create', detail: { name: game.name, heartbeatIntervalSeconds: interval } });
    return game;
  });
}

/**
 * Changes a game's heartbeat interval (seconds), audits it, updates the game's Redis record
 * (src/auth/key-records.ts) and invalidates cached key data on every API process.
 * @throws {NotFoundError} unknown game. @throws {ValidationError} interval outside 15–60.
 */
export async function setHeartbeatInterval(db: Db, redis: Redis, keySpace: KeySpace, gameId: string, seconds: number, actor = 'operator'): Promise<void> {
  checkInterval(seconds);
  const game = await db.game.findUnique({ where: { id: gameId } });
  if (!game) throw new NotFoundError(`game ${gameId} not found`);
  const updated = await db.$transaction(async (tx) => {
    const row = await tx.game.update({ where: { id: gameId }, data: { heartbeatIntervalSeconds: seconds } });
    await appendAudit(tx, { workspaceId: game.workspaceId, gameId, actor, action: 'game.set-interval', detail: { from: game.heartbeatIntervalSeconds, to: seconds } });
    return row;
  });
  await new KeyRecords(redis, keySpace).putGame(updated);
  await publishInvalidation(redis, keySpace, `game:${gameId}`);
}
