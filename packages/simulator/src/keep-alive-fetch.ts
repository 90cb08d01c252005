/**
 * A cheap {@link FetchLike} for the simulator: HTTP/1.1 keep-alive written straight onto `net` (or `tls`)
 * sockets, one connection per request in flight, no pipelining. A load generator that spends its core
 * on its own HTTP stack measures itself (issue #15 item 4), so each request costs one `write` of one
 * buffer (request head and body together) and its answer is parsed from the socket's chunks with a few
 * `indexOf`s: no ClientRequest/IncomingMessage streams, no agent bookkeeping, no listeners added per
 * request on the socket; plain TCP reads go into one buffer shared by every connection. The node:http
 * keep-alive agent this replaces cost about twice the CPU per request, the global fetch (undici) 4–6×
 * (docs/benchmarks.md, "Simulator CPU per request"). Not part of the service.
 *
 * What it does and does not do:
 * - Connections: an idle one is reused (LIFO), else a new one is opened; there is no cap, so a request
 *   never waits for a free connection (that wait would be counted as service latency). At most
 *   `maxFreeSockets` idle connections per origin are kept; the rest are closed. An idle connection the
 *   server closes is dropped from the pool when its FIN arrives.
 * - Responses: status line, headers (read lazily: only `get()` parses them), a `Content-Length` or
 *   chunked body, or a body up to the close when neither is given; 1xx interim responses are skipped;
 *   `Connection: close` is honoured. A response that cannot be parsed destroys the connection and
 *   rejects with a network error.
 * - Requests: the transport's headers as given (a value with CR or LF is refused with a TypeError, as
 *   fetch does), `Host` and `Content-Length` added; the body is the exact bytes the transport signed.
 * - A request aborted by `init.signal` (the transport's per-attempt timeout) destroys its connection and
 *   rejects with the signal's reason, a `TimeoutError`, so the transport reports it as a timeout
 *   (outcome unknown). A connection that fails or closes before the whole answer arrived rejects with a
 *   network error (`cause.code` `ECONNRESET` for a close); nothing is retried here: the transport and the
 *   client decide, as they do for any fetch.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { FetchLike, FetchLikeResponse } from '@gis/client';

export interface KeepAliveFetchOptions {
  /**
   * Idle connections kept per origin for reuse. Default 2048: a fleet of thousands of servers has at least
   * that many connections to the service in reality, and a connection closed after a burst is a connect
   * (and an accept on the API) a little later.
   */
  maxFreeSockets?: number;
}

/** Every connection of one fetch, and its limits. */
interface Pool {
  maxFree: number;
  all: Set<Connection>;
  closed: boolean;
}

/** A parsed origin: where to connect and what to send as `Host`. */
interface Origin {
  key: string;
  secure: boolean;
  hostname: string;
  port: number;
  host: string;
  idle: Connection[];
}

const CRLF2 = Buffer.from('\r\n\r\n', 'latin1');
const EMPTY = Buffer.alloc(0);
/** A method or header name must be an HTTP token. */
const BAD_TOKEN = /[^!#$%&'*+\-.^_`|~0-9A-Za-z]/;
/** Header names already found to be tokens (a client sends the same few names on every request). */
const GOOD_NAMES = new Set<string>();

/** True when `name` is an HTTP token (remembered, so each name is checked once). */
function validName(name: string): boolean {
  if (GOOD_NAMES.has(name)) return true;
  if (BAD_TOKEN.test(name)) return false;
  GOOD_NAMES.add(name);
  return true;
}
/** A header value: visible latin1 characters, spaces and tabs. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** A request target: no spaces or control characters. */
const BAD_PATH = /[^\x21-\x7e]/;
/** Where every plain-TCP connection of the process reads (`onread`); answers are parsed or copied out at once. */
const READ_BUFFER = Buffer.alloc(64 * 1024);
/** Longest response head accepted (Node's default limit), bytes. */
const MAX_HEAD_BYTES = 16 * 1024;

/** The error a request aborted by `signal` rejects with: its reason when that is an Error, else an `AbortError`. */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(`request aborted: ${String(reason)}`, 'AbortError');
}

