/**
 * Domain errors with stable codes. Each carries the spec's HTTP status (spec: Errors); the one error
 * handler (http/error-handler.ts) turns them into `{error:{code,message,requestId}, serverTime}`.
 * Clients branch on the status, so codes may grow; `scope_missing` is the one the spec names.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response headers, e.g. Retry-After on 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: malformed body or a field failed validation. */
export class ValidationError extends AppError {
  constructor(message: string, code = 'invalid_request') {
    super(400, code, message);
  }
}

/** 401: missing, malformed, unknown, revoked key, or bad signature. */
export class AuthError extends AppError {
  constructor(code: string, message: string) {
    super(401, code, message);
  }
}

/** 403 `scope_missing`: the key lacks a scope the request needs. */
export class ScopeError extends AppError {
  constructor(scope: string) {
    super(403, 'scope_missing', `this key lacks the "${scope}" scope`);
  }
}

/** 404: unknown game, door key, server or route. */
export class NotFoundError extends AppError {
  constructor(message: string, code = 'not_found') {
    super(404, code, message);
  }
}

/** 409: timestamp outside the window (`timestamp_out_of_window`) or replayed signature (`replayed_signature`). */
export class ReplayError extends AppError {
  constructor(code: 'timestamp_out_of_window' | 'replayed_signature', message: string) {
    super(409, code, message);
  }
}

/** 413: the envelope is over the maximum size. */
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(413, 'envelope_too_large', `request body exceeds ${limitBytes} bytes; split events across heartbeats`);
  }
}

/**
 * 415: the body is not sent as the spec requires: `unsupported_media_type` for a POST whose Content-Type
 * is not `application/json` (charset, if given, utf-8); `unsupported_encoding` for a Content-Encoding
 * other than identity, gzip or deflate (src/http/raw-body.ts).
 */
export class UnsupportedMediaTypeError extends AppError {
  constructor(code: 'unsupported_media_type' | 'unsupported_encoding', message: string) {
    super(415, code, message);
  }
}

/** 429 with Retry-After in whole seconds (always present). */
export class RateLimitError extends AppError {
  constructor(retryAfterSeconds: number, message = 'rate limited') {
    super(429, 'rate_limited', message, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

/** Retry-After bounds (seconds) for 503: spread so clients that failed together do not return together. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = { min: 1, max: 5 } as const;

/**
 * 503 `unavailable`: a dependency (Redis, Postgres) is unreachable; the client retries with backoff.
 * Always carries `Retry-After`, a whole number of seconds drawn uniformly from
 * {@link UNAVAILABLE_RETRY_AFTER_SECONDS} (jitter against a thundering herd on recovery).
 */
export class UnavailableError extends AppError {
  constructor(message = 'service temporarily unavailable') {
    const { min, max } = UNAVAILABLE_RETRY_AFTER_SECONDS;
    super(503, 'unavailable', message, { 'Retry-After': String(min + Math.floor(Math.random() * (max - min + 1))) });
  }
}
