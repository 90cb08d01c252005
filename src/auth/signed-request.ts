/**
 * A request whose key, signature and timestamp have been checked (spec: Authentication rules 1–6), as
 * src/adapters/http/authenticate.ts hands it to the endpoint and the endpoint hands it to the domain (the replay
 * claim of rule 3 is keyed on `signature`). Transport-free so the domain can take it without importing
 * the HTTP layer.
 */
import type { VerifiedKey } from './key-verifier.js';
import type { SignedForm } from './signature.js';

export interface SignedRequest {
  key: VerifiedKey;
  /** The hex signature, the replay-cache key. */
  signature: string;
  /** X-Service-Timestamp, s since the epoch, within ±300 s of server time: how long the replay claim is kept (src/store/lua/lib/replay-claim.ts). */
  timestampSeconds: number;
  /** Raw body bytes as received, the signed ones (empty for GET); content-coded if a Content-Encoding was sent. */
  raw: Buffer;
  /** What the signature covers: `body` (the spec's form) or `body+query` (the request nonce). */
  form: SignedForm;
  /** The body decoded from its Content-Encoding: the JSON text to parse (the same Buffer as `raw` for identity). */
  body: Buffer;
}
