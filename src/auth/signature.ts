/**
 * Request signing (spec: Authentication). `X-Service-Signature` is the lowercase hexadecimal
 * HMAC-SHA256, keyed with the key secret, of the `X-Service-Timestamp` string followed by the raw body
 * bytes exactly as sent (the encoding is this project's decision: hex, 64 characters).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Acceptance window either side of server time, in seconds (spec: Limits). */
export const SIGNATURE_WINDOW_SECONDS = 300;

/** Computes the hex signature of `timestamp` + `body` with `secret`. Used by the reference client too. */
export function sign(secret: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(timestamp).update(body).digest('hex');
}

/** Constant-time check of a hex signature; false for any malformed value. */
export function verifySignature(secret: string, timestamp: string, body: Buffer, signatureHex: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(signatureHex)) return false;
  const expected = createHmac('sha256', secret).update(timestamp).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(signatureHex, 'hex'));
}

/** Parses `X-Service-Timestamp` (integer seconds since the epoch); null when malformed. */
export function parseTimestamp(value: string | undefined): number | null {
  if (!value || !/^\d{1,12}$/.test(value)) return null;
  return Number(value);
}
