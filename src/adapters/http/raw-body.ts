/**
 * The body of a game request, read as the bytes that were sent (spec: Authentication rule 1, "Sign the
 * raw body bytes exactly as sent"; Authentication table, "Content-Type: application/json").
 *
 * - **415 before anything is read.** A POST must say `Content-Type: application/json` (a `charset`
 *   parameter, when given, must be utf-8; other parameters are ignored): 415 `unsupported_media_type`.
 *   The GET manifest has no body and its Content-Type is not looked at. `Content-Encoding` may be absent,
 *   `identity`, `gzip` (or `x-gzip`) or `deflate` (zlib); anything else, including `br` and stacked
 *   codings, is 415 `unsupported_encoding`.
 * - **413 by size** before parsing: more than `limit` bytes on the wire (or a Content-Length saying so).
 * - **The signature covers the bytes as sent**, i.e. the content-coded bytes when a Content-Encoding is
 *   used: a client compresses first and signs what it sends. So the service checks the signature before
 *   it inflates anything (no decompression for an unauthenticated caller), and {@link decodeBody}, called
 *   after authentication, inflates at most `limit` bytes (more: 413, as if it had been sent that large;
 *   bytes that are not valid gzip/deflate: 400 `unreadable_body`).
 *
 * A refused request's remaining bytes are read and dropped before the answer (as body-parser does), so a
 * client that sends its whole body before reading the response still gets the envelope.
 */
import type { Request, RequestHandler } from 'express';
import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../../errors.js';

/** Content codings the service decodes (RFC 9110 §8.4.1; `x-gzip` is gzip). */
export const SUPPORTED_ENCODINGS = ['gzip', 'deflate'] as const;
export type BodyEncoding = 'identity' | (typeof SUPPORTED_ENCODINGS)[number];

/** What {@link rawBody} read: the bytes as sent, their content coding, and the size limit in bytes. */
export interface ReceivedBody {
  bytes: Buffer;
  encoding: BodyEncoding;
  limit: number;
}

const received = new WeakMap<Request, ReceivedBody>();

/** The body {@link rawBody} read for `req`; an empty identity body when it did not run (never on a game route). */
export function receivedBody(req: Request): ReceivedBody {
  return received.get(req) ?? { bytes: Buffer.alloc(0), encoding: 'identity', limit: 0 };
}

/**
 * The content coding named by a Content-Encoding header value.
 * @throws {UnsupportedMediaTypeError} 415 `unsupported_encoding` for anything but one supported coding.
 */
export function parseContentEncoding(header: string | undefined): BodyEncoding {
  if (header === undefined) return 'identity'; // nearly every request: no header, no parsing
  const codings = header.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return 'identity';
  const only = codings.length === 1 ? (codings[0] === 'x-gzip' ? 'gzip' : codings[0]) : undefined;
  if (only === 'gzip' || only === 'deflate') return only;
  throw new UnsupportedMediaTypeError('unsupported_encoding', `Content-Encoding must be absent, identity, gzip or deflate (got "${String(header).slice(0, 40)}")`);
}

/**
 * Checks a POST's Content-Type header value.
 * @throws {UnsupportedMediaTypeError} 415 `unsupported_media_type` unless it is application/json with no
 *   charset or charset utf-8.
 */
export function checkJsonContentType(header: string | undefined): void {
  if (header === 'application/json' || header === 'application/json; charset=utf-8') return; // what clients send: no parsing
  const [type, ...params] = (header ?? '').split(';');
  const charset = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('charset='))?.slice(8).replace(/^"|"$/g, '');
  if (type?.trim().toLowerCase() === 'application/json' && (charset === undefined || charset === 'utf-8' || charset === 'utf8')) return;
  throw new UnsupportedMediaTypeError('unsupported_media_type', `Content-Type must be application/json (UTF-8); got "${String(header ?? '').slice(0, 60)}"`);
}

/**
 * Express middleware of the five game routes: checks the media type and coding, then reads the body
 * (at most `limit` bytes) for {@link receivedBody}. Errors go to the error handler once the request's
 * bytes have been read off.
 */
export function rawBody(limit: number): RequestHandler {
  return (req, _res, next) => {
    let refused: unknown = null;
    let encoding: BodyEncoding = 'identity';
    try {
      if (req.method === 'POST') checkJsonContentType(req.headers['content-type']);
      encoding = parseContentEncoding(req.headers['content-encoding']);
      const declared = Number(req.headers['content-length']);
      if (declared > limit) refused = new PayloadTooLargeError(limit);
    } catch (err) {
      refused = err;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      if (refused) return next(refused);
      // A heartbeat body mostly arrives as one chunk: no copy then.
      received.set(req, { bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), encoding, limit });
      next();
    };
    const onData = (chunk: Buffer) => {
      if (refused) return; // read off and dropped
      size += chunk.length;
      if (size > limit) {
        refused = new PayloadTooLargeError(limit);
        chunks.length = 0;
      } else chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', settle);
    req.once('error', () => {
      refused ??= new ValidationError('the request body could not be read', 'unreadable_body');
      settle();
    });
    // A client gone before the end of its body: nobody to answer, but the chain must not hang.
    req.once('close', () => {
      if (!req.readableEnded) {
        refused ??= new ValidationError('the request body ended early', 'unreadable_body');
        settle();
      }
    });
  };
}

const gunzipAsync = promisify(gunzip);
const inflateAsync = promisify(inflate);

/**
 * The body as the client serialised it: `body.bytes` inflated per its coding (off the event loop, in
 * libuv's pool), at most `body.limit` bytes. Call only after the signature over `body.bytes` is verified.
 * @throws {PayloadTooLargeError} 413 when the inflated body is over the limit.
 * @throws {ValidationError} 400 `unreadable_body` when the bytes are not valid for their coding.
 */
export async function decodeBody(body: ReceivedBody): Promise<Buffer> {
  if (body.encoding === 'identity' || body.bytes.length === 0) return body.bytes; // nothing to inflate
  const options = { maxOutputLength: Math.max(1, body.limit) };
  try {
    return await (body.encoding === 'gzip' ? gunzipAsync(body.bytes, options) : inflateAsync(body.bytes, options));
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PayloadTooLargeError(body.limit);
    throw new ValidationError(`the body is not valid ${body.encoding} data`, 'unreadable_body');
  }
}
