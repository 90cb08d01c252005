/**
 * The one place domain errors (src/errors.ts) become HTTP (spec: Errors): the status of each
 * {@link ErrorKind}, the headers an error adds (Retry-After in whole seconds on 429 and 503), and the
 * envelope `{ error: { code, message, requestId, pointer? }, serverTime }` that every error response carries
 * (`pointer` only on a 400 naming the member that failed validation).
 * Used by the error handler of both listeners (game and console) and by /readyz.
 */
import type { Response } from 'express';
import { ValidationError, type DomainError, type ErrorKind } from '../../errors.js';
import { sendJson } from './send-json.js';

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

/** The `error` member of the envelope; `pointer` only on a 400 that names the member that failed validation. */
export interface ErrorBody {
  code: string;
  message: string;
  requestId: string;
  /** JSON Pointer (RFC 6901) of the first member that failed, e.g. `/events/1/type`; additive, 400 only. */
  pointer?: string;
}

/**
 * The error envelope of `err` for the request `res` answers (requestId from res.locals, set by
 * request-id.ts). `error.pointer` is added when `err` is a {@link ValidationError} that knows the member.
 */
export function errorEnvelope(res: Response, err: Pick<DomainError, 'code' | 'message'>): { error: ErrorBody; serverTime: string } {
  const error: ErrorBody = { code: err.code, message: err.message, requestId: String(res.locals.requestId ?? '') };
  if (err instanceof ValidationError && err.pointer !== undefined) error.pointer = err.pointer;
  return { error, serverTime: new Date().toISOString() };
}

/** Sets the status and headers of `err` on `res` (not the body): the kind's status, and `Retry-After` when the error carries a retry delay. */
export function applyErrorHead(res: Response, err: DomainError): void {
  res.status(STATUS_OF_KIND[err.kind]);
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
}

/**
 * Answers `err` on `res`: status, headers and the envelope. Written by {@link sendJson}, not
 * `res.json`: Express's send would also hash the body for an ETag and parse the content type, work an
 * error answer does not need, and every refusal under overload pays it (docs/benchmarks.md).
 */
export function sendError(res: Response, err: DomainError): void {
  applyErrorHead(res, err);
  sendJson(res, JSON.stringify(errorEnvelope(res, err)), undefined, res.statusCode);
}
