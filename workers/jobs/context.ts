/** What every job processor receives: one set of connections per worker process. */
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/store/prisma.js';
import type { AppRedis } from '../../src/store/redis.js';
import type { GameDirectory } from '../../src/store/game-directory.js';
import type { KeySpace } from '../../src/store/keyspace/key-space.js';

export interface JobContext {
  config: Readonly<Config>;
  redis: AppRedis;
  db: Db;
  /** The process's Redis key space, built once at boot (workers/index.ts). */
  keySpace: KeySpace;
  games: GameDirectory;
  /** This process's stream consumer name (`<host>-<pid>`). */
  consumerName: string;
  /**
   * Whether Redis keeps what it acknowledged across a crash (AOF; src/store/redis-persistence.ts), as last
   * read. The flushers hold off under API pressure only then (src/limits/flush-yield.ts); absent = yes.
   */
  redisDurable?: () => boolean;
}

/** Time budget of one scheduled flush job, ms: keeps a job well inside BullMQ's lock duration. */
export const JOB_BUDGET_MS = 5_000;
