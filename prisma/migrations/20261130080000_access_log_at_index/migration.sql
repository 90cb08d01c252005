-- DropIndex
DROP INDEX "AccessLog_at_idx";
