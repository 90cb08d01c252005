-- DropIndex
DROP INDEX "PlayerEvent_gameId_type_occurredAt_idx";
