-- Issue #21: a tamper-evident audit trail (hash chain per workspace) and access-log indexes for keyset
-- pagination and retention. Hand-edited after `npm run db:new-migration`: the chain columns are added
-- nullable, every existing row is chained (backfill below), and only then made NOT NULL.

-- ─── Access log: indexes for `doors access-log` (newest first, ties by id) and the retention worker ───
DROP INDEX "AccessLog_gameId_at_idx";
DROP INDEX "AccessLog_gameId_externalId_at_idx";
CREATE INDEX "AccessLog_gameId_at_id_idx" ON "AccessLog"("gameId", "at" DESC, "id" DESC);
CREATE INDEX "AccessLog_gameId_externalId_at_id_idx" ON "AccessLog"("gameId", "externalId", "at" DESC, "id" DESC);
CREATE INDEX "AccessLog_gameId_doorKey_at_id_idx" ON "AccessLog"("gameId", "doorKey", "at" DESC, "id" DESC);
CREATE INDEX "AccessLog_gameId_decision_at_id_idx" ON "AccessLog"("gameId", "decision", "at" DESC, "id" DESC);
CREATE INDEX "AccessLog_at_idx" ON "AccessLog"("at");

-- ─── Audit chain ─────────────────────────────────────────────────────────────────────────────────────
-- Every row belongs to the chain of one workspace. Legacy rows without a workspace take the one of their game, rows whose
-- game is gone too are chained under the nil UUID.
UPDATE "AuditLog" a SET "workspaceId" = g."workspaceId" FROM "Game" g WHERE a."workspaceId" IS NULL AND a."gameId" = g.id;
UPDATE "AuditLog" SET "workspaceId" = '00000000-0000-0000-0000-000000000000' WHERE "workspaceId" IS NULL;
ALTER TABLE "AuditLog" ALTER COLUMN "workspaceId" SET NOT NULL;

ALTER TABLE "AuditLog" ADD COLUMN "seq" BIGINT, ADD COLUMN "prevHash" TEXT, ADD COLUMN "contentHash" TEXT, ADD COLUMN "hash" TEXT;

CREATE TABLE "AuditChainHead" (
    "workspaceId" UUID NOT NULL,
    "seq" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AuditChainHead_pkey" PRIMARY KEY ("workspaceId")
);

-- The canonical content of a row, version 1, exactly as src/audit/audit-canonical.ts builds it: the tag
-- "gis-audit-v1", then each field as "<UTF-8 byte length>:<text>" or "~" for NULL, in this order: seq,
-- workspaceId, gameId, actor, action, keyPrefix, createdAt as integer ms since the epoch, detail as
-- PostgreSQL renders jsonb as text. Kept after the migration so a test can prove both encodings agree,
-- verification never relies on it (the CLI recomputes every hash itself).
CREATE FUNCTION gis_audit_field(v TEXT) RETURNS TEXT IMMUTABLE LANGUAGE SQL AS $$
  SELECT CASE WHEN v IS NULL THEN '~' ELSE octet_length(v)::TEXT || ':' || v END
$$;
CREATE FUNCTION gis_audit_canonical(seq BIGINT, workspace UUID, game UUID, actor TEXT, action TEXT, key_prefix TEXT, created_at TIMESTAMP, detail JSONB)
RETURNS TEXT IMMUTABLE LANGUAGE SQL AS $$
  SELECT 'gis-audit-v1' || gis_audit_field(seq::TEXT) || gis_audit_field(workspace::TEXT) || gis_audit_field(game::TEXT)
    || gis_audit_field(actor) || gis_audit_field(action) || gis_audit_field(key_prefix)
    || gis_audit_field(floor(extract(epoch FROM created_at) * 1000)::BIGINT::TEXT) || gis_audit_field(detail::TEXT)
$$;

-- Backfill: the existing rows of each workspace become its chain in id order (the order they were
-- written). A plain recursive query over a numbered copy (the migration runner splits scripts at every
-- semicolon, dollar quotes included, so no PL/pgSQL block).
CREATE TABLE "_AuditBackfill" AS
  SELECT id, "workspaceId", n AS seq,
         encode(sha256(convert_to(gis_audit_canonical(n, "workspaceId", "gameId", actor, action, "keyPrefix", "createdAt", detail), 'UTF8')), 'hex') AS ch
  FROM (SELECT a.*, row_number() OVER (PARTITION BY "workspaceId" ORDER BY id) AS n FROM "AuditLog" a) numbered;
CREATE UNIQUE INDEX "_AuditBackfill_ws_seq" ON "_AuditBackfill"("workspaceId", seq);

WITH RECURSIVE chain AS (
  SELECT b.id, b."workspaceId", b.seq, b.ch, repeat('0', 64) AS prev,
         encode(sha256(convert_to(repeat('0', 64) || b.ch, 'UTF8')), 'hex') AS h
  FROM "_AuditBackfill" b WHERE b.seq = 1
  UNION ALL
  SELECT b.id, b."workspaceId", b.seq, b.ch, c.h,
         encode(sha256(convert_to(c.h || b.ch, 'UTF8')), 'hex')
  FROM chain c JOIN "_AuditBackfill" b ON b."workspaceId" = c."workspaceId" AND b.seq = c.seq + 1
)
UPDATE "AuditLog" a SET seq = c.seq, "prevHash" = c.prev, "contentHash" = c.ch, hash = c.h FROM chain c WHERE a.id = c.id;

INSERT INTO "AuditChainHead" ("workspaceId", seq, hash, "updatedAt")
  SELECT DISTINCT ON ("workspaceId") "workspaceId", seq, hash, now() FROM "AuditLog" ORDER BY "workspaceId", seq DESC;
DROP TABLE "_AuditBackfill";

ALTER TABLE "AuditLog" ALTER COLUMN "seq" SET NOT NULL, ALTER COLUMN "prevHash" SET NOT NULL,
  ALTER COLUMN "contentHash" SET NOT NULL, ALTER COLUMN "hash" SET NOT NULL;
CREATE UNIQUE INDEX "AuditLog_workspaceId_seq_key" ON "AuditLog"("workspaceId", "seq");
