/**
 * The Prisma client over the `pg` driver adapter (engineType "client": no native query engine; see the
 * README on why). Each process creates one, with a bounded pool so API + workers fit Postgres.
 *
 * The pool is created here and handed to the adapter, so that the flushers can run `COPY … FROM STDIN`
 * (src/store/bulk-copy.ts), which Prisma cannot, on the same bounded set of connections: {@link pgPoolOf}.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import pg from 'pg';

export type Db = PrismaClient;

/**
 * Longest wait (ms) for a pool connection, including opening one: with Postgres down or every connection
 * busy a query fails after this (P1001/P2024-like, answered 503 by the API) instead of hanging.
 */
export const DB_CONNECT_TIMEOUT_MS = 800;

const pools = new WeakMap<Db, pg.Pool>();

/** Creates the process's Prisma client with at most `poolSize` connections. */
export function createDb(databaseUrl: string, poolSize = 5): Db {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS });
  // A connection that breaks emits 'error' on its client (and, idle, on the pool); without a listener that
  // crashes the process. Seen in a worker whose checked-out client lost its socket while Postgres went
  // away (test/faults/outages.fault.ts). The query on it fails on its own and the pool discards the client.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  // disposeExternalPool: $disconnect ends the pool as it did when the adapter created it.
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(db, pool);
  return db;
}

/**
 * The `pg` pool under `db` (the same connections Prisma queries use).
 * @throws Error when `db` was not made by {@link createDb}.
 */
export function pgPoolOf(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('pgPoolOf: this Prisma client was not created by createDb');
  return pool;
}
