/**
 * Domain errors with stable machine-readable codes (spec: Errors; `error.code` is what a client may log,
 * the spec names one code, `scope_missing`). They say what went wrong in the domain's words — a
 * {@link ErrorKind} and a code — and know nothing of HTTP: the one mapping to status codes, headers and
 * the error envelope is src/adapters/http/error-status.ts, used by the game listener and the console alike; the
 * operator CLI prints the message and the code.
 */

/** What kind of failure an error is; src/adapters/http/error-status.ts gives each its spec status. */
export type ErrorKind =
  /** Malformed body, or a field failed validation (spec: 400). */
  | 'invalid'
  /** Missing, malformed, unknown, revoked key or bad signature (spec: 401). */
  | 'unauthenticated'
  /** Valid key without the scope the request needs (spec: 403). */
  | 'forbidden'
  /** Unknown game, door key, server or route (spec: 404). */
  | 'not_found'
  /** Timestamp outside the window or replayed signature (spec: 409). */
  | 'conflict'
  /** Envelope over the maximum size (spec: 413). */
  | 'too_large'
  /** A body in a media type or content coding the service does not take (415). */
  | 'unsupported_media_type'
  /** Over a quota or a queue cap; always with a retry delay (spec: 429). */
  | 'rate_limited'
  /** A dependency is unreachable or the process is saturated; always with a retry delay (5xx: 503). */
  | 'unavailable';

/**
 * Base of every expected error: a kind, a stable code, a message fit for the caller, maybe a retry delay.
 * No stack trace is captured: a domain error is an answer (401, 409, 429, 503 `overloaded`, ...), not a
 * fault, and nothing reads its stack, while capturing one cost ~10 µs (more under Express's deep stacks)
 * and showed as 9 % of the API's busy time in an overloaded bench:fleet run, where every refusal makes
 * one (docs/benchmarks.md). Unexpected errors keep their stacks (src/adapters/http/error-handler.ts).
 */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    /** Whole seconds the caller should wait before retrying (Retry-After); set on `rate_limited` and `unavailable`. */
    readonly retryAfterSeconds?: number,
  ) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = new.target.name;
  }
}

/**
 * `invalid`: malformed body or a field failed validation (default code `invalid_request`). `pointer`, when
 * known, is the JSON Pointer (RFC 6901) of the first member that failed, e.g. `/events/1/type` (`""` is
 * the whole body); the envelope carries it as `error.pointer` so a client can drop the one bad event.
 */
export class ValidationError extends DomainError {
  constructor(
    message: string,
    code = 'invalid_request',
    readonly pointer?: string,
  ) {
    super('invalid', code, message);
  }
}

/** `unauthenticated`: missing, malformed, unknown, revoked key, or bad signature. */
export class AuthError extends DomainError {
  constructor(code: string, message: string) {
    super('unauthenticated', code, message);
  }
}

/** `forbidden` `scope_missing`: the key lacks a scope the request needs (spec: Authentication rule 5). */
export class ScopeError extends DomainError {
  constructor(scope: string) {
    super('forbidden', 'scope_missing', `this key lacks the "${scope}" scope`);
  }
}

/** `not_found`: unknown game, door key, server or route (default code `not_found`). */
export class NotFoundError extends DomainError {
  constructor(message: string, code = 'not_found') {
    super('not_found', code, message);
  }
}

/** `conflict`: timestamp outside the window or replayed signature (spec: Authentication rules 2–3). */
export class ReplayError extends DomainError {
  constructor(code: 'timestamp_out_of_window' | 'replayed_signature', message: string) {
    super('conflict', code, message);
  }
}

/** `too_large` `envelope_too_large`: the body is over `limitBytes` (spec: Errors 413). */
export class PayloadTooLargeError extends DomainError {
  constructor(limitBytes: number) {
    super('too_large', 'envelope_too_large', `request body exceeds ${limitBytes} bytes; split events across heartbeats`);
  }
}

/**
 * `unsupported_media_type`: the body is not sent as the spec requires: code `unsupported_media_type` for a
 * POST whose Content-Type is not `application/json` (charset, if given, utf-8); `unsupported_encoding`
 * for a Content-Encoding other than identity, gzip or deflate (src/adapters/http/raw-body.ts).
 */
export class UnsupportedMediaTypeError extends DomainError {
  constructor(code: 'unsupported_media_type' | 'unsupported_encoding', message: string) {
    super('unsupported_media_type', code, message);
  }
}

/** Whole seconds of a retry delay: rounded up, at least 1 (spec: Limits, "429 Retry-After: seconds"). */
export function wholeSeconds(seconds: number): number {
  return Math.max(1, Math.ceil(seconds));
}

/** `rate_limited` (default code `rate_limited`) with a retry delay of `retryAfterSeconds`, whole seconds ≥ 1. */
export class RateLimitError extends DomainError {
  constructor(retryAfterSeconds: number, message = 'rate limited', code = 'rate_limited') {
    super('rate_limited', code, message, wholeSeconds(retryAfterSeconds));
  }
}

/** Retry delay bounds (seconds) of `unavailable`: spread so clients that failed together do not return together. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = { min: 1, max: 5 } as const;

/**
 * `unavailable`: a dependency (Redis, Postgres) is unreachable; the client retries with backoff. The
 * retry delay is a whole number of seconds drawn uniformly from {@link UNAVAILABLE_RETRY_AFTER_SECONDS}
 * (jitter against a thundering herd on recovery).
 */
export class UnavailableError extends DomainError {
  constructor(message = 'service temporarily unavailable', code = 'unavailable') {
    const { min, max } = UNAVAILABLE_RETRY_AFTER_SECONDS;
    super('unavailable', code, message, min + Math.floor(Math.random() * (max - min + 1)));
  }
}

/**
 * `unavailable` `overloaded`: this API process is shedding load (src/limits/admission.ts) and refused the
 * request before doing any of it; nothing was stored. The retry delay (whole seconds ≥ 1) is drawn by the
 * admission controller from its configured range, so refused clients do not return together.
 */
export class OverloadedError extends DomainError {
  constructor(retryAfterSeconds: number, readonly reason: string) {
    super('unavailable', 'overloaded', 'the service is shedding load; retry after the Retry-After delay', Math.max(1, Math.round(retryAfterSeconds)));
  }
}
