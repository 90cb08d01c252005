/**
 * Request authentication shared by the five game endpoints (spec: Authentication rules 1–6):
 * bearer key → signature over `timestamp + raw body` (the bytes as sent, content-coded if a
 * Content-Encoding was used: src/adapters/http/raw-body.ts), or, for a request with a query string, over
 * `timestamp + raw body + "?" + raw query` (the request nonce, src/auth/signature.ts) → ±300 s window →
 * the body decoded for parsing, only now that the sender is known. The replay check (rule 3) is done by
 * the caller in the same Redis round trip as its work (the heartbeat, ban-check and door scripts). It
 * is keyed on the signature whichever form it covers, so a byte-identical resend is refused either way.
 */
import type { Request } from 'express';
import { AuthError, ReplayError, ScopeError } from '../../errors.js';
import type { SignedRequest } from '../../auth/signed-request.js';
import { parseTimestamp, rawQuery, SIGNATURE_WINDOW_SECONDS, verifyRequestSignature } from '../../auth/signature.js';
import type { KeyVerifier, VerifiedKey } from '../../auth/key-verifier.js';
import type { Scope } from '../../auth/scopes.js';
import { decodeBody, receivedBody } from './raw-body.js';

/**
 * Authenticates `req` and checks its signature and timestamp; `nowMs` is server time. The body must
 * have been read by src/adapters/http/raw-body.ts's `rawBody`.
 * @throws {AuthError} 401 for a missing/malformed/unknown/revoked key, missing timestamp or signature,
 *   or a signature that matches neither `timestamp + body` nor, with a query string, `timestamp + body +
 *   "?" + query`. @throws {ReplayError} 409 `timestamp_out_of_window`.
 * @throws {PayloadTooLargeError} 413 when the decoded body is over the envelope limit.
 * @throws {ValidationError} 400 `unreadable_body` when the content-coded bytes do not decode.
 */
export async function authenticateRequest(req: Request, verifier: KeyVerifier, nowMs: number): Promise<SignedRequest> {
  const key = await verifier.authenticate(req.get('authorization'));
  const tsHeader = req.get('x-service-timestamp');
  const ts = parseTimestamp(tsHeader);
  if (ts === null) throw new AuthError('missing_timestamp', 'X-Service-Timestamp must be integer seconds since the Unix epoch');
  const signature = (req.get('x-service-signature') ?? '').trim().toLowerCase();
  if (!signature) throw new AuthError('missing_signature', 'X-Service-Signature is required');
  const received = receivedBody(req);
  const raw = received.bytes;
  const form = verifyRequestSignature(key.secret, tsHeader!, raw, rawQuery(req.originalUrl), signature);
  if (!form) {
    throw new AuthError('bad_signature', 'signature does not match; sign timestamp + raw body with HMAC-SHA256 (hex)');
  }
  if (Math.abs(nowMs / 1000 - ts) > SIGNATURE_WINDOW_SECONDS) {
    throw new ReplayError('timestamp_out_of_window', `timestamp is more than ${SIGNATURE_WINDOW_SECONDS} s from server time; check the clock against serverTime`);
  }
  return { key, signature, timestampSeconds: ts, raw, form, body: await decodeBody(received) };
}

/** @throws {ScopeError} 403 `scope_missing` when `key` lacks `scope`. */
export function requireScope(key: VerifiedKey, scope: Scope): void {
  if (!key.scopes.has(scope)) throw new ScopeError(scope);
}
