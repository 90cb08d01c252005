/**
 * The audit trail as a hash chain per workspace (issue #21, "Tamper-evident audit"). Every moderation and
 * key action (keys, games, doors and policies, commands, bans) is appended with {@link appendAudit}: the
 * row carries its position `seq`, the `hash` of the row before it (`prevHash`), the SHA-256 of its own
 * canonical content (`contentHash`) and `hash = SHA-256(prevHash + contentHash)` (src/audit/
 * audit-canonical.ts). {@link verifyAuditChain} recomputes every hash and names the first row that was
 * altered, deleted or inserted.
 *
 * Serialisation: an append locks the workspace's `AuditChainHead` row (`INSERT … ON CONFLICT DO UPDATE`,
 * which creates it on the first append and takes its row lock either way) inside the caller's
 * transaction, so concurrent appends to one workspace queue behind each other until the holder commits or
 * rolls back, and a rolled-back action leaves no link behind. Appends to different workspaces do not wait
 * for each other.
 *
 * What it proves: anyone who edits, deletes or inserts rows with SQL breaks the chain at that row unless
 * they also recompute every later hash and the head. SHA-256 needs no secret, so someone with write access
 * to the whole table can rewrite a suffix consistently; `admin audit verify` prints the head (`seq`,
 * `hash`) and accepts `--anchor SEQ:HASH`, so a head recorded elsewhere (a ticket, a log shipped off the
 * machine) pins everything up to it.
 */
import { Prisma } from '@prisma/client';
import type { Db } from '../store/prisma.js';
import { AUDIT_GENESIS_HASH, CANONICAL_COLUMNS, contentHashOf, linkHash, type CanonicalFields } from './audit-canonical.js';

/** One action to record. `detail` must be JSON (no secrets: keys appear by prefix only). */
export interface AuditEntry {
  /** The chain the row joins. */
  workspaceId: string;
  gameId?: string | null;
  /** Who acted, e.g. `cli:alice`, `console:bob`. */
  actor: string;
  /** What they did, e.g. `key.create`, `command.issue`, `ban.lift`, `door.force`. */
  action: string;
  keyPrefix?: string | null;
  detail?: Prisma.InputJsonValue | null;
}

/** The link an append wrote. */
export interface AppendedAudit {
  id: bigint;
  seq: bigint;
  hash: string;
}

/**
 * Appends `entry` to its workspace's chain inside the caller's transaction `tx` (which must be an
 * interactive transaction: the head's row lock is what serialises appends, and it is held until `tx`
 * ends). `createdAt` is `nowMs` (ms since the epoch, stored to the millisecond).
 * @returns the row's id, seq and hash.
 * @throws whatever Postgres throws (the caller's transaction then rolls back, row and head together).
 */
export async function appendAudit(tx: Prisma.TransactionClient, entry: AuditEntry, nowMs = Date.now()): Promise<AppendedAudit> {
  const [head] = await tx.$queryRaw<{ seq: string; hash: string }[]>`
    INSERT INTO "AuditChainHead" ("workspaceId", "seq", "hash", "updatedAt")
    VALUES (${entry.workspaceId}::uuid, 0, ${AUDIT_GENESIS_HASH}, now())
    ON CONFLICT ("workspaceId") DO UPDATE SET "workspaceId" = EXCLUDED."workspaceId"
    RETURNING "seq"::text AS "seq", "hash"`;
  const seq = BigInt(head!.seq) + 1n;
  const detail = entry.detail === undefined || entry.detail === null ? null : JSON.stringify(entry.detail);
  const [row] = await tx.$queryRaw<(CanonicalFields & { id: string })[]>`
    INSERT INTO "AuditLog" ("workspaceId", "gameId", "actor", "action", "keyPrefix", "detail", "createdAt", "seq", "prevHash", "contentHash", "hash")
    VALUES (${entry.workspaceId}::uuid, ${entry.gameId ?? null}::uuid, ${entry.actor}, ${entry.action}, ${entry.keyPrefix ?? null}, ${detail}::jsonb,
            (${new Date(nowMs).toISOString()}::timestamptz AT TIME ZONE 'UTC'), ${seq.toString()}::bigint, ${head!.hash}, '', '')
    RETURNING "id"::text AS "id", ${CANONICAL_COLUMNS}`;
  const contentHash = contentHashOf(row!);
  const hash = linkHash(head!.hash, contentHash);
  await tx.$executeRaw`UPDATE "AuditLog" SET "contentHash" = ${contentHash}, "hash" = ${hash} WHERE "id" = ${row!.id}::bigint`;
  await tx.$executeRaw`UPDATE "AuditChainHead" SET "seq" = ${seq.toString()}::bigint, "hash" = ${hash}, "updatedAt" = now() WHERE "workspaceId" = ${entry.workspaceId}::uuid`;
  return { id: BigInt(row!.id), seq, hash };
}

