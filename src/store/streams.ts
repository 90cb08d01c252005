/**
 * Consumer-group reading of the per-game Redis streams, shared by the flushers.
 *
 * Durability contract: an entry is XACKed and XDELeted only after its rows are committed in Postgres.
 * A flusher killed in between leaves the entry pending; the next run claims it (XAUTOCLAIM after
 * `minIdleMs`; the same consumer re-reads its own at once) and re-inserts, and the Postgres unique
 * constraints turn the repeat into a no-op.
 */
import type { Redis } from 'ioredis';

export interface StreamEntry {
  id: string;
  fields: Record<string, string>;
}

type RawEntry = [id: string, fields: string[]];

function toEntry([id, flat]: RawEntry): StreamEntry {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
  return { id, fields };
}

/** The entries of a reply that still exist: a pending entry deleted meanwhile comes back with no fields. */
function liveEntries(raw: RawEntry[] | undefined): StreamEntry[] {
  return (raw ?? []).filter((e) => e && e[1]).map(toEntry);
}

export class StreamConsumer {
  private readonly groups = new Set<string>();
  /**
   * Streams where this consumer may hold pending entries: its last read returned entries not yet
   * {@link done}, or failed (a reply lost to a timeout still delivered its entries). Only these are
   * re-read first, so an idle game's stream costs no extra command.
   */
  private readonly mayHavePending = new Set<string>();

  /**
   * @param group consumer group name (one per flusher kind)
   * @param consumer this process's consumer name (host-pid)
   * @param minIdleMs how long an entry must sit unacked before another consumer takes it over (ms)
   */
  constructor(
    /** The connection it reads with; flushers also write their dead letters through it (src/store/dead-letters.ts). */
    readonly redis: Redis,
    readonly group: string,
    readonly consumer: string,
    private readonly minIdleMs = 15_000,
  ) {}

  /** Creates the group at the start of the stream (id 0, so nothing already there is skipped). */
  private async ensureGroup(key: string): Promise<void> {
    if (this.groups.has(key)) return;
    try {
      await this.redis.xgroup('CREATE', key, this.group, '0', 'MKSTREAM');
    } catch (err) {
      if (!String(err).includes('BUSYGROUP')) throw err;
    }
    this.groups.add(key);
  }

  /**
   * Up to `count` entries of `key` for this consumer: first its own pending ones (when it may hold some),
   * then entries abandoned by a dead consumer, then new ones. Returns [] when there is nothing to do.
   *
   * Own pending entries come first because a read whose reply was lost (the client's command timeout
   * under load) still delivered its entries: reading past them would apply later entries first, e.g. a
   * session's close before its open.
   */
  async read(key: string, count: number): Promise<StreamEntry[]> {
    await this.ensureGroup(key);
    try {
      if (this.mayHavePending.has(key)) {
        const own = (await this.redis.xreadgroup('GROUP', this.group, this.consumer, 'COUNT', count, 'STREAMS', key, '0')) as [string, RawEntry[]][] | null;
        const mine = liveEntries(own?.[0]?.[1]);
        if (mine.length) return mine;
      }
      this.mayHavePending.add(key);
      const claimed = (await this.redis.xautoclaim(key, this.group, this.consumer, this.minIdleMs, '0-0', 'COUNT', count)) as [string, RawEntry[]];
      const stale = liveEntries(claimed[1]);
      if (stale.length) return stale;
      const res = (await this.redis.xreadgroup('GROUP', this.group, this.consumer, 'COUNT', count, 'STREAMS', key, '>')) as [string, RawEntry[]][] | null;
      const fresh = res?.[0]?.[1].map(toEntry) ?? [];
      if (!fresh.length) this.mayHavePending.delete(key);
      return fresh;
    } catch (err) {
      if (String(err).includes('NOGROUP')) {
        this.groups.delete(key);
        this.mayHavePending.delete(key);
        return [];
      }
      throw err;
    }
  }

  /** Acknowledges and deletes entries whose rows are committed: all that {@link read} returned. */
  async done(key: string, ids: string[]): Promise<void> {
    if (!ids.length) return;
    await this.redis.multi().xack(key, this.group, ...ids).xdel(key, ...ids).exec();
    this.mayHavePending.delete(key);
  }

  /** Entries in `key` not yet flushed (pending or unread). */
  async backlog(key: string): Promise<number> {
    return this.redis.xlen(key);
  }
}
