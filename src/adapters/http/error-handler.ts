/**
 * Express error middleware of both listeners (spec: Errors): domain errors (src/errors.ts) are answered
 * through src/adapters/http/error-status.ts; body-parser's own errors become 413/400 first, and Redis/Postgres
 * connection errors 503 `unavailable` (store/dependency-errors.ts). Anything else is logged at error level
 * and answered 500 `internal` without details. Expected errors log at debug (401/404/409 are routine
 * traffic, and so are 503 `overloaded` refusals of the admission controller), other 5xx at warn.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, NotFoundError, OverloadedError, PayloadTooLargeError, UnavailableError, ValidationError } from '../../errors.js';
import { log } from '../../log.js';
import { isDependencyUnavailable } from '../../store/dependency-errors.js';
import { errorEnvelope, sendError, STATUS_OF_KIND } from './error-status.js';

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/** Maps body-parser failures (raised before any route code runs) to domain errors. */
function fromBodyParser(err: BodyParserError, limit: number): DomainError | null {
  if (err.type === 'entity.too.large') return new PayloadTooLargeError(err.limit ?? limit);
  if (typeof err.type === 'string' && err.status && err.status < 500) return new ValidationError(err.message, 'unreadable_body');
  return null;
}

/** A Redis/Postgres connection failure becomes 503 `unavailable` (the message names no internals). */
function fromDependency(err: unknown): DomainError | null {
  if (!isDependencyUnavailable(err)) return null;
  log.debug('dependency unavailable', { err: err instanceof Error ? err.message.split('\n').pop() : String(err) });
  return new UnavailableError('a storage dependency is unreachable; retry after the Retry-After delay');
}

/** Express error middleware; `limit` is the listener's maximum body size in bytes (for 413 messages). */
export function errorHandler(limit: number): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    const known = err instanceof DomainError ? err : (fromBodyParser(err as BodyParserError, limit) ?? fromDependency(err));
    if (known) {
      const status = STATUS_OF_KIND[known.kind];
      // A shed request logs at debug: under overload one line per refusal would cost what shedding saves
      // (the admission controller counts them in /metrics).
      const level = status >= 500 && !(known instanceof OverloadedError) ? 'warn' : 'debug';
      // winston formats an entry before its transport drops it for its level: skip that when it is off
      if (log.isLevelEnabled(level)) log.log(level, 'request rejected', { status, code: known.code });
      sendError(res, known);
      return;
    }
    // Bounded: a stack overflow's trace is ~350 KB, and each such request would write it again.
    log.error('unexpected error', { err: err instanceof Error ? { message: err.message.slice(0, 1000), stack: err.stack?.slice(0, 4000) } : String(err).slice(0, 1000) });
    res.status(500).json(errorEnvelope(res, { code: 'internal', message: 'internal error' }));
  };
}

/** Final handler: any route not matched gets 404 with the envelope. */
export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, new NotFoundError(`no route ${req.method} ${req.path}`, 'unknown_route'));
};
