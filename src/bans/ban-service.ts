/**
 * Bans, the operator side (issue #6 "Model and management"; spec: What the service does, item 5).
 * A ban belongs to one workspace and targets one user (externalId) with scope `server` (one
 * externalServerId of one game), `game` (one registered game) or `workspace` (every game of it);
 * expiresAt null = permanent. Lifting keeps the row (history).
 *
 * Every change goes to Postgres first, with a `ban.create` / `ban.lift` audit row in the same transaction
 * (src/audit/audit-chain.ts), then:
 * - the workspace's Redis blocklist is re-synced for the user (blocklist.ts), which is what POST
 *   bans/check reads;
 * - on creation, a user who is online on a covered server gets a `kick` command with the ban reason;
 * - every covered game that bans natively gets a queued, debounced platform write
 *   (platform-write-queue.ts); server bans are not written to the platform (a platform restriction
 *   covers the whole universe).
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { log } from '../log.js';
import { appendAudit } from '../audit/audit-chain.js';
import { isBanScope, type BanScope } from './ban-types.js';
import { isUnexpired } from './ban-decision.js';
import type { Blocklist } from './blocklist.js';
import type { PlatformWriteQueue, QueuedWrite } from './platform-write-queue.js';
import type { Ban } from '@prisma/client';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { locateUserCall } from '../store/lua/locate-user.js';

/** Longest ban duration accepted, seconds (10 years); longer is a permanent ban. */
export const MAX_BAN_SECONDS = 10 * 365 * 24 * 3600;
/** Longest reason, characters. */
export const MAX_REASON_LENGTH = 500;
const MAX_ID_LENGTH = 128;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Issues a kick command for one online user (the commands concern, src/commands/); resolves to the
 * command id.
 */
export type KickIssuer = (kick: { gameId: string; externalServerId: string; externalId: string; reason: string; issuedBy: string }) => Promise<{ commandId: string }>;

export interface CreateBanInput {
  workspaceId: string;
  externalId: string;
  scope: string;
  /** Required for `game` and `server`, refused for `workspace`. */
  gameId?: string | null;
  /** Required for `server`, refused otherwise. */
  externalServerId?: string | null;
  /** Whole seconds from now, 1 to {@link MAX_BAN_SECONDS}; null or absent = permanent. */
  expiresInSeconds?: number | null;
  reason: string;
  /** Who issued it (e.g. `cli:alice`). */
  issuedBy: string;
}

/** A ban as operators see it (the Ban row); times are Dates (the CLI prints them as RFC 3339). */
export interface BanView extends Omit<Ban, 'scope'> {
  scope: BanScope;
  /** `active`, `expired` or `lifted`, at the time of the call. */
  status: 'active' | 'expired' | 'lifted';
}

/** One platform write caused by a ban, as `bans list` shows it. */
export interface PlatformWriteView {
  id: string;
  gameId: string;
  active: boolean;
  durationSeconds: number | null;
  /** `queued`, `written`, `failed` or `superseded`. */
  state: string;
  attempts: number;
  lastError: string | null;
  queuedAt: Date;
  writtenAt: Date | null;
}

/** A kick issued because of a new ban (or why it could not be). */
export interface KickResult {
  gameId: string;
  externalServerId: string;
  commandId: string | null;
  error?: string;
}

export interface BanServiceDeps {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  blocklist: Blocklist;
  /** Needed once any game of the workspace bans natively; without it such a change is refused. */
  platformWrites?: PlatformWriteQueue | null;
  /** Without it no kick is issued (the ban still applies at the next connect). */
  kick?: KickIssuer | null;
}


/** The operator view of a Ban row at `nowMs`. */
export function toBanView(row: Ban, nowMs: number): BanView {
  const status = row.liftedAt ? 'lifted' : isUnexpired({ expiresAt: row.expiresAt?.getTime() ?? null }, nowMs) ? 'active' : 'expired';
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    externalId: row.externalId,
    scope: row.scope as BanScope,
    gameId: row.gameId,
    externalServerId: row.externalServerId,
    reason: row.reason,
    issuedBy: row.issuedBy,
    issuedAt: row.issuedAt,
    expiresAt: row.expiresAt,
    liftedAt: row.liftedAt,
    liftedBy: row.liftedBy,
    status,
  };
}

