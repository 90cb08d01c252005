/**
 * The domain services the console acts through, wired once per process to its connections: commands
 * (src/commands/command-service.ts, with nudges), doors (src/doors/door-admin-service.ts) and bans
 * (src/bans/ban-service.ts, with its platform write queue and kick on ban). The console adds no rules
 * of its own: everything a moderator does here is what the operator CLI does.
 */
import { absorbSharedConnectionErrors } from '../../store/connection-state.js';
import { Queue } from 'bullmq';
import type { Db } from '../../store/prisma.js';
import type { AppRedis } from '../../store/redis.js';
import type { CommandServiceDeps } from '../../commands/command-service.js';
import { NudgeQueue } from '../../commands/nudge-queue.js';
import type { DoorAdminDeps } from '../../doors/door-admin-service.js';
import { BanService } from '../../bans/ban-service.js';
import { Blocklist } from '../../bans/blocklist.js';
import { commandKickIssuer } from '../../bans/ban-kicks.js';
import { PLATFORM_BANS_QUEUE, PlatformWriteQueue, type PlatformBanJob } from '../../bans/platform-write-queue.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';

export interface ConsoleServices {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  commands: CommandServiceDeps;
  doors: DoorAdminDeps;
  bans: BanService;
  /** Closes the queues this object opened (not `redis` or `db`, which the caller owns). */
  close(): Promise<void>;
}

/** Wires the services over `redis` and `db` (both owned and closed by the caller). */
export function createConsoleServices(deps: { db: Db; redis: AppRedis; keySpace: KeySpace }): ConsoleServices {
  const { db, redis, keySpace } = deps;
  const nudges = new NudgeQueue(redis, keySpace);
  const platformQueue = new Queue<PlatformBanJob>(PLATFORM_BANS_QUEUE, { connection: redis, prefix: keySpace.global.bullPrefix() });
  absorbSharedConnectionErrors(platformQueue, `queue:${PLATFORM_BANS_QUEUE}`);
  const commands: CommandServiceDeps = { db, redis, keySpace, nudges };
  const bans = new BanService({
    db,
    redis,
    keySpace,
    blocklist: new Blocklist(redis, db, keySpace),
    platformWrites: new PlatformWriteQueue(platformQueue, db),
    kick: commandKickIssuer(commands),
  });
  return {
    db,
    redis,
    keySpace,
    commands,
    doors: { db, redis, keySpace, commands },
    bans,
    async close() {
      await Promise.allSettled([nudges.close(), platformQueue.close()]);
    },
  };
}
