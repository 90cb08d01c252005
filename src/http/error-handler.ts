/**
 * The one place domain errors become HTTP (spec: Errors): status from the error, body
 * `{ error: { code, message, requestId }, serverTime }`, extra headers (Retry-After). Anything
 * unexpected is logged at error level and answered 500 `internal` without details; body-parser's own
 * errors are mapped to 413/400 first, and Redis/Postgres connection errors to 503 `unavailable`
 * (store/dependency-errors.ts). Expected errors log at debug (401/404/409 are routine traffic).
 */
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { AppError, NotFoundError, PayloadTooLargeError, UnavailableError, ValidationError } from './errors.js';
import { log } from '../log.js';
import { isDependencyUnavailable } from '../store/dependency-errors.js';

/** Writes the error envelope for `err` on `res`. */
export function sendError(res: Response, err: AppError): void {
  const requestId = String(res.locals.requestId ?? '');
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.status(err.status).json({
    error: { code: err.code, message: err.message, requestId },
    serverTime: new Date().toISOString(),
  });
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

/** Maps body-parser failures (raised before any route code runs) to domain errors. */
function fromBodyParser(err: BodyParserError, limit: number): AppError | null {
  if (err.type === 'entity.too.large') return new PayloadTooLargeError(err.limit ?? limit);
  if (typeof err.type === 'string' && err.status && err.status < 500) return new ValidationError(err.message, 'unreadable_body');
  return null;
}

/** A Redis/Postgres connection failure becomes 503 `unavailable` (the message names no internals). */
function fromDependency(err: unknown): AppError | null {
  if (!isDependencyUnavailable(err)) return null;
  log.debug('dependency unavailable', { err: err instanceof Error ? err.message.split('\n').pop() : String(err) });
  return new UnavailableError('a storage dependency is unreachable; retry after the Retry-After delay');
}

/** Express error middleware; `limit` is the configured maximum envelope size in bytes. */
export function errorHandler(limit: number): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    const known = err instanceof AppError ? err : (fromBodyParser(err as BodyParserError, limit) ?? fromDependency(err));
    if (known) {
      log.log(known.status >= 500 ? 'warn' : 'debug', 'request rejected', { status: known.status, code: known.code });
      sendError(res, known);
      return;
    }
    // Bounded: a stack overflow's trace is ~350 KB, and each such request would write it again.
    log.error('unexpected error', { err: err instanceof Error ? { message: err.message.slice(0, 1000), stack: err.stack?.slice(0, 4000) } : String(err).slice(0, 1000) });
    sendError(res, new AppError(500, 'internal', 'internal error'));
  };
}

/** Final handler: any route not matched gets 404 with the envelope. */
export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, new NotFoundError(`no route ${req.method} ${req.path}`, 'unknown_route'));
};
