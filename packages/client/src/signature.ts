/**
 * Request signing as the game surface expects it (spec: Authentication, rules 1–3), the client's own copy:
 * the package depends on nothing but Node's built-ins, so it does not share the service's module.
 *
 * `X-Service-Signature` is the lowercase hexadecimal HMAC-SHA256, keyed with the key secret (the part of
 * `svc_live_<prefix>.<secret>` after the dot), of the `X-Service-Timestamp` string followed by the raw
 * body bytes exactly as sent (64 hex characters; the encoding is the service's decision, its README "API
 * decisions").
 *
 * **Request nonce** (the service's additive extension, its docs/api.md "Replays on a shared key"): a request
 * whose URL carries a query string may be signed over `timestamp + raw body + "?" + raw query` instead.
 * The client sends `?nonce=<128 random bits>` on every attempt and signs that form, so servers sharing one
 * key never sign the same bytes, not even two bodiless `GET doors/manifest` in one second.
 */
import { createHmac } from 'node:crypto';

/** Name of the query parameter that carries a fresh random value on every attempt. */
export const NONCE_PARAM = 'nonce';

/**
 * The hex signature of one request: HMAC-SHA256 keyed with `secret` over `timestamp` (the integer seconds
 * sent in `X-Service-Timestamp`, as a decimal string) followed by `body` (the exact bytes sent; empty for
 * GET) and, when `query` (the raw query string without its `?`, exactly as in the request target) is
 * non-empty, `"?"` and the query.
 * @returns 64 lowercase hexadecimal characters.
 */
export function signRequest(secret: string, timestamp: string, body: Uint8Array | string, query?: string): string {
  const hmac = createHmac('sha256', secret).update(timestamp).update(body);
  if (query) hmac.update('?').update(query);
  return hmac.digest('hex');
}
