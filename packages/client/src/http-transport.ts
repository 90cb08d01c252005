/**
 * Signed HTTP transport for the game surface (spec: Authentication). Every request carries
 * `Authorization: Bearer <key>`, `X-Service-Timestamp` (integer seconds), `X-Service-Signature` (lowercase
 * hex HMAC-SHA256 keyed with the key secret over the timestamp string followed by the raw body bytes) and
 * `Content-Type: application/json`. The body is serialised once and the very same bytes are signed and
 * sent (rule 1). With {@link TransportOptions.gzipMinBytes}, a body that long is gzipped once and the
 * compressed bytes are what is signed and sent, with `Content-Encoding: gzip` (the service checks the
 * signature over the bytes as sent, before it inflates them; README "Failure behaviour").
 *
 * **Request nonce** (default on, `requestNonce`): every attempt goes to `<path>?nonce=<22 base64url
 * characters: 128 random bits>` and is signed over `timestamp + raw body + "?" + query`
 * (./signature.ts; the service's docs/api.md "Replays on a shared key"). All servers of a game share one key, so
 * without it two servers that send identical bytes in one second (two bodiless `GET doors/manifest`) sign
 * the same value and the second gets 409 from the replay cache; with it no two attempts of a fleet sign
 * the same bytes (a collision needs ~2^64 requests in one 600 s replay window). With `requestNonce: false`
 * the spec's form alone is signed (timestamp + body) and identical bytes are never signed twice in one
 * second by one instance (it waits for the next second instead).
 *
 * A 409 (timestamp outside the window, or replayed signature) is retried exactly once: wait for the next
 * whole second, re-sign with the fresh timestamp (and a fresh nonce), send again (rule 3; Errors, 409).
 *
 * Uses Node's global fetch (undici) unless another `fetch` is given; the default dispatcher keeps
 * connections alive between requests.
 */
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { NONCE_PARAM, signRequest } from './signature.js';
import { systemClock, type Clock } from './clock.js';

/** Thrown by the constructor when the key is not `svc_live_<prefix>.<secret>`. */
export class KeyFormatError extends Error {
  constructor() {
    super('API key must look like svc_live_<prefix>.<secret>');
    this.name = 'KeyFormatError';
  }
}

/** A request that got no HTTP response: connection refused/reset, DNS, or the request timeout. */
export class TransportError extends Error {
  constructor(
    readonly kind: 'network' | 'timeout',
    message: string,
    /** Latency until the failure, ms. */
    readonly latencyMs: number,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/** Options of {@link SignedTransport}; `baseUrl` and `apiKey` are required. */
export interface TransportOptions {
  /** Service origin, e.g. `http://127.0.0.1:3000` (a trailing slash is ignored); paths are appended. */
  baseUrl: string;
  /** Full server key `svc_live_<prefix>.<secret>`. */
  apiKey: string;
  clock?: Clock;
  /** Per-attempt timeout in ms (connect + response body). Default 10 000. */
  requestTimeoutMs?: number;
  /** `User-Agent` header. */
  userAgent?: string;
  /**
   * Gzip request bodies of at least this many bytes (`Content-Encoding: gzip`); the signature covers the
   * compressed bytes, as sent (spec rule 1). Default: never compress.
   */
  gzipMinBytes?: number;
  /**
   * Clock skew (|serverTime − local time|, ms) above which timestamps are corrected by the measured skew.
   * Default 30 000: well inside the ±300 s window, far above network jitter. `Infinity` disables it.
   */
  skewToleranceMs?: number;
  /** fetch implementation; default the global one. Only the subset in {@link FetchLike} is used. */
  fetch?: FetchLike;
  /**
   * Add `?nonce=<random>` to every request and sign it with the query (default true; the service's README
   * "Replays on a shared key"). False signs the spec's form only, for a service that predates the request
   * nonce.
   */
  requestNonce?: boolean;
  /** Called after every HTTP attempt (a 409 retry is a second attempt), e.g. to record latency. */
  onAttempt?: (attempt: AttemptInfo) => void;
}

/** The part of a fetch Response the transport reads. */
export interface FetchLikeResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/**
 * The part of `fetch` the transport uses: `init` has `method`, `headers` (a plain object), `body` (bytes
 * or undefined) and `signal` (the per-attempt timeout). The global `fetch` satisfies it; the simulator
 * passes a cheaper keep-alive HTTP/1.1 client written on `net` sockets (packages/simulator/src/keep-alive-fetch.ts).
 */
export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: Uint8Array; signal?: AbortSignal }) => Promise<FetchLikeResponse>;

