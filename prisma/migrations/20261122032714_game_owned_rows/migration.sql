-- Rows of games deleted before these constraints existed have nothing to belong to.
DELETE FROM "Session" t WHERE NOT EXISTS (SELECT 1 FROM "Game" g WHERE g.id = t."gameId");
DELETE FROM "PlayerEvent" t WHERE NOT EXISTS (SELECT 1 FROM "Game" g WHERE g.id = t."gameId");
DELETE FROM "ConcurrencySample" t WHERE NOT EXISTS (SELECT 1 FROM "Game" g WHERE g.id = t."gameId");
DELETE FROM "AccessLog" t WHERE NOT EXISTS (SELECT 1 FROM "Game" g WHERE g.id = t."gameId");
DELETE FROM "PlatformBanWrite" t WHERE NOT EXISTS (SELECT 1 FROM "Game" g WHERE g.id = t."gameId");

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PlayerEvent" ADD CONSTRAINT "PlayerEvent_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ConcurrencySample" ADD CONSTRAINT "ConcurrencySample_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AccessLog" ADD CONSTRAINT "AccessLog_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PlatformBanWrite" ADD CONSTRAINT "PlatformBanWrite_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;