function requireText(value: string | null | undefined, what: string, max: number): string {
  const v = (value ?? '').trim();
  if (!v) throw new ValidationError(`${what} is required`);
  if (v.length > max) throw new ValidationError(`${what} is longer than ${max} characters`);
  return v;
}

/**
 * Bans of a workspace at server time `nowMs`, newest first, lifted and expired ones included unless
 * `activeOnly` (the history), each with the platform writes it caused (newest first).
 * @throws {NotFoundError} unknown workspace.
 */
export async function listBans(db: Db, filter: { workspaceId: string; externalId?: string; activeOnly?: boolean }, nowMs = Date.now()): Promise<(BanView & { platformWrites: PlatformWriteView[] })[]> {
  const workspace = UUID_RE.test(filter.workspaceId) ? await db.workspace.findUnique({ where: { id: filter.workspaceId }, select: { id: true } }) : null;
  if (!workspace) throw new NotFoundError(`workspace ${filter.workspaceId} not found`);
  const rows = await db.ban.findMany({
    where: {
      workspaceId: workspace.id,
      ...(filter.externalId !== undefined ? { externalId: filter.externalId } : {}),
      ...(filter.activeOnly ? { liftedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date(nowMs) } }] } : {}),
    },
    orderBy: [{ issuedAt: 'desc' }, { id: 'asc' }],
    include: {
      platformWrites: {
        orderBy: [{ queuedAt: 'desc' }, { id: 'asc' }],
        select: { id: true, gameId: true, active: true, durationSeconds: true, state: true, attempts: true, lastError: true, queuedAt: true, writtenAt: true },
      },
    },
  });
  return rows.map((r) => ({ ...toBanView(r, nowMs), platformWrites: r.platformWrites }));
}

export class BanService {
  constructor(private readonly deps: BanServiceDeps) {}

