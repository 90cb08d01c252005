/**
 * In-process cache of each game's door definitions and policies, keyed by the doors version
 * (src/doors/doors-version.ts). A request passes the version it read from Redis; the cached entry serves
 * it when it was loaded at that version or later, otherwise the game is reloaded from Postgres
 * (single-flight per game). Versions only rise, so an entry is never older than what the request saw.
 *
 * Stored policies that fail validation (written around the operator tools) fail closed: an invalid
 * allow is ignored, an invalid deny applies without conditions.
 */
import type { Db } from '../store/prisma.js';
import { NotFoundError } from '../errors.js';
import { log } from '../log.js';
import type { DoorDef, ForcedState, PolicyConditions, PolicyDef, SubjectType } from './door-types.js';
import { compileWindow } from './time-window.js';
import { comparePolicies } from './evaluate.js';
import { parseConditions } from './policy-conditions.js';

/** One game's doors at one version. */
export interface CatalogEntry {
  gameId: string;
  workspaceId: string;
  /** Game.doorsVersion the entry was loaded at. */
  version: number;
  /** Door key → definition. */
  doors: ReadonlyMap<string, DoorDef>;
  /** Door keys in ascending order (bulk answers and the manifest list doors in this order). */
  keys: readonly string[];
  /** The manifest's `doors` array, serialised once per version. */
  manifestJson: string;
}

type DoorRow = {
  id: string;
  key: string;
  name: string;
  kind: string;
  defaultEffect: string;
  failMode: string;
  forcedState: string;
  policies: { id: string; effect: string; priority: number; createdAt: Date; subjectType: string; subjectIds: string[]; includeDescendants: boolean; conditions: unknown }[];
};

function toPolicy(gameId: string, row: DoorRow['policies'][number]): PolicyDef | null {
  let conditions: PolicyConditions;
  try {
    conditions = parseConditions(row.conditions);
  } catch (err) {
    log.warn('door policy with invalid conditions', { gameId, policyId: row.id, err: String(err) });
    if (row.effect !== 'deny') return null;
    conditions = {};
  }
  return {
    id: row.id,
    effect: row.effect === 'allow' ? 'allow' : 'deny',
    priority: row.priority,
    createdAtMs: row.createdAt.getTime(),
    subjectType: row.subjectType as SubjectType,
    subjectIds: new Set(row.subjectIds),
    includeDescendants: row.includeDescendants,
    conditions: { ...conditions, timeWindow: conditions.timeWindow && compileWindow(conditions.timeWindow) },
  };
}

function toDoor(gameId: string, row: DoorRow): DoorDef {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    kind: row.kind,
    defaultEffect: row.defaultEffect === 'allow' ? 'allow' : ('deny'),
    failMode: row.failMode === 'open' ? 'open' : ('closed'),
    forcedState: (['locked', 'unlocked'].includes(row.forcedState) ? row.forcedState : 'auto') as ForcedState,
    policies: row.policies.map((p) => toPolicy(gameId, p)).filter((p): p is PolicyDef => p !== null).sort(comparePolicies),
  };
}

export class DoorCatalog {
  private readonly entries = new Map<string, CatalogEntry>();
  private readonly inflight = new Map<string, Promise<CatalogEntry>>();

  constructor(private readonly db: Db) {}

  /**
   * The doors of `gameId` at `minVersion` or later (null: whatever Postgres holds now).
   * @throws {NotFoundError} 404 `unknown_game` when the game no longer exists.
   */
  async get(gameId: string, minVersion: number | null): Promise<CatalogEntry> {
    const cached = this.entries.get(gameId);
    if (cached && minVersion !== null && cached.version >= minVersion) return cached;
    let entry = await this.sharedLoad(gameId);
    // A shared load that started before the version was raised may be too old for this caller: once more.
    if (minVersion !== null && entry.version < minVersion) entry = await this.sharedLoad(gameId);
    if (minVersion !== null && entry.version < minVersion) {
      // Postgres commits before Redis is raised, so this means Redis holds another database's state.
      log.warn('doors version in Redis is ahead of Postgres', { gameId, redis: minVersion, postgres: entry.version });
    }
    return entry;
  }

  private sharedLoad(gameId: string): Promise<CatalogEntry> {
    let pending = this.inflight.get(gameId);
    if (!pending) {
      pending = this.load(gameId).finally(() => this.inflight.delete(gameId));
      this.inflight.set(gameId, pending);
    }
    return pending;
  }

  private async load(gameId: string): Promise<CatalogEntry> {
    const game = await this.db.game.findUnique({
      where: { id: gameId },
      select: {
        workspaceId: true,
        doorsVersion: true,
        doors: {
          select: {
            id: true, key: true, name: true, kind: true, defaultEffect: true, failMode: true, forcedState: true,
            policies: { select: { id: true, effect: true, priority: true, createdAt: true, subjectType: true, subjectIds: true, includeDescendants: true, conditions: true } },
          },
        },
      },
    });
    if (!game) {
      this.entries.delete(gameId);
      throw new NotFoundError(`game ${gameId} not found`, 'unknown_game');
    }
    const doors = new Map<string, DoorDef>();
    for (const row of game.doors) doors.set(row.key, toDoor(gameId, row));
    const keys = [...doors.keys()].sort();
    const manifest = keys.map((k) => {
      const d = doors.get(k)!;
      return { key: d.key, name: d.name, kind: d.kind, defaultEffect: d.defaultEffect, failMode: d.failMode, forcedState: d.forcedState };
    });
    const entry: CatalogEntry = { gameId, workspaceId: game.workspaceId, version: game.doorsVersion, doors, keys, manifestJson: JSON.stringify(manifest) };
    const current = this.entries.get(gameId);
    if (!current || current.version <= entry.version) this.entries.set(gameId, entry);
    return entry;
  }
}