/** One HTTP attempt as reported to {@link TransportOptions.onAttempt}. */
export interface AttemptInfo {
  method: string;
  /** Path as requested, e.g. `/api/v1/game/heartbeat`. */
  path: string;
  /** HTTP status as a string (`'200'`, `'409'`), or `'network'` / `'timeout'` when no response arrived. */
  outcome: string;
  /** Real milliseconds from sending to the end of the response body (or to the failure). */
  latencyMs: number;
  /** Response headers (undefined when no response arrived), e.g. for `Retry-After`. */
  headers?: { get(name: string): string | null };
}

/** One HTTP exchange, after the optional 409 retry. */
export interface TransportResponse {
  /** HTTP status of the last attempt. */
  status: number;
  headers: { get(name: string): string | null };
  /** Response body as text. */
  text: string;
  /** Body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  /** `error.code` of an error envelope, for logs only (clients branch on the status). */
  errorCode?: string;
  errorMessage?: string;
  /** `error.pointer` of a 400: the JSON Pointer of the first member that failed validation (e.g. `/events/1/type`). */
  errorPointer?: string;
  requestId?: string;
  /** `serverTime` of the body as epoch ms, when present (spec: every response carries it). */
  serverTimeMs?: number;
  /** Latency of each attempt in ms (one entry, or two after a 409 retry). */
  attemptLatenciesMs: number[];
  /** `X-Service-Timestamp` of each attempt, seconds. */
  timestamps: number[];
  /** The exact body bytes that were signed and sent (gzipped when {@link TransportOptions.gzipMinBytes} applied). */
  body: Buffer;
}

const KEY_PREFIX = 'svc_live_';

/** Random bytes for nonces, drawn 4 KiB at a time (one call into the CSPRNG per 256 nonces). */
let noncePool = Buffer.alloc(0);
let nonceOffset = 0;

/** A fresh request nonce: 16 random bytes (128 bits) as 22 base64url characters. */
export function nonce(): string {
  if (nonceOffset + 16 > noncePool.length) {
    noncePool = randomBytes(4096);
    nonceOffset = 0;
  }
  const value = noncePool.toString('base64url', nonceOffset, nonceOffset + 16);
  nonceOffset += 16;
  return value;
}

/**
 * Serialises a request body once: `undefined` → empty; a string or bytes are taken as already serialised;
 * anything else goes through `JSON.stringify`.
 */
export function encodeBody(body: unknown): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** Signs and sends requests for one key. One instance per game server; safe for concurrent use. */
export class SignedTransport {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  /** `Authorization` header value, made once. */
  private readonly authorization: string;
  private readonly secret: string;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly userAgent: string;
  private readonly skewToleranceMs: number;
  private readonly fetchImpl: FetchLike;
  private readonly onAttempt: ((attempt: AttemptInfo) => void) | undefined;
  private readonly nonce: boolean;
  private readonly gzipMinBytes: number;
  private lastSent: { ts: number; bytes: Buffer } | null = null;
  private measuredSkewMs = 0;
  private appliedOffsetMs = 0;

