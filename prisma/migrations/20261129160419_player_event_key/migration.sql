-- An event is keyed by its own identity (gameId, eventId), the key ON CONFLICT already used. The surrogate
-- id cost the flush a sequence draw and a second unique btree per row (docs/benchmarks.md).
-- DropIndex
DROP INDEX "PlayerEvent_gameId_eventId_key";

-- AlterTable
ALTER TABLE "PlayerEvent" DROP CONSTRAINT "PlayerEvent_pkey",
DROP COLUMN "id",
ADD CONSTRAINT "PlayerEvent_pkey" PRIMARY KEY ("gameId", "eventId");