/** A failure before the whole answer arrived, shaped as fetch reports it (`cause.code`). */
function networkError(message: string, code: string): Error {
  return new TypeError(`fetch failed: ${message}`, { cause: Object.assign(new Error(message), { code }) });
}

/**
 * Response headers, parsed on the first {@link ResponseHeaders.get} (most answers are read for their
 * status and body only): names case-insensitive, repeated headers joined with `, ` as fetch does.
 */
class ResponseHeaders {
  private map: Map<string, string> | null = null;

  /** @param head the response head without its final CRLF CRLF (status line first). */
  constructor(private readonly head: string) {}

  get(name: string): string | null {
    if (!this.map) {
      this.map = new Map();
      for (const line of this.head.split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const key = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        const prev = this.map.get(key);
        this.map.set(key, prev === undefined ? value : `${prev}, ${value}`);
      }
    }
    return this.map.get(name.toLowerCase()) ?? null;
  }
}

/** One answer, in the shape the transport reads. */
class Answer implements FetchLikeResponse {
  constructor(
    readonly status: number,
    readonly headers: ResponseHeaders,
    private readonly body: string,
  ) {}

  text(): Promise<string> {
    return Promise.resolve(this.body);
  }
}

/**
 * The body of a chunked response once complete: `[body, bytes consumed]`, or null while incomplete.
 * @throws {Error} when the framing is malformed.
 */
function dechunk(raw: Buffer): [Buffer, number] | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at, 'latin1');
    if (eol < 0) return null;
    const size = Number.parseInt(raw.toString('latin1', at, eol).split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size) || size < 0) throw new Error('bad chunk size');
    if (size === 0) {
      // Trailers (ignored) up to an empty line.
      const end = raw.indexOf(CRLF2, eol);
      if (end >= 0) return [Buffer.concat(parts), end + 4];
      return raw.length >= eol + 4 && raw.toString('latin1', eol, eol + 4) === '\r\n\r\n' ? [Buffer.concat(parts), eol + 4] : null;
    }
    if (raw.length < eol + 2 + size + 2) return null;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** One keep-alive connection and the request in flight on it, if any. */
class Connection {
  private readonly socket: net.Socket;
  private resolve: ((r: FetchLikeResponse) => void) | null = null;
  private reject: ((e: Error) => void) | null = null;
  private signal: AbortSignal | undefined;
  /** Bytes of the current answer received so far. */
  private buf: Buffer = EMPTY;
  /** Parsed head of the current answer: status, head text, where its body starts, how long it is. */
  private status = 0;
  private head = '';
  private bodyAt = -1;
  /** Body length from Content-Length; -1 chunked; -2 until the connection closes. */
  private bodyLength = 0;
  private keepAlive = true;
  private closed = false;
  private readonly onAbort = (): void => {
    this.fail(abortError(this.signal!));
  };

  constructor(private readonly origin: Origin, private readonly pool: Pool) {
    pool.all.add(this);
    const opts = { host: origin.hostname, port: origin.port };
    if (origin.secure) {
      this.socket = tls.connect({ ...opts, servername: net.isIP(origin.hostname) ? undefined : origin.hostname });
      this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    } else {
      // Plain TCP reads into the one buffer shared by every connection (no allocation per answer):
      // what an answer still needs after the callback returns is copied out of it.
      this.socket = net.connect({ ...opts, onread: { buffer: READ_BUFFER, callback: (n: number) => this.onData(READ_BUFFER.subarray(0, n)) } });
    }
    this.socket.setNoDelay(true);
    this.socket.on('error', (err: NodeJS.ErrnoException) => this.fail(networkError(err.message, err.code ?? 'ECONNRESET')));
    this.socket.on('end', () => this.onEnd());
    this.socket.on('close', () => this.onClose());
  }

