-- An event is keyed by its own identity (gameId, eventId), the key ON CONFLICT already used. The surrogate
-- id cost the flush a sequence draw and a second unique btree per row (docs/benchmarks.md).
-- The existing unique index becomes the primary key as it is: no index build, no long table lock.

-- AlterTable
ALTER TABLE "PlayerEvent" DROP CONSTRAINT "PlayerEvent_pkey",
DROP COLUMN "id";

-- AlterTable
ALTER TABLE "PlayerEvent" ADD CONSTRAINT "PlayerEvent_pkey" PRIMARY KEY USING INDEX "PlayerEvent_gameId_eventId_key";
