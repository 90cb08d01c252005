/**
 * The Prisma client over the `pg` driver adapter (engineType "client": no native query engine; see the
 * README on why). Each process creates one, with a bounded pool so API + workers fit Postgres.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';

export type Db = PrismaClient;

/**
 * Longest wait (ms) for a pool connection, including opening one: with Postgres down or every connection
 * busy a query fails after this (P1001/P2024-like, answered 503 by the API) instead of hanging.
 */
export const DB_CONNECT_TIMEOUT_MS = 800;

/** Creates the process's Prisma client with at most `poolSize` connections. */
export function createDb(databaseUrl: string, poolSize = 5): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS }) });
}