  /** @throws {KeyFormatError} when `apiKey` is not `svc_live_<prefix>.<secret>`. */
  constructor(opts: TransportOptions) {
    const dot = opts.apiKey.indexOf('.');
    if (!opts.apiKey.startsWith(KEY_PREFIX) || dot <= KEY_PREFIX.length || dot === opts.apiKey.length - 1) {
      throw new KeyFormatError();
    }
    this.apiKey = opts.apiKey;
    this.authorization = `Bearer ${opts.apiKey}`;
    this.secret = opts.apiKey.slice(dot + 1);
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.userAgent = opts.userAgent ?? 'gis-reference-client';
    this.skewToleranceMs = opts.skewToleranceMs ?? 30_000;
    this.fetchImpl = opts.fetch ?? fetch;
    this.onAttempt = opts.onAttempt;
    this.nonce = opts.requestNonce ?? true;
    this.gzipMinBytes = opts.gzipMinBytes ?? Infinity;
  }

  /** The public key prefix (safe to log). */
  get keyPrefix(): string {
    return this.apiKey.slice(KEY_PREFIX.length, this.apiKey.indexOf('.'));
  }

  /**
   * Last measured skew, ms: server time minus local time at the middle of the request (spec:
   * Authentication rule 6). Positive when the local clock is behind.
   */
  get clockSkewMs(): number {
    return this.measuredSkewMs;
  }

  /** Estimate of server time, ms since the epoch: local time plus the last measured skew. */
  serverNow(): number {
    return this.clock.now() + this.measuredSkewMs;
  }

  /** The `X-Service-Timestamp` value for now: integer seconds, skew-corrected only beyond the tolerance. */
  timestamp(): number {
    return Math.floor((this.clock.now() + this.appliedOffsetMs) / 1000);
  }

  /**
   * Sends one signed request to `path` (e.g. `/api/v1/game/heartbeat`). `body` is serialised once
   * ({@link encodeBody}); GET and HEAD send no body. Each attempt gets a fresh `?nonce=` signed with the
   * body (unless `requestNonce` is false: then identical bytes are never signed twice with the same
   * timestamp by one instance; it waits for the next second, as the replay cache would reject the second
   * signature). A 409 is retried once after the next whole second with a fresh timestamp; every other
   * status is returned to the caller, which decides (spec: Errors).
   * @throws {TransportError} when no HTTP response arrives (network error or timeout).
   */
  async request(method: string, path: string, body?: unknown): Promise<TransportResponse> {
    const upper = method.toUpperCase();
    const json = upper === 'GET' || upper === 'HEAD' ? Buffer.alloc(0) : encodeBody(body);
    // Compressed once: the same compressed bytes are signed and sent, on a 409 retry too.
    const gzip = json.length > 0 && json.length >= this.gzipMinBytes;
    const bytes = gzip ? gzipSync(json) : json;
    const fullPath = path.startsWith('/') ? path : `/${path}`;
    const url = `${this.baseUrl}${fullPath}`;
    const latencies: number[] = [];
    const timestamps: number[] = [];

    let ts = this.timestamp();
    // The same bytes signed in the same second give the same signature, which the replay cache rejects
    // (rule 3): wait for the next second instead of spending a request on a certain 409.
    if (!this.nonce && this.lastSent && this.lastSent.ts >= ts && this.lastSent.bytes.equals(bytes)) ts = await this.nextSecond(this.lastSent.ts);
    let res = await this.attempt(upper, fullPath, url, bytes, gzip, ts, latencies);
    timestamps.push(ts);
    if (res.status === 409) {
      // Spec: Errors, 409: re-sign with a fresh timestamp and retry once; a fresh timestamp means the next
      // whole second, so the signature differs from the rejected one even for an identical body.
      ts = await this.nextSecond(ts);
      res = await this.attempt(upper, fullPath, url, bytes, gzip, ts, latencies);
      timestamps.push(ts);
    }
    const out = res as TransportResponse;
    out.attemptLatenciesMs = latencies;
    out.timestamps = timestamps;
    out.body = bytes;
    return out;
  }