  /**
   * Creates a ban at server time `nowMs` (ms), syncs the blocklist, kicks the user from covered servers
   * they are on, and queues platform writes for covered games that ban natively.
   * @throws {ValidationError} bad scope, missing or superfluous game/server, ids that are not UUIDs,
   *   empty or long reason or externalId, expiresInSeconds not an integer in 1..{@link MAX_BAN_SECONDS}.
   * @throws {NotFoundError} unknown workspace, or a game not in that workspace.
   * @throws Error when the ban is stored but the blocklist could not be updated (message says so; the
   *   blocklist is then rebuilt from Postgres on the next check).
   */
  async create(input: CreateBanInput, nowMs = Date.now()): Promise<{ ban: BanView; kicks: KickResult[]; platformWrites: QueuedWrite[] }> {
    const { db } = this.deps;
    const scope = input.scope;
    if (!isBanScope(scope)) throw new ValidationError(`scope must be server, game or workspace (got "${scope}")`);
    const externalId = requireText(input.externalId, 'user (externalId)', MAX_ID_LENGTH);
    const reason = requireText(input.reason, 'reason', MAX_REASON_LENGTH);
    const issuedBy = requireText(input.issuedBy, 'issuedBy', MAX_ID_LENGTH);
    const gameId = input.gameId ?? null;
    for (const [what, id] of [['workspace', input.workspaceId], ['game', gameId]] as const) {
      if (id !== null && !UUID_RE.test(id)) throw new ValidationError(`${what} id must be a UUID`);
    }
    const externalServerId = input.externalServerId?.trim() || null;
    if (scope === 'workspace' && gameId) throw new ValidationError('a workspace ban covers every game: do not name a game');
    if (scope !== 'workspace' && !gameId) throw new ValidationError(`a ${scope} ban needs a game`);
    if (scope === 'server' && !externalServerId) throw new ValidationError('a server ban needs the externalServerId');
    if (scope !== 'server' && externalServerId) throw new ValidationError('only a server ban names a server');
    if (externalServerId && externalServerId.length > MAX_ID_LENGTH) throw new ValidationError(`externalServerId is longer than ${MAX_ID_LENGTH} characters`);
    const seconds = input.expiresInSeconds ?? null;
    if (seconds !== null && (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_BAN_SECONDS)) {
      throw new ValidationError(`expires-in must be a whole number of seconds from 1 to ${MAX_BAN_SECONDS}`);
    }

    const workspace = await db.workspace.findUnique({ where: { id: input.workspaceId }, select: { id: true } });
    if (!workspace) throw new NotFoundError(`workspace ${input.workspaceId} not found`);
    if (gameId) {
      const game = await db.game.findFirst({ where: { id: gameId, workspaceId: workspace.id }, select: { id: true } });
      if (!game) throw new NotFoundError(`game ${gameId} not found in workspace ${workspace.id}`);
    }
    const games = await this.coveredGames(workspace.id, scope, gameId);
    const native = this.nativeGames(scope, games);

    const row = await db.$transaction(async (tx) => {
      const created = await tx.ban.create({
        data: {
          workspaceId: workspace.id,
          externalId,
          scope,
          gameId,
          externalServerId,
          reason,
          issuedBy,
          issuedAt: new Date(nowMs),
          expiresAt: seconds === null ? null : new Date(nowMs + seconds * 1000),
        },
      });
      await appendAudit(tx, {
        workspaceId: workspace.id,
        gameId,
        actor: issuedBy,
        action: 'ban.create',
        detail: { banId: created.id, externalId, scope, externalServerId, reason, expiresAt: created.expiresAt?.toISOString() ?? null },
      }, nowMs);
      return created;
    });
    await this.syncBlocklist(workspace.id, externalId, row.id);
    const kicks = await this.kickOnline(games.map((g) => g.id), row, issuedBy);
    const platformWrites = await this.queuePlatformWrites(native, externalId, row.id, nowMs);
    return { ban: toBanView(row, nowMs), kicks, platformWrites };
  }

  /**
   * Lifts ban `banId` (keeps the row: liftedAt, liftedBy), syncs the blocklist and queues platform
   * writes. Lifting a lifted ban changes nothing and reports the first lift.
   * @throws {NotFoundError} unknown ban. @throws {ValidationError} empty liftedBy.
   */
  async lift(banId: string, liftedBy: string, nowMs = Date.now()): Promise<{ ban: BanView; alreadyLifted: boolean; platformWrites: QueuedWrite[] }> {
    const { db } = this.deps;
    const by = requireText(liftedBy, 'liftedBy', MAX_ID_LENGTH);
    const existing = UUID_RE.test(banId) ? await db.ban.findUnique({ where: { id: banId } }) : null;
    if (!existing) throw new NotFoundError(`ban ${banId} not found`);
    if (existing.liftedAt) return { ban: toBanView(existing, nowMs), alreadyLifted: true, platformWrites: [] };
    const native = this.nativeGames(existing.scope as BanScope, await this.coveredGames(existing.workspaceId, existing.scope as BanScope, existing.gameId));
    // Conditional update: of two concurrent lifts, one wins and the other reports it.
    const updated = await db.$transaction(async (tx) => {
      const n = await tx.ban.updateMany({ where: { id: banId, liftedAt: null }, data: { liftedAt: new Date(nowMs), liftedBy: by } });
      if (n.count) {
        await appendAudit(tx, { workspaceId: existing.workspaceId, gameId: existing.gameId, actor: by, action: 'ban.lift', detail: { banId, externalId: existing.externalId, scope: existing.scope } }, nowMs);
      }
      return n;
    });
    const row = await db.ban.findUniqueOrThrow({ where: { id: banId } });
    if (!updated.count) return { ban: toBanView(row, nowMs), alreadyLifted: true, platformWrites: [] };
    await this.syncBlocklist(row.workspaceId, row.externalId, row.id);
    const platformWrites = await this.queuePlatformWrites(native, row.externalId, row.id, nowMs);
    return { ban: toBanView(row, nowMs), alreadyLifted: false, platformWrites };
  }

