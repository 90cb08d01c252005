-- Commands of games deleted before this constraint existed have nothing to belong to.
DELETE FROM "Command" c WHERE NOT EXISTS (SELECT 1 FROM "Game" g WHERE g.id = c."gameId");

-- AddForeignKey
ALTER TABLE "Command" ADD CONSTRAINT "Command_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;
