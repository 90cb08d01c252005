-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "timeZone" TEXT NOT NULL DEFAULT 'UTC',
ADD COLUMN     "weekStartsOn" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "Game" ADD COLUMN     "cloudApiBaseUrl" TEXT,
ADD COLUMN     "cloudApiKey" TEXT,
ADD COLUMN     "doorsVersion" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "nativeBans" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "nudgesEnabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "platform" TEXT,
ADD COLUMN     "universeId" TEXT;

-- CreateTable
CREATE TABLE "Organization" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Unit" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "organizationId" UUID,
    "parentId" UUID,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Unit_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Position" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "unitId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "autoClockIn" BOOLEAN NOT NULL DEFAULT false,
    "clockInGameIds" TEXT[],
    "clockInScopeIds" TEXT[],
    "payoutRateMinor" BIGINT,
    "payoutUnit" TEXT,
    "quotaMinutesPerWeek" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Position_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Member" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "externalId" TEXT NOT NULL,
    "displayName" TEXT,
    "joinedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Member_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Assignment" (
    "id" UUID NOT NULL,
    "memberId" UUID NOT NULL,
    "positionId" UUID NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Assignment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Operation" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "startsAt" TIMESTAMPTZ(3) NOT NULL,
    "endsAt" TIMESTAMPTZ(3) NOT NULL,
    "unitId" UUID,
    "organizationId" UUID,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Operation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MemberRecord" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "memberId" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "reason" TEXT,
    "issuedAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3),
    "revoked" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MemberRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Shift" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "memberId" UUID NOT NULL,
    "openedAt" TIMESTAMPTZ(3) NOT NULL,
    "closedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Shift_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PayoutEntry" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "memberId" UUID NOT NULL,
    "shiftId" UUID NOT NULL,
    "positionId" UUID,
    "seconds" INTEGER NOT NULL,
    "rateMinor" BIGINT NOT NULL,
    "amountMinor" BIGINT NOT NULL,
    "unit" TEXT NOT NULL,
    "accruedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PayoutEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConcurrencySample" (
    "gameId" UUID NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "players" INTEGER NOT NULL,
    "servers" INTEGER NOT NULL,

    CONSTRAINT "ConcurrencySample_pkey" PRIMARY KEY ("gameId","minute")
);

-- CreateTable
CREATE TABLE "Door" (
    "id" UUID NOT NULL,
    "gameId" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'door',
    "defaultEffect" TEXT NOT NULL DEFAULT 'deny',
    "failMode" TEXT NOT NULL DEFAULT 'closed',
    "forcedState" TEXT NOT NULL DEFAULT 'auto',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Door_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DoorPolicy" (
    "id" UUID NOT NULL,
    "doorId" UUID NOT NULL,
    "effect" TEXT NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "subjectType" TEXT NOT NULL,
    "subjectIds" TEXT[],
    "includeDescendants" BOOLEAN NOT NULL DEFAULT false,
    "conditions" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DoorPolicy_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AccessLog" (
    "id" BIGSERIAL NOT NULL,
    "gameId" UUID NOT NULL,
    "externalServerId" TEXT,
    "doorKey" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "decision" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "policyId" UUID,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "dedupeKey" TEXT NOT NULL,

    CONSTRAINT "AccessLog_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Ban" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "externalId" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "gameId" UUID,
    "externalServerId" TEXT,
    "reason" TEXT NOT NULL,
    "issuedBy" TEXT NOT NULL,
    "issuedAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3),
    "liftedAt" TIMESTAMPTZ(3),
    "liftedBy" TEXT,

    CONSTRAINT "Ban_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PlatformBanWrite" (
    "id" UUID NOT NULL,
    "gameId" UUID NOT NULL,
    "externalId" TEXT NOT NULL,
    "banId" UUID,
    "active" BOOLEAN NOT NULL,
    "durationSeconds" INTEGER,
    "state" TEXT NOT NULL,
    "idempotencyKey" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "queuedAt" TIMESTAMPTZ(3) NOT NULL,
    "writtenAt" TIMESTAMPTZ(3),

    CONSTRAINT "PlatformBanWrite_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "IngestHealthWarning" (
    "id" UUID NOT NULL,
    "gameId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "firstAt" TIMESTAMPTZ(3) NOT NULL,
    "lastAt" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 1,
    "resolvedAt" TIMESTAMPTZ(3),

    CONSTRAINT "IngestHealthWarning_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Organization_workspaceId_name_key" ON "Organization"("workspaceId", "name");

-- CreateIndex
CREATE INDEX "Unit_workspaceId_idx" ON "Unit"("workspaceId");

-- CreateIndex
CREATE INDEX "Unit_parentId_idx" ON "Unit"("parentId");

-- CreateIndex
CREATE INDEX "Position_workspaceId_idx" ON "Position"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "Member_workspaceId_externalId_key" ON "Member"("workspaceId", "externalId");

-- CreateIndex
CREATE INDEX "Assignment_positionId_idx" ON "Assignment"("positionId");

-- CreateIndex
CREATE UNIQUE INDEX "Assignment_memberId_positionId_key" ON "Assignment"("memberId", "positionId");

-- CreateIndex
CREATE INDEX "Operation_workspaceId_startsAt_idx" ON "Operation"("workspaceId", "startsAt");

-- CreateIndex
CREATE INDEX "MemberRecord_memberId_type_idx" ON "MemberRecord"("memberId", "type");

-- CreateIndex
CREATE INDEX "Shift_workspaceId_openedAt_idx" ON "Shift"("workspaceId", "openedAt");

-- CreateIndex
CREATE UNIQUE INDEX "Shift_memberId_openedAt_key" ON "Shift"("memberId", "openedAt");

-- CreateIndex
CREATE UNIQUE INDEX "PayoutEntry_shiftId_key" ON "PayoutEntry"("shiftId");

-- CreateIndex
CREATE INDEX "PayoutEntry_workspaceId_accruedAt_idx" ON "PayoutEntry"("workspaceId", "accruedAt");

-- CreateIndex
CREATE UNIQUE INDEX "Door_gameId_key_key" ON "Door"("gameId", "key");

-- CreateIndex
CREATE INDEX "DoorPolicy_doorId_idx" ON "DoorPolicy"("doorId");

-- CreateIndex
CREATE UNIQUE INDEX "AccessLog_dedupeKey_key" ON "AccessLog"("dedupeKey");

-- CreateIndex
CREATE INDEX "AccessLog_gameId_at_idx" ON "AccessLog"("gameId", "at");

-- CreateIndex
CREATE INDEX "AccessLog_gameId_externalId_at_idx" ON "AccessLog"("gameId", "externalId", "at");

-- CreateIndex
CREATE INDEX "Ban_workspaceId_externalId_idx" ON "Ban"("workspaceId", "externalId");

-- CreateIndex
CREATE UNIQUE INDEX "PlatformBanWrite_idempotencyKey_key" ON "PlatformBanWrite"("idempotencyKey");

-- CreateIndex
CREATE INDEX "PlatformBanWrite_gameId_externalId_queuedAt_idx" ON "PlatformBanWrite"("gameId", "externalId", "queuedAt");

-- CreateIndex
CREATE INDEX "IngestHealthWarning_gameId_resolvedAt_idx" ON "IngestHealthWarning"("gameId", "resolvedAt");

-- AddForeignKey
ALTER TABLE "Organization" ADD CONSTRAINT "Organization_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Unit" ADD CONSTRAINT "Unit_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Unit" ADD CONSTRAINT "Unit_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Unit" ADD CONSTRAINT "Unit_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "Unit"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Position" ADD CONSTRAINT "Position_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Position" ADD CONSTRAINT "Position_unitId_fkey" FOREIGN KEY ("unitId") REFERENCES "Unit"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Member" ADD CONSTRAINT "Member_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Assignment" ADD CONSTRAINT "Assignment_memberId_fkey" FOREIGN KEY ("memberId") REFERENCES "Member"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Assignment" ADD CONSTRAINT "Assignment_positionId_fkey" FOREIGN KEY ("positionId") REFERENCES "Position"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Operation" ADD CONSTRAINT "Operation_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Operation" ADD CONSTRAINT "Operation_unitId_fkey" FOREIGN KEY ("unitId") REFERENCES "Unit"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Operation" ADD CONSTRAINT "Operation_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemberRecord" ADD CONSTRAINT "MemberRecord_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MemberRecord" ADD CONSTRAINT "MemberRecord_memberId_fkey" FOREIGN KEY ("memberId") REFERENCES "Member"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Shift" ADD CONSTRAINT "Shift_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Shift" ADD CONSTRAINT "Shift_memberId_fkey" FOREIGN KEY ("memberId") REFERENCES "Member"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PayoutEntry" ADD CONSTRAINT "PayoutEntry_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PayoutEntry" ADD CONSTRAINT "PayoutEntry_memberId_fkey" FOREIGN KEY ("memberId") REFERENCES "Member"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PayoutEntry" ADD CONSTRAINT "PayoutEntry_shiftId_fkey" FOREIGN KEY ("shiftId") REFERENCES "Shift"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Door" ADD CONSTRAINT "Door_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DoorPolicy" ADD CONSTRAINT "DoorPolicy_doorId_fkey" FOREIGN KEY ("doorId") REFERENCES "Door"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Ban" ADD CONSTRAINT "Ban_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Ban" ADD CONSTRAINT "Ban_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PlatformBanWrite" ADD CONSTRAINT "PlatformBanWrite_banId_fkey" FOREIGN KEY ("banId") REFERENCES "Ban"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "IngestHealthWarning" ADD CONSTRAINT "IngestHealthWarning_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;
