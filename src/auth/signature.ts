/**
 * Request signing (spec: Authentication). `X-Service-Signature` is the lowercase hexadecimal
 * HMAC-SHA256, keyed with the key secret, of the `X-Service-Timestamp` string followed by the raw body
 * bytes exactly as sent (the encoding is this project's decision: hex, 64 characters).
 *
 * **Request nonce** (this project's additive extension, docs/api.md "Replays on a shared key"): a request whose
 * URL carries a query string may instead be signed over `timestamp + raw body + "?" + raw query` (the
 * query exactly as it appears in the request target, after the `?`). The reference clients send
 * `?nonce=<128 random bits>` on every request and sign that form, so no two requests of a fleet that
 * shares one key ever sign the same bytes, not even two bodiless `GET doors/manifest` in one second;
 * a byte-identical resend still carries the same signature and meets the replay cache (rule 3). A client
 * that signs the spec's form (timestamp + body) keeps working, with or without a query.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Acceptance window either side of server time, in seconds (spec: Limits). */
export const SIGNATURE_WINDOW_SECONDS = 300;

/** Name of the query parameter the reference clients put a fresh random value in (docs/api.md "Replays on a shared key"). */
export const NONCE_PARAM = 'nonce';

/**
 * Computes the hex signature of `timestamp` + `body` with `secret`; with a non-empty `query` (the raw
 * query string without its `?`), of `timestamp + body + "?" + query`. Tests and benchmarks sign with it;
 * the reference client has its own copy (`signRequest` in packages/client), checked against this one by
 * test/client/wire-compat.test.ts.
 */
export function sign(secret: string, timestamp: string, body: Buffer | string, query?: string): string {
  const h = createHmac('sha256', secret).update(timestamp).update(body);
  if (query) h.update('?').update(query);
  return h.digest('hex');
}

/** Which bytes a valid signature covers: the spec's `timestamp + body`, or the request-nonce form with the query. */
export type SignedForm = 'body' | 'body+query';

function matches(expected: Buffer, given: Buffer): boolean {
  return timingSafeEqual(expected, given);
}

/**
 * Constant-time check of a hex signature over `timestamp + body`, or, when `query` (raw, without `?`) is
 * non-empty, over `timestamp + body + "?" + query` first and then the spec's form. Returns the form that
 * matched, or null for no match or a malformed value. Costs one HMAC for a request without a query or one
 * signed with its query (the reference clients'), two for a spec-form signature on a request with a query.
 */
export function verifyRequestSignature(secret: string, timestamp: string, body: Buffer, query: string | null, signatureHex: string): SignedForm | null {
  if (!/^[0-9a-f]{64}$/.test(signatureHex)) return null;
  const given = Buffer.from(signatureHex, 'hex');
  if (query) {
    const withQuery = createHmac('sha256', secret).update(timestamp).update(body).update('?').update(query).digest();
    if (matches(withQuery, given)) return 'body+query';
  }
  const plain = createHmac('sha256', secret).update(timestamp).update(body).digest();
  return matches(plain, given) ? 'body' : null;
}

/** Constant-time check of a hex signature over `timestamp + body` (the spec's form only); false for any malformed value. */
export function verifySignature(secret: string, timestamp: string, body: Buffer, signatureHex: string): boolean {
  return verifyRequestSignature(secret, timestamp, body, null, signatureHex) === 'body';
}

/** The raw query string of a request target (`/path?x=1` → `x=1`), without decoding; null when there is none. */
export function rawQuery(requestTarget: string): string | null {
  const q = requestTarget.indexOf('?');
  return q < 0 || q === requestTarget.length - 1 ? null : requestTarget.slice(q + 1);
}

/** Parses `X-Service-Timestamp` (integer seconds since the epoch); null when malformed. */
export function parseTimestamp(value: string | undefined): number | null {
  if (!value || !/^\d{1,12}$/.test(value)) return null;
  return Number(value);
}
