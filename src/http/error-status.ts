/**
 * The one place domain errors (src/errors.ts) become HTTP (spec: Errors): the status of each
 * {@link ErrorKind}, the headers an error adds (Retry-After in whole seconds on 429 and 503), and the
 * envelope `{ error: { code, message, requestId }, serverTime }` that every error response carries.
 * Used by the error handler of both listeners (game and console) and by /readyz.
 */
import type { Response } from 'express';
import type { DomainError, ErrorKind } from '../errors.js';

/** The spec's status for each kind of domain error. */
export const STATUS_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
};

/** The error envelope of `err` for the request `res` answers (requestId from res.locals, set by request-id.ts). */
export function errorEnvelope(res: Response, err: Pick<DomainError, 'code' | 'message'>): { error: { code: string; message: string; requestId: string }; serverTime: string } {
  return { error: { code: err.code, message: err.message, requestId: String(res.locals.requestId ?? '') }, serverTime: new Date().toISOString() };
}

/** Sets the status and headers of `err` on `res` (not the body): the kind's status, and `Retry-After` when the error carries a retry delay. */
export function applyErrorHead(res: Response, err: DomainError): void {
  res.status(STATUS_OF_KIND[err.kind]);
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
}

/** Answers `err` on `res`: status, headers and the envelope. */
export function sendError(res: Response, err: DomainError): void {
  applyErrorHead(res, err);
  res.json(errorEnvelope(res, err));
}
