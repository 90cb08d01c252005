/**
 * The per-workspace blocklist in Redis (`{w:<workspaceId>}:bans`, src/store/keys.ts): every user's
 * active (not lifted) bans, so POST bans/check is answered without a Postgres query (spec: POST
 * bans/check; issue #6 "served from Redis").
 *
 * Postgres stays the record. The write path changes Postgres first, then calls {@link Blocklist.syncUser},
 * which re-reads that user's active bans and stores them. Ordering between concurrent writers is settled
 * by tickets (see src/store/lua/ban-sync.lua): each writer takes a ticket before reading Postgres and an
 * entry is only replaced by one with a higher ticket.
 *
 * When the blocklist is missing (no `built` marker in its meta hash, e.g. after a Redis flush), the first
 * check rebuilds it from Postgres. The rebuild is single-flight per workspace within a process (an
 * in-memory promise) and across processes (a Redis lock; the others wait for the marker, then fall back
 * to rebuilding themselves if the holder died).
 *
 * Expired bans are left in the entries and filtered at read time (ban-decision.ts): expiry needs no
 * job and is exact. They disappear at the user's next sync or the next rebuild.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { BAN_REBUILD_LOCK_MS } from '../store/keys.js';
import { log } from '../log.js';
import type { BanScope, BlocklistEntry } from './ban-types.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { banLookupCall } from '../store/lua/ban-lookup.js';
import { banSyncCall } from '../store/lua/ban-sync.js';

/** Users written per script call during a rebuild (bounds the Lua argument size and the time Redis is busy). */
const REBUILD_CHUNK = 500;
/** How often a process waiting for another one's rebuild looks for the marker, ms. */
const WAIT_POLL_MS = 25;

/** The Ban columns the blocklist needs. */
export interface BanRow {
  id: string;
  externalId: string;
  scope: string;
  gameId: string | null;
  externalServerId: string | null;
  expiresAt: Date | null;
  reason: string;
}

const BAN_ROW_SELECT = { id: true, externalId: true, scope: true, gameId: true, externalServerId: true, expiresAt: true, reason: true } as const;

/** The blocklist form of a Ban row. */
export function toEntry(row: BanRow): BlocklistEntry {
  return {
    id: row.id,
    scope: row.scope as BanScope,
    gameId: row.gameId,
    externalServerId: row.externalServerId,
    expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    reason: row.reason,
  };
}

/** Parses a stored entry `<ticket>|<json>`; [] for a tombstone, a missing or a malformed value. */
export function parseStored(value: string | null | undefined): BlocklistEntry[] {
  if (!value) return [];
  const bar = value.indexOf('|');
  const json = bar < 0 ? '' : value.slice(bar + 1);
  if (!json) return [];
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? (parsed as BlocklistEntry[]) : [];
  } catch {
    return [];
  }
}