  /**
   * Brings the blocklist in step after a committed change. When that fails, the workspace's blocklist is
   * marked for a rebuild from Postgres (best effort) and the caller hears that the change is stored.
   */
  private async syncBlocklist(workspaceId: string, externalId: string, banId: string): Promise<void> {
    try {
      await this.deps.blocklist.syncUser(workspaceId, externalId);
    } catch (err) {
      const marked = await this.deps.blocklist.invalidate(workspaceId).then(() => true, () => false);
      throw new Error(
        `the change to ban ${banId} is stored, but the Redis blocklist could not be updated (${err instanceof Error ? err.message : String(err)}); ` +
          (marked ? 'it will be rebuilt from Postgres on the next check' : 'Redis is unreachable: checks fail until it is back, then run this command again'),
        { cause: err },
      );
    }
  }

  /** The games a ban of `scope` covers, with their native-ban flag. */
  private async coveredGames(workspaceId: string, scope: BanScope, gameId: string | null): Promise<{ id: string; workspaceId: string; nativeBans: boolean }[]> {
    const select = { id: true, workspaceId: true, nativeBans: true } as const;
    if (scope === 'workspace') return this.deps.db.game.findMany({ where: { workspaceId }, select, orderBy: { createdAt: 'asc' } });
    return this.deps.db.game.findMany({ where: { id: gameId ?? undefined, workspaceId }, select });
  }

  /**
   * The covered games a ban of `scope` is written to: those that ban natively, none for a server ban.
   * Checked before anything is stored, so a process without a queue refuses instead of half-applying.
   */
  private nativeGames(scope: BanScope, games: { id: string; workspaceId: string; nativeBans: boolean }[]) {
    const native = scope === 'server' ? [] : games.filter((g) => g.nativeBans);
    if (native.length && !this.deps.platformWrites) throw new Error('a covered game bans natively but no platform write queue is configured');
    return native;
  }

  private async queuePlatformWrites(games: { id: string; workspaceId: string }[], externalId: string, banId: string, nowMs: number): Promise<QueuedWrite[]> {
    const out: QueuedWrite[] = [];
    for (const game of games) out.push(await this.deps.platformWrites!.enqueue(game, externalId, banId, nowMs));
    return out;
  }

  /** Kicks the banned user from every covered server they are on now (user locations: src/store/lua/lib/user-location.ts). */
  private async kickOnline(gameIds: string[], ban: Ban, issuedBy: string): Promise<KickResult[]> {
    const kick = this.deps.kick;
    if (!kick || !gameIds.length) return [];
    // one script per game: each game's keys are in their own Cluster slot
    const located = await Promise.all(gameIds.map((id) => {
      const call = locateUserCall(this.deps.keySpace.game(id), { externalId: ban.externalId });
      return this.deps.redis.runScript('locateUser', call.keys, call.args);
    }));
    const results: KickResult[] = [];
    for (const [i, gameId] of gameIds.entries()) {
      const server = located[i];
      if (typeof server !== 'string' || !server) continue;
      if (ban.scope === 'server' && server !== ban.externalServerId) continue;
      try {
        const { commandId } = await kick({ gameId, externalServerId: server, externalId: ban.externalId, reason: ban.reason, issuedBy });
        results.push({ gameId, externalServerId: server, commandId });
      } catch (err) {
        // The ban is committed and applies at the next connect; a failed kick is reported, not fatal.
        const error = err instanceof Error ? err.message : String(err);
        log.warn('kick on ban failed', { banId: ban.id, gameId, err: error });
        results.push({ gameId, externalServerId: server, commandId: null, error });
      }
    }
    return results;
  }
}