/** {@link appendAudit} in a transaction of its own, for a caller that has nothing else to commit with it. */
export function recordAudit(db: Db, entry: AuditEntry, nowMs = Date.now()): Promise<AppendedAudit> {
  return db.$transaction((tx) => appendAudit(tx, entry, nowMs));
}

/** How a chain is broken. */
export type AuditProblemKind = 'altered' | 'deleted' | 'inserted';

/** The first place a chain is broken. `rowId`/`seq` name the row (for `deleted`: the row after the gap, or null at the end). */
export interface AuditProblem {
  kind: AuditProblemKind;
  rowId: string | null;
  seq: string | null;
  message: string;
}

/** Result of {@link verifyAuditChain}. Ids and seqs are decimal strings (bigint). */
export interface AuditVerification {
  workspaceId: string;
  ok: boolean;
  /** Rows read (up to and including the first broken one). */
  rowsChecked: number;
  /** The chain head as stored (null when the workspace never had an audit row). */
  head: { seq: string; hash: string } | null;
  /** The first problem; null when `ok`. */
  problem: AuditProblem | null;
}

/** A link recorded elsewhere that the chain must still contain: `--anchor SEQ:HASH`. */
export interface AuditAnchor {
  seq: string;
  hash: string;
}

type ChainRow = CanonicalFields & { id: string; prevHash: string; contentHash: string; hash: string };

/** Rows read per query while verifying. */
const VERIFY_BATCH = 2000;
/** Longest a verification may hold its snapshot, ms. */
const VERIFY_TIMEOUT_MS = 300_000;

/**
 * Recomputes the chain of `workspaceId` in one consistent snapshot (REPEATABLE READ, so appends running
 * meanwhile are simply not seen) and returns the first problem, walking rows by seq:
 *
 * - **altered**: a row's canonical content no longer gives its `contentHash`, its `hash` is not
 *   SHA-256(prevHash + contentHash), or a self-consistent row's hash no longer matches the `prevHash`
 *   the next row recorded (the row was edited and rehashed), or it does not carry an anchored hash;
 * - **deleted**: seqs are missing (a row whose `prevHash` is not the previous row's hash, after a gap),
 *   or the head says the chain is longer than its last row;
 * - **inserted**: a row that is not a link: beyond the head, or skipped by the next row's `prevHash`
 *   (which names the row before it).
 *
 * @throws whatever Postgres throws.
 */