  /** Waits until {@link timestamp} is past `previous`; returns the new timestamp. */
  private async nextSecond(previous: number): Promise<number> {
    for (let i = 0; i < 5; i++) {
      const ts = this.timestamp();
      if (ts > previous) return ts;
      const msIntoSecond = (this.clock.now() + this.appliedOffsetMs) % 1000;
      await this.clock.sleep(1000 - msIntoSecond + 1);
    }
    return Math.max(this.timestamp(), previous + 1);
  }

  private async attempt(
    method: string,
    path: string,
    url: string,
    bytes: Buffer,
    gzip: boolean,
    ts: number,
    latencies: number[],
  ): Promise<Omit<TransportResponse, 'attemptLatenciesMs' | 'timestamps' | 'body'>> {
    const tsString = String(ts);
    this.lastSent = { ts, bytes };
    let query: string | undefined;
    if (this.nonce) {
      const q = url.indexOf('?');
      query = `${q < 0 ? '' : `${url.slice(q + 1)}&`}${NONCE_PARAM}=${nonce()}`;
      url = `${q < 0 ? url : url.slice(0, q)}?${query}`;
    }
    const headers: Record<string, string> = {
      authorization: this.authorization,
      'x-service-timestamp': tsString,
      'x-service-signature': signRequest(this.secret, tsString, bytes, query),
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': this.userAgent,
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    };
    const localStart = this.clock.now();
    const started = performance.now();
    let response: FetchLikeResponse;
    let text: string;
    // A timer cleared when the answer is in (AbortSignal.timeout cannot be cancelled: each request would
    // leave a timer behind that fires, builds a DOMException and aborts, long after the answer).
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new DOMException(`no response within ${this.timeoutMs} ms`, 'TimeoutError')), this.timeoutMs);
    try {
      response = await this.fetchImpl(url, {
        method,
        headers,
        body: method === 'GET' || method === 'HEAD' ? undefined : bytes,
        signal: ctl.signal,
      });
      text = await response.text();
      clearTimeout(timer);
    } catch (err) {
      clearTimeout(timer);
      const latency = performance.now() - started;
      latencies.push(latency);
      const e = err as Error;
      const timeout = e.name === 'TimeoutError' || e.name === 'AbortError';
      this.onAttempt?.({ method, path, outcome: timeout ? 'timeout' : 'network', latencyMs: latency });
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? e.message;
      throw new TransportError(timeout ? 'timeout' : 'network', `${method} ${url}: ${timeout ? `no response within ${this.timeoutMs} ms` : detail}`, latency);
    }
    const latency = performance.now() - started;
    latencies.push(latency);
    this.onAttempt?.({ method, path, outcome: String(response.status), latencyMs: latency, headers: response.headers });

    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const obj = (json && typeof json === 'object' ? json : {}) as { serverTime?: unknown; error?: { code?: unknown; message?: unknown; requestId?: unknown; pointer?: unknown } };
    const serverTimeMs = typeof obj.serverTime === 'string' ? Date.parse(obj.serverTime) : Number.NaN;
    if (Number.isFinite(serverTimeMs)) this.observeSkew(serverTimeMs, localStart, this.clock.now());
    const err = obj.error && typeof obj.error === 'object' ? obj.error : undefined;
    return {
      status: response.status,
      headers: response.headers,
      text,
      json,
      errorCode: typeof err?.code === 'string' ? err.code : undefined,
      errorMessage: typeof err?.message === 'string' ? err.message : undefined,
      errorPointer: typeof err?.pointer === 'string' ? err.pointer : undefined,
      requestId: typeof err?.requestId === 'string' ? err.requestId : undefined,
      serverTimeMs: Number.isFinite(serverTimeMs) ? serverTimeMs : undefined,
    };
  }

  /** Spec: Authentication rule 6, compare the local clock with serverTime; correct only large skews. */
  private observeSkew(serverMs: number, localStart: number, localEnd: number): void {
    this.measuredSkewMs = Math.round(serverMs - (localStart + localEnd) / 2);
    this.appliedOffsetMs = Math.abs(this.measuredSkewMs) > this.skewToleranceMs ? this.measuredSkewMs : 0;
  }
}
