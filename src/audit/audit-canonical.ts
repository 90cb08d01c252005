/**
 * The canonical content of an audit row and the two hashes of the chain (issue #21, "Tamper-evident
 * audit"). One definition, used when a row is appended (src/audit/audit-chain.ts) and when a chain is
 * verified (`admin audit verify`); the migration that chained the rows written before it
 * (prisma/migrations/20261125071111_moderation, SQL function `gis_audit_canonical`) builds the same bytes,
 * which test/audit/audit-chain.test.ts checks.
 *
 * Canonical content, version 1 (a UTF-8 string): the tag `gis-audit-v1`, then each field as
 * `<UTF-8 byte length>:<text>`, or `~` for NULL, in this order:
 *
 * | field | text |
 * | --- | --- |
 * | seq | decimal |
 * | workspaceId | lowercase UUID |
 * | gameId | lowercase UUID or NULL |
 * | actor, action, keyPrefix | as stored (keyPrefix may be NULL) |
 * | createdAt | integer milliseconds since the Unix epoch (UTC) |
 * | detail | the jsonb value as PostgreSQL renders it as text (`detail::text`), or NULL |
 *
 * Length prefixes make the encoding unambiguous whatever the fields contain. `detail` is taken as
 * PostgreSQL prints it rather than re-serialised here, so key order and number formatting are the
 * database's own, identical at append and at verify time.
 *
 * Hashes (lowercase hex SHA-256): `contentHash = SHA-256(canonical)`, `hash = SHA-256(prevHash +
 * contentHash)` over the two 64-character hex strings; `prevHash` of a workspace's first row is
 * {@link AUDIT_GENESIS_HASH}.
 */
import { createHash } from 'node:crypto';
import { Prisma } from '@prisma/client';

/** `prevHash` of the first row of every chain, and the head's hash before the first append: 64 zeros. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);
/** Tag that starts version 1 of the canonical content. */
export const AUDIT_CANONICAL_TAG = 'gis-audit-v1';

/** The fields of one row as text, exactly as the SQL of {@link CANONICAL_COLUMNS} returns them. */
export interface CanonicalFields {
  seq: string;
  workspaceId: string;
  gameId: string | null;
  actor: string;
  action: string;
  keyPrefix: string | null;
  /** Integer ms since the epoch, decimal. */
  createdMs: string;
  /** `detail::text`, or null. */
  detail: string | null;
}

/**
 * The SELECT list (or RETURNING list) that yields {@link CanonicalFields} of `"AuditLog"` rows, every
 * field as text so no driver conversion (bigint, timestamp time zone, JSON parsing) can change a byte.
 */
export const CANONICAL_COLUMNS = Prisma.sql`
  "seq"::text AS "seq", "workspaceId"::text AS "workspaceId", "gameId"::text AS "gameId", "actor", "action", "keyPrefix",
  floor(extract(epoch FROM "createdAt") * 1000)::bigint::text AS "createdMs", "detail"::text AS "detail"`;

function field(value: string | null): string {
  return value === null ? '~' : `${Buffer.byteLength(value, 'utf8')}:${value}`;
}

/** The canonical content of a row (see the module comment). */
export function canonicalContent(f: CanonicalFields): string {
  return AUDIT_CANONICAL_TAG + [f.seq, f.workspaceId, f.gameId, f.actor, f.action, f.keyPrefix, f.createdMs, f.detail].map(field).join('');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `contentHash` of a row: SHA-256 of its canonical content, lowercase hex. */
export function contentHashOf(f: CanonicalFields): string {
  return sha256Hex(canonicalContent(f));
}

/** `hash` of a row: SHA-256 of `prevHash + contentHash` (hex text), lowercase hex. */
export function linkHash(prevHash: string, contentHash: string): string {
  return sha256Hex(prevHash + contentHash);
}
