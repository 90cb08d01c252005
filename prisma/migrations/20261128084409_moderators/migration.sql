-- CreateTable
CREATE TABLE "Moderator" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "tokenPrefix" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "credentialEpoch" INTEGER NOT NULL DEFAULT 0,
    "disabledAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Moderator_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModeratorIdentity" (
    "id" UUID NOT NULL,
    "moderatorId" UUID NOT NULL,
    "issuer" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ModeratorIdentity_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModeratorInvitation" (
    "id" UUID NOT NULL,
    "moderatorId" UUID NOT NULL,
    "codeHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ModeratorInvitation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Moderator_tokenPrefix_key" ON "Moderator"("tokenPrefix");

-- CreateIndex
CREATE INDEX "Moderator_workspaceId_idx" ON "Moderator"("workspaceId");

-- CreateIndex
CREATE INDEX "ModeratorIdentity_moderatorId_idx" ON "ModeratorIdentity"("moderatorId");

-- CreateIndex
CREATE UNIQUE INDEX "ModeratorIdentity_issuer_subject_moderatorId_key" ON "ModeratorIdentity"("issuer", "subject", "moderatorId");

-- CreateIndex
CREATE UNIQUE INDEX "ModeratorInvitation_codeHash_key" ON "ModeratorInvitation"("codeHash");

-- CreateIndex
CREATE INDEX "ModeratorInvitation_moderatorId_idx" ON "ModeratorInvitation"("moderatorId");

-- AddForeignKey
ALTER TABLE "Moderator" ADD CONSTRAINT "Moderator_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModeratorIdentity" ADD CONSTRAINT "ModeratorIdentity_moderatorId_fkey" FOREIGN KEY ("moderatorId") REFERENCES "Moderator"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModeratorInvitation" ADD CONSTRAINT "ModeratorInvitation_moderatorId_fkey" FOREIGN KEY ("moderatorId") REFERENCES "Moderator"("id") ON DELETE CASCADE ON UPDATE CASCADE;
