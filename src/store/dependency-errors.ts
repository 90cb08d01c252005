/**
 * Recognises "the dependency is unreachable" among the errors ioredis, BullMQ, pg and Prisma throw, so
 * the one error handler (http/error-handler.ts) answers them 503 `unavailable` with Retry-After instead
 * of 500 (README "Failure behaviour" › "Dependency outages"). Anything else stays unexpected.
 */

/** Node socket errors meaning the peer is gone or cannot be reached. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * Prisma codes: P1001 can't reach, P1002 timed out, P1008 socket timeout, P1017 server closed the
 * connection, P2024 pool timeout, P2037 too many connections. Postgres SQLSTATEs: class 08 (connection
 * exception), 57P01–57P03 (admin/crash shutdown, cannot connect now), 53300 (too many connections).
 */
const POSTGRES_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037', '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006']);

/** Driver-adapter error kinds Prisma maps to the codes above. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'SocketTimeout', 'ConnectionClosed', 'TooManyConnections']);

/**
 * ioredis/BullMQ/pg messages that carry no code; the Cluster ones while a master fails over (redirections
 * exhausted, slots not served, the slot map not refreshable).
 */
const MESSAGES = /Too many Cluster redirections|CLUSTERDOWN|TRYAGAIN|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready|Connection is closed|Stream isn't writeable|Command timed out|Reached the max retries per request|Connection terminated|timeout exceeded when trying to connect|Can't reach database server|Server has closed the connection/i;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown } } };
}

/**
 * True when `err` (or an error in its `cause` chain, at most 5 deep) means Redis or Postgres could not
 * be reached, or did not answer within the bounded wait (ioredis `commandTimeout`, pg connection timeout).
 */
export function isDependencyUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const e = current as ErrorLike;
    if (e.name === 'MaxRetriesPerRequestError' || e.name === 'PrismaClientInitializationError') return true;
    if (typeof e.code === 'string' && (SOCKET_CODES.has(e.code) || POSTGRES_CODES.has(e.code))) return true;
    const adapter = e.meta?.driverAdapterError?.cause;
    if (adapter && (ADAPTER_KINDS.has(String(adapter.kind)) || POSTGRES_CODES.has(String(adapter.originalCode)))) return true;
    if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}
