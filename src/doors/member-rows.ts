/**
 * The member's own rows of a door subject context (issue #5: Member, Assignment, Shift, MemberRecord),
 * read for many users in one SQL statement. A fleet booting at once sends a door check for every player
 * that joins; one statement per user then queues on the Postgres pool (the 800 ms pool wait ran out
 * 13,160 times in a 1,000-server boot, docs/benchmarks.md) while one statement per batch does not.
 *
 * Loads asked for in the same turn of the event loop, for the same workspace, share one statement sent
 * at the end of that turn (`setImmediate`); a batch is sent at once when it reaches {@link MAX_BATCH}
 * users. A load never joins a statement already sent, so every answer is read after the request asked
 * for it (no stale rows after an invalidation).
 */
import type { Db } from '../store/prisma.js';

/** One member's rows; times in ms since the epoch. */
export interface MemberRow {
  external_id: string;
  joined_ms: number;
  /** Position ids of the member's assignments; null for none. */
  positions: string[] | null;
  /** A shift with no `closedAt`. */
  clocked_in: boolean;
  /** Records not revoked and not expired at the batch's earliest `nowMs`; null for none. */
  records: { type: string; issued: number; expires: number | null }[] | null;
}

/** Users per statement at most. */
export const MAX_BATCH = 200;

interface Batch {
  workspaceId: string;
  /** The earliest `nowMs` of the batch, epoch ms: later asks filter expired records again at their own time. */
  nowMs: number;
  waiting: Map<string, { resolve: (row: MemberRow | undefined) => void; reject: (err: unknown) => void }[]>;
}

/**
 * Batched reader of {@link MemberRow}s, one per API process (owned by `DoorAccessService`). Holds only the
 * batches not yet sent; a failed statement rejects its loads and leaves nothing behind.
 */
export class MemberRows {
  /** Per workspace, the batch still open to new loads. */
  private readonly open = new Map<string, Batch>();

  constructor(private readonly db: Db) {}

  /**
   * The rows of `externalId` in `workspaceId` (undefined when the user has no Member row), with the
   * records not expired at `nowMs` (epoch ms) or at an earlier `nowMs` of the same batch.
   * @throws on Postgres failure (every load of the batch rejects with the same error).
   */
  load(workspaceId: string, externalId: string, nowMs: number): Promise<MemberRow | undefined> {
    let batch = this.open.get(workspaceId);
    if (!batch) {
      const created: Batch = { workspaceId, nowMs, waiting: new Map() };
      this.open.set(workspaceId, created);
      setImmediate(() => this.send(created));
      batch = created;
    }
    batch.nowMs = Math.min(batch.nowMs, nowMs);
    const answer = new Promise<MemberRow | undefined>((resolve, reject) => {
      const list = batch.waiting.get(externalId);
      if (list) list.push({ resolve, reject });
      else batch.waiting.set(externalId, [{ resolve, reject }]);
    });
    if (batch.waiting.size >= MAX_BATCH) this.send(batch);
    return answer;
  }

  /** Closes the batch to new loads and reads its rows; safe to call twice (the second call does nothing). */
  private send(batch: Batch): void {
    if (this.open.get(batch.workspaceId) !== batch) return;
    this.open.delete(batch.workspaceId);
    const externalIds = [...batch.waiting.keys()];
    this.read(batch.workspaceId, externalIds, batch.nowMs).then(
      (rows) => {
        const byId = new Map(rows.map((r) => [r.external_id, r]));
        for (const [id, list] of batch.waiting) for (const w of list) w.resolve(byId.get(id));
      },
      (err: unknown) => {
        for (const list of batch.waiting.values()) for (const w of list) w.reject(err);
      },
    );
  }

  private read(workspaceId: string, externalIds: string[], nowMs: number): Promise<MemberRow[]> {
    return this.db.$queryRaw<MemberRow[]>`
      SELECT
        m."externalId" AS external_id,
        (extract(epoch FROM m."joinedAt") * 1000)::float8 AS joined_ms,
        (SELECT array_agg(a."positionId"::text) FROM "Assignment" a WHERE a."memberId" = m.id) AS positions,
        EXISTS (SELECT 1 FROM "Shift" s WHERE s."memberId" = m.id AND s."closedAt" IS NULL) AS clocked_in,
        (SELECT json_agg(json_build_object(
            'type', r.type,
            'issued', (extract(epoch FROM r."issuedAt") * 1000)::float8,
            'expires', (extract(epoch FROM r."expiresAt") * 1000)::float8))
          FROM "MemberRecord" r
          WHERE r."memberId" = m.id AND NOT r.revoked AND (r."expiresAt" IS NULL OR r."expiresAt" > ${new Date(nowMs)})) AS records
      FROM "Member" m
      WHERE m."workspaceId" = ${workspaceId}::uuid AND m."externalId" = ANY(${externalIds}::text[])`;
  }
}