export async function verifyAuditChain(db: Db, workspaceId: string, anchor?: AuditAnchor): Promise<AuditVerification> {
  return db.$transaction(
    async (tx) => {
      const [headRow] = await tx.$queryRaw<{ seq: string; hash: string }[]>`
        SELECT "seq"::text AS "seq", "hash" FROM "AuditChainHead" WHERE "workspaceId" = ${workspaceId}::uuid`;
      const head = headRow ?? null;
      const headSeq = head ? BigInt(head.seq) : 0n;
      const result = (problem: AuditProblem | null, rowsChecked: number): AuditVerification => ({ workspaceId, ok: problem === null, rowsChecked, head, problem });

      let checked = 0;
      let expectedSeq = 1n;
      let expectedPrev = AUDIT_GENESIS_HASH;
      let prev: ChainRow | null = null;
      let anchorSeen = false;
      let after = { seq: '0', id: '0' };
      for (;;) {
        const rows = await tx.$queryRaw<ChainRow[]>`
          SELECT "id"::text AS "id", "prevHash", "contentHash", "hash", ${CANONICAL_COLUMNS}
          FROM "AuditLog"
          WHERE "workspaceId" = ${workspaceId}::uuid AND ("seq", "id") > (${after.seq}::bigint, ${after.id}::bigint)
          -- qualified: the select list re-exports seq and id as text, and ORDER BY would sort those
          ORDER BY "AuditLog"."seq", "AuditLog"."id"
          LIMIT ${VERIFY_BATCH}`;
        for (const row of rows) {
          checked += 1;
          const seq = BigInt(row.seq);
          const at = `row ${row.id} (seq ${row.seq})`;
          if (seq > headSeq) {
            return result({ kind: 'inserted', rowId: row.id, seq: row.seq, message: `${at} is beyond the chain head (seq ${headSeq}): it was not appended through the chain` }, checked);
          }
          if (row.prevHash !== expectedPrev) {
            if (prev && row.prevHash === prev.prevHash) {
              return result({ kind: 'inserted', rowId: prev.id, seq: prev.seq, message: `row ${prev.id} (seq ${prev.seq}) is not part of the chain: the next row, ${row.id}, links to the row before it` }, checked);
            }
            if (seq > expectedSeq) {
              const gap = seq - expectedSeq === 1n ? `seq ${expectedSeq}` : `seqs ${expectedSeq} to ${seq - 1n}`;
              return result({ kind: 'deleted', rowId: row.id, seq: row.seq, message: `${gap} deleted: missing between ${prev ? `row ${prev.id}` : 'the start'} and ${at}` }, checked);
            }
            if (seq < expectedSeq) {
              return result({ kind: 'inserted', rowId: row.id, seq: row.seq, message: `${at} repeats seq ${row.seq}: it was not appended through the chain` }, checked);
            }
            if (prev && isSelfConsistent(row)) {
              return result({ kind: 'altered', rowId: prev.id, seq: prev.seq, message: `row ${prev.id} (seq ${prev.seq}) was altered and rehashed: its hash no longer matches the prevHash recorded by ${at}` }, checked);
            }
            return result({ kind: 'altered', rowId: row.id, seq: row.seq, message: `${at} was altered: its prevHash is not the hash of the row before it` }, checked);
          }
          const contentHash = contentHashOf(row);
          if (contentHash !== row.contentHash) {
            return result({ kind: 'altered', rowId: row.id, seq: row.seq, message: `${at} was altered: its content no longer gives its contentHash` }, checked);
          }
          if (linkHash(row.prevHash, row.contentHash) !== row.hash) {
            return result({ kind: 'altered', rowId: row.id, seq: row.seq, message: `${at} was altered: its hash is not SHA-256(prevHash + contentHash)` }, checked);
          }
          if (anchor && row.seq === anchor.seq) {
            anchorSeen = true;
            if (row.hash !== anchor.hash) {
              return result({ kind: 'altered', rowId: row.id, seq: row.seq, message: `${at} does not carry the anchored hash ${anchor.hash}: the chain was rewritten up to here` }, checked);
            }
          }
          prev = row;
          expectedSeq = seq + 1n;
          expectedPrev = row.hash;
        }
        if (rows.length < VERIFY_BATCH) break;
        const last = rows[rows.length - 1]!;
        after = { seq: last.seq, id: last.id };
      }
      const lastSeq = expectedSeq - 1n;
      if (headSeq > lastSeq) {
        const gap = headSeq - lastSeq === 1n ? `seq ${headSeq}` : `seqs ${lastSeq + 1n} to ${headSeq}`;
        return result({ kind: 'deleted', rowId: null, seq: String(lastSeq + 1n), message: `${gap} deleted: the chain head is at seq ${headSeq} but the last row ${prev ? `is ${prev.id} (seq ${prev.seq})` : 'is missing'}` }, checked);
      }
      if (head && prev && head.hash !== prev.hash) {
        return result({ kind: 'altered', rowId: prev.id, seq: prev.seq, message: `row ${prev.id} (seq ${prev.seq}) does not carry the hash the chain head recorded` }, checked);
      }
      if (anchor && !anchorSeen) {
        return result({ kind: 'deleted', rowId: null, seq: anchor.seq, message: `no row carries the anchored seq ${anchor.seq}` }, checked);
      }
      return result(null, checked);
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead, timeout: VERIFY_TIMEOUT_MS, maxWait: 10_000 },
  );
}

function isSelfConsistent(row: ChainRow): boolean {
  return contentHashOf(row) === row.contentHash && linkHash(row.prevHash, row.contentHash) === row.hash;
}

/** Chains that exist (workspaces with a head), for `audit verify --all`. */
export async function auditedWorkspaces(db: Db): Promise<string[]> {
  const rows = await db.auditChainHead.findMany({ select: { workspaceId: true }, orderBy: { workspaceId: 'asc' } });
  return rows.map((r) => r.workspaceId);
}