export class Blocklist {
  private readonly rebuilding = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: AppRedis,
    private readonly db: Db,
    private readonly keySpace: KeySpace,
  ) {}

  /**
   * The user's blocklist entries in `workspaceId` (active when written; the caller checks expiry and
   * scope). One Redis round trip; rebuilds the workspace's blocklist first when it is missing.
   * @throws whatever Redis or Postgres throw when unreachable (the route answers 5xx; clients fail open or closed).
   */
  async lookup(workspaceId: string, externalId: string): Promise<BlocklistEntry[]> {
    const keys = this.keySpace.workspace(workspaceId);
    for (let attempt = 0; ; attempt++) {
      const call = banLookupCall(keys, { externalId });
      const [built, stored] = (await this.redis.runScript('banLookup', call.keys, call.args)) as [number, string | null];
      if (built === 1) return parseStored(stored);
      // A flush right after our rebuild could loop forever; one rebuild per lookup is enough.
      if (attempt > 0) return this.fromDb(workspaceId, externalId);
      await this.ensureBuilt(workspaceId);
    }
  }

  /**
   * Re-reads the active bans of one user from Postgres and stores them (call after every change to that
   * user's bans, once Postgres has committed it). Safe to call concurrently and repeatedly.
   */
  async syncUser(workspaceId: string, externalId: string): Promise<void> {
    const keys = this.keySpace.workspace(workspaceId);
    const ticket = await this.redis.hincrby(keys.banMeta(), 'seq', 1);
    const rows = await this.activeRows(workspaceId, externalId);
    const call = banSyncCall(keys, { ticket, markBuilt: false, entries: [externalId, rows.length ? JSON.stringify(rows.map(toEntry)) : ''] });
    await this.redis.runScript('banSync', call.keys, call.args);
  }

  /** Makes the next lookup rebuild the workspace's blocklist from Postgres (after a failed sync). */
  async invalidate(workspaceId: string): Promise<void> {
    await this.redis.hdel(this.keySpace.workspace(workspaceId).banMeta(), 'built');
  }

  /**
   * Rebuilds the workspace's blocklist from Postgres unless another rebuild (in this process or, via
   * the lock, in another) is already doing it; resolves once the blocklist is marked built.
   */
  ensureBuilt(workspaceId: string): Promise<void> {
    let pending = this.rebuilding.get(workspaceId);
    if (!pending) {
      pending = this.rebuildOnce(workspaceId).finally(() => this.rebuilding.delete(workspaceId));
      this.rebuilding.set(workspaceId, pending);
    }
    return pending;
  }

  /**
   * Writes every user's active bans of the workspace from Postgres, turns users that no longer have any
   * into tombstones, and marks the blocklist built. Correct when run concurrently with writes and with
   * other rebuilds (tickets); returns the number of users with active bans.
   */
  async rebuild(workspaceId: string): Promise<number> {
    const keys = this.keySpace.workspace(workspaceId);
    const ticket = await this.redis.hincrby(keys.banMeta(), 'seq', 1);
    const rows = await this.activeRows(workspaceId);
    const byUser = new Map<string, BlocklistEntry[]>();
    for (const row of rows) {
      const list = byUser.get(row.externalId) ?? [];
      list.push(toEntry(row));
      byUser.set(row.externalId, list);
    }
    const pairs: string[] = [];
    for (const [user, entries] of byUser) pairs.push(user, JSON.stringify(entries));
    // Users stored but without an active ban any more (lifted while the marker was missing, say).
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(keys.banList(), cursor, 'COUNT', 1000);
      cursor = next;
      for (let i = 0; i < flat.length; i += 2) {
        const user = flat[i]!;
        if (!byUser.has(user) && !flat[i + 1]!.endsWith('|')) pairs.push(user, '');
      }
    } while (cursor !== '0');

    const chunk = REBUILD_CHUNK * 2;
    for (let i = 0; i < pairs.length || i === 0; i += chunk) {
      const last = i + chunk >= pairs.length;
      const call = banSyncCall(keys, { ticket, markBuilt: last, entries: pairs.slice(i, i + chunk) });
      await this.redis.runScript('banSync', call.keys, call.args);
    }
    // A workspace's first check builds an empty blocklist: routine. A rebuild with bans in it follows a flush: worth a line.
    log.log(byUser.size ? 'info' : 'debug', 'blocklist rebuilt', { workspaceId, users: byUser.size, bans: rows.length });
    return byUser.size;
  }

  private async rebuildOnce(workspaceId: string): Promise<void> {
    const keys = this.keySpace.workspace(workspaceId);
    const token = randomUUID();
    const locked = (await this.redis.set(keys.banRebuildLock(), token, 'PX', BAN_REBUILD_LOCK_MS, 'NX')) === 'OK';
    if (!locked) {
      const until = Date.now() + BAN_REBUILD_LOCK_MS;
      while (Date.now() < until) {
        await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
        if (await this.redis.hexists(keys.banMeta(), 'built')) return;
      }
      log.warn('blocklist rebuild by another process did not finish; rebuilding here', { workspaceId });
    }
    try {
      await this.rebuild(workspaceId);
    } finally {
      if (locked && (await this.redis.get(keys.banRebuildLock())) === token) await this.redis.del(keys.banRebuildLock());
    }
  }

  /** Fallback when the blocklist vanished again right after a rebuild: answer this one call from Postgres. */
  private async fromDb(workspaceId: string, externalId: string): Promise<BlocklistEntry[]> {
    log.warn('blocklist missing right after a rebuild; answering from Postgres', { workspaceId });
    return (await this.activeRows(workspaceId, externalId)).map(toEntry);
  }

  /** Not-lifted bans of the workspace (of one user when given) that have not expired yet. */
  private activeRows(workspaceId: string, externalId?: string): Promise<BanRow[]> {
    return this.db.ban.findMany({
      where: {
        workspaceId,
        ...(externalId === undefined ? {} : { externalId }),
        liftedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
      },
      select: BAN_ROW_SELECT,
      orderBy: { issuedAt: 'asc' },
    });
  }
}
