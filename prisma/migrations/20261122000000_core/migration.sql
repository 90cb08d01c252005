-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Workspace" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Workspace_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Game" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "heartbeatIntervalSeconds" INTEGER NOT NULL DEFAULT 20,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Game_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" UUID NOT NULL,
    "gameId" UUID NOT NULL,
    "prefix" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "scopes" TEXT[],
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AuditLog" (
    "id" BIGSERIAL NOT NULL,
    "workspaceId" UUID,
    "gameId" UUID,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "keyPrefix" TEXT,
    "detail" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AuditLog_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GameServer" (
    "id" BIGSERIAL NOT NULL,
    "gameId" UUID NOT NULL,
    "externalServerId" TEXT NOT NULL,
    "externalScopeId" TEXT,
    "region" TEXT,
    "sdkVersion" TEXT NOT NULL,
    "maxPlayers" INTEGER NOT NULL,
    "firstSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "goneAt" TIMESTAMPTZ(3),

    CONSTRAINT "GameServer_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Session" (
    "id" BIGSERIAL NOT NULL,
    "gameId" UUID NOT NULL,
    "externalServerId" TEXT NOT NULL,
    "externalScopeId" TEXT,
    "externalId" TEXT NOT NULL,
    "username" TEXT,
    "openedAt" TIMESTAMPTZ(3) NOT NULL,
    "closedAt" TIMESTAMPTZ(3),
    "closeReason" TEXT,

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PlayerEvent" (
    "id" BIGSERIAL NOT NULL,
    "gameId" UUID NOT NULL,
    "eventId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "externalId" TEXT,
    "occurredAt" TIMESTAMPTZ(3) NOT NULL,
    "payload" JSONB,
    "externalServerId" TEXT NOT NULL,
    "receivedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PlayerEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Command" (
    "id" UUID NOT NULL,
    "gameId" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "externalServerId" TEXT,
    "externalId" TEXT,
    "status" TEXT NOT NULL,
    "issuedBy" TEXT NOT NULL,
    "issuedAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "failureReason" TEXT,

    CONSTRAINT "Command_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CommandTransition" (
    "id" BIGSERIAL NOT NULL,
    "commandId" UUID NOT NULL,
    "toStatus" TEXT NOT NULL,
    "externalServerId" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "reason" TEXT,

    CONSTRAINT "CommandTransition_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Game_workspaceId_idx" ON "Game"("workspaceId");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_prefix_key" ON "ApiKey"("prefix");

-- CreateIndex
CREATE INDEX "ApiKey_gameId_idx" ON "ApiKey"("gameId");

-- CreateIndex
CREATE INDEX "AuditLog_gameId_createdAt_idx" ON "AuditLog"("gameId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "GameServer_gameId_externalServerId_key" ON "GameServer"("gameId", "externalServerId");

-- CreateIndex
CREATE INDEX "Session_gameId_externalId_idx" ON "Session"("gameId", "externalId");

-- CreateIndex
CREATE INDEX "Session_gameId_openedAt_idx" ON "Session"("gameId", "openedAt");

-- CreateIndex
CREATE UNIQUE INDEX "Session_gameId_externalServerId_externalId_openedAt_key" ON "Session"("gameId", "externalServerId", "externalId", "openedAt");

-- CreateIndex
CREATE INDEX "PlayerEvent_gameId_type_occurredAt_idx" ON "PlayerEvent"("gameId", "type", "occurredAt");

-- CreateIndex
CREATE INDEX "PlayerEvent_gameId_occurredAt_idx" ON "PlayerEvent"("gameId", "occurredAt");

-- CreateIndex
CREATE UNIQUE INDEX "PlayerEvent_gameId_eventId_key" ON "PlayerEvent"("gameId", "eventId");

-- CreateIndex
CREATE INDEX "Command_gameId_status_idx" ON "Command"("gameId", "status");

-- CreateIndex
CREATE INDEX "Command_gameId_externalId_idx" ON "Command"("gameId", "externalId");

-- CreateIndex
CREATE UNIQUE INDEX "CommandTransition_commandId_toStatus_key" ON "CommandTransition"("commandId", "toStatus");

-- AddForeignKey
ALTER TABLE "Game" ADD CONSTRAINT "Game_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GameServer" ADD CONSTRAINT "GameServer_gameId_fkey" FOREIGN KEY ("gameId") REFERENCES "Game"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CommandTransition" ADD CONSTRAINT "CommandTransition_commandId_fkey" FOREIGN KEY ("commandId") REFERENCES "Command"("id") ON DELETE CASCADE ON UPDATE CASCADE;