  /** Sends one request (`bytes`: head and body); settles through the callbacks. */
  send(bytes: Buffer, signal: AbortSignal | undefined, resolve: (r: FetchLikeResponse) => void, reject: (e: Error) => void): void {
    this.resolve = resolve;
    this.reject = reject;
    this.signal = signal;
    this.buf = EMPTY;
    this.bodyAt = -1;
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.socket.write(bytes);
  }

  /** True while a request on this connection waits for its answer. */
  private get waiting(): boolean {
    return this.resolve !== null;
  }

  /** Bytes arrived; returns true (for `onread`: keep reading). */
  private onData(chunk: Buffer): true {
    if (!this.resolve) {
      // Nothing was asked: a server that talks out of turn cannot be trusted with the next request.
      this.socket.destroy();
      return true;
    }
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    try {
      if (this.bodyAt >= 0 || this.parseHead()) this.tryFinish(false);
    } catch (err) {
      this.fail(networkError(`bad response: ${(err as Error).message}`, 'HPE_INVALID'));
      return true;
    }
    // An answer still incomplete keeps its bytes: out of the shared read buffer, which the next read reuses.
    if (this.waiting && this.buf.buffer === READ_BUFFER.buffer) this.buf = Buffer.from(this.buf);
    return true;
  }

  /** Parses the head once it is complete; false while it is not. @throws on a malformed head. */
  private parseHead(): boolean {
    for (;;) {
      const end = this.buf.indexOf(CRLF2);
      if (end < 0) {
        if (this.buf.length > MAX_HEAD_BYTES) throw new Error('response head too large');
        return false;
      }
      const head = this.buf.toString('latin1', 0, end);
      if (!head.startsWith('HTTP/1.') || head.charCodeAt(8) !== 32) throw new Error('not an HTTP/1.x status line');
      const status = Number(head.slice(9, 12));
      if (!Number.isInteger(status) || status < 100) throw new Error('bad status');
      if (status < 200) {
        // An interim answer (100 Continue, 103 Early Hints): the real one follows.
        this.buf = this.buf.subarray(end + 4);
        continue;
      }
      const lower = head.toLowerCase();
      this.status = status;
      this.head = head;
      this.bodyAt = end + 4;
      this.keepAlive = !lower.startsWith('http/1.0') && !/\r\nconnection:[^\r]*close/.test(lower);
      const cl = /\r\ncontent-length:[ \t]*(\d+)/.exec(lower);
      if (status === 204 || status === 304) this.bodyLength = 0;
      else if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) this.bodyLength = -1;
      else if (cl) this.bodyLength = Number(cl[1]);
      else this.bodyLength = -2;
      return true;
    }
  }

  /** Settles the request when its body is complete (or, for a body read until close, when `closing`). */
  private tryFinish(closing: boolean): void {
    let body: Buffer;
    let used: number;
    if (this.bodyLength >= 0) {
      used = this.bodyAt + this.bodyLength;
      if (this.buf.length < used) return;
      body = this.buf.subarray(this.bodyAt, used);
    } else if (this.bodyLength === -1) {
      const done = dechunk(this.buf.subarray(this.bodyAt));
      if (!done) return;
      body = done[0];
      used = this.bodyAt + done[1];
    } else {
      if (!closing) return;
      body = this.buf.subarray(this.bodyAt);
      used = this.buf.length;
      this.keepAlive = false;
    }
    // Bytes beyond the answer: the server sent something nobody asked for; do not reuse the connection.
    if (this.buf.length > used) this.keepAlive = false;
    const answer = new Answer(this.status, new ResponseHeaders(this.head), body.toString('utf8'));
    const resolve = this.resolve!;
    this.settle();
    if (this.keepAlive && !this.closed) this.release();
    else this.socket.destroy();
    resolve(answer);
  }

  /** Back to the origin's idle pool, or closed when the pool is full. */
  private release(): void {
    if (!this.pool.closed && this.origin.idle.length < this.pool.maxFree) this.origin.idle.push(this);
    else this.socket.destroy();
  }

  /** Clears the request in flight (its listener and buffers). */
  private settle(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.resolve = null;
    this.reject = null;
    this.signal = undefined;
    this.buf = EMPTY;
  }

  /** The request in flight fails with `err`; the connection is not reused. */
  private fail(err: Error): void {
    const reject = this.reject;
    this.settle();
    this.closed = true;
    this.socket.destroy();
    reject?.(err);
  }

  private onEnd(): void {
    if (this.resolve && this.bodyAt >= 0 && this.bodyLength === -2) {
      this.closed = true;
      this.tryFinish(true);
      return;
    }
    this.fail(networkError('connection closed by the server before the answer was complete', 'ECONNRESET'));
  }

  private onClose(): void {
    this.closed = true;
    this.pool.all.delete(this);
    const i = this.origin.idle.indexOf(this);
    if (i >= 0) this.origin.idle.splice(i, 1);
    if (this.resolve) this.fail(networkError('connection closed before the answer was complete', 'ECONNRESET'));
  }

  /** Closes the connection (the fetch is being closed). */
  destroy(): void {
    this.socket.destroy();
  }
}

