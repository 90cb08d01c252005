/**
 * The moderator accounts a process has looked at, by id: role, workspace, name, disabled, credential
 * epoch. Every console request consults it, so it is held in process and dropped on the published
 * `moderator:<id>` invalidation (src/adapters/console/console-auth.ts wires the channel), with a short TTL as
 * the safety net should a message be lost.
 */
import { LRUCache } from 'lru-cache';
import type { Db } from '../../store/prisma.js';
import type { ModeratorRole } from './console-permissions.js';

/** What authorization needs of an account. */
export interface ModeratorAccount {
  id: string;
  workspaceId: string;
  name: string;
  role: ModeratorRole;
  disabled: boolean;
  credentialEpoch: number;
}

/** How long an account is reused without an invalidation, ms (the safety net, not the revocation path). */
export const ACCOUNT_TTL_MS = 10_000;
const MAX_ACCOUNTS = 10_000;

/** In-process cache of accounts over Postgres. */
export class ModeratorDirectory {
  private readonly cache = new LRUCache<string, ModeratorAccount | false>({ max: MAX_ACCOUNTS, ttl: ACCOUNT_TTL_MS });
  private readonly loads = new Map<string, Promise<ModeratorAccount | null>>();

  constructor(private readonly db: Db) {}

  /** The account `id`, or null when there is none. Postgres errors propagate. */
  async get(id: string): Promise<ModeratorAccount | null> {
    const known = this.cache.get(id);
    if (known !== undefined) return known || null;
    let loading = this.loads.get(id);
    if (!loading) {
      loading = this.load(id).finally(() => this.loads.delete(id));
      this.loads.set(id, loading);
    }
    return loading;
  }

  /** Forgets account `id` (published change), or everything with `null` (lost subscription). */
  invalidate(id: string | null): void {
    if (id === null) this.cache.clear();
    else this.cache.delete(id);
  }

  private async load(id: string): Promise<ModeratorAccount | null> {
    const row = await this.db.moderator.findUnique({
      where: { id },
      select: { id: true, workspaceId: true, name: true, role: true, disabledAt: true, credentialEpoch: true },
    });
    const account: ModeratorAccount | false = row
      ? { id: row.id, workspaceId: row.workspaceId, name: row.name, role: row.role as ModeratorRole, disabled: row.disabledAt !== null, credentialEpoch: row.credentialEpoch }
      : false;
    this.cache.set(id, account);
    return account || null;
  }
}