/** Creates a keep-alive fetch; `close()` closes every connection (requests in flight fail) and refuses new requests. */
export function keepAliveFetch(opts: KeepAliveFetchOptions = {}): FetchLike & { close(): void } {
  const pool: Pool = { maxFree: opts.maxFreeSockets ?? 2048, all: new Set(), closed: false };
  // Origins parsed once (a URL parse per request is measurable at thousands a second).
  const origins = new Map<string, Origin>();

  const originOf = (key: string): Origin => {
    let o = origins.get(key);
    if (!o) {
      const u = new URL(key);
      const secure = u.protocol === 'https:';
      o = { key, secure, hostname: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || (secure ? 443 : 80), host: u.host, idle: [] };
      origins.set(key, o);
    }
    return o;
  };

  const send: FetchLike = (url, init) =>
    new Promise<FetchLikeResponse>((resolve, reject) => {
      const signal = init.signal;
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      if (pool.closed) {
        reject(networkError('keep-alive fetch closed', 'ECONNREFUSED'));
        return;
      }
      const slash = url.indexOf('/', url.indexOf('//') + 2);
      const origin = originOf(slash < 0 ? url : url.slice(0, slash));
      const path = slash < 0 ? '/' : url.slice(slash);
      const body = init.body ?? EMPTY;
      // Every piece of the head is checked (a CR or LF would smuggle a header or a request; a character
      // beyond latin1 cannot be sent as a header byte), as fetch refuses such headers too.
      if (BAD_TOKEN.test(init.method) || BAD_PATH.test(path)) {
        reject(new TypeError(`invalid request line: ${init.method} ${path}`));
        return;
      }
      let head = `${init.method} ${path} HTTP/1.1\r\nhost: ${origin.host}\r\n`;
      for (const name in init.headers) {
        const value = init.headers[name]!;
        if (!validName(name) || BAD_VALUE.test(value)) {
          reject(new TypeError(`invalid request header ${JSON.stringify(name)}`));
          return;
        }
        head += `${name}: ${value}\r\n`;
      }
      head += `content-length: ${body.byteLength}\r\n\r\n`;
      const bytes = Buffer.allocUnsafe(head.length + body.byteLength);
      bytes.write(head, 0, 'latin1');
      bytes.set(body, head.length);
      const conn = origin.idle.pop() ?? new Connection(origin, pool);
      conn.send(bytes, signal, resolve, reject);
    });

  return Object.assign(send, {
    close(): void {
      pool.closed = true;
      for (const o of origins.values()) o.idle.length = 0;
      for (const c of pool.all) c.destroy();
    },
  });
}
