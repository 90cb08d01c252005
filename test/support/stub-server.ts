/**
 * A scripted stand-in for the game API, for client tests (node:http on an ephemeral port).
 *
 * Like the real service it checks, in order: bearer key → HMAC-SHA256 hex signature over
 * `timestamp + raw body bytes`, or with a query string `timestamp + raw body + "?" + query` (the request
 * nonce; 401 when neither matches) → optional ±300 s window against its own clock (409
 * `timestamp_out_of_window`) → optional replay cache of signatures (409 `replayed_signature`). Then it
 * answers with the next scripted reply, or the fallback (a 200 heartbeat response). Every request is
 * recorded with its raw bytes.
 *
 * Also exports {@link scaledClock}: a clock running `speed` times faster than real time, so tests can use
 * the spec's real intervals (15–60 s) and finish in milliseconds.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rawQuery, verifyRequestSignature } from '../../src/auth/signature.js';
import { realSleep, type Clock } from '@gis/client';

/** A test key and its secret (shape `svc_live_<12 chars>.<43 chars>`). */
export const TEST_SECRET = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I';
export const TEST_KEY = `svc_live_abcdefghijkl.${TEST_SECRET}`;

/** One request as the stub received it. */
export interface RecordedRequest {
  /** 0-based arrival index. */
  index: number;
  method: string;
  path: string;
  /** Raw query string without its `?` (the request nonce, `nonce=...`), or null. */
  query: string | null;
  headers: http.IncomingHttpHeaders;
  /** Exact body bytes received. */
  raw: Buffer;
  /** Body parsed as JSON (undefined when empty or not JSON). */
  json: any;
  timestamp: string;
  signature: string;
  signatureValid: boolean;
  /** Stub clock at arrival, epoch ms. */
  receivedAt: number;
  /** Status the stub answered. */
  status?: number;
}

/** A scripted answer. `body` objects are sent as JSON; strings verbatim. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** Computes a reply for a request; undefined falls through to the next script step / fallback. */
export type Responder = (req: RecordedRequest, stub: StubServer) => Reply | undefined | Promise<Reply | undefined>;

export interface StubOptions {
  secret?: string;
  key?: string;
  clock?: Clock;
  /** Server clock = `clock.now() + serverOffsetMs` (to simulate client clock skew). */
  serverOffsetMs?: number;
  /** Reject timestamps more than 300 s from server time with 409. Default true. */
  checkWindow?: boolean;
  /** Reject a signature seen before with 409. Default true. */
  replayCache?: boolean;
  /** `config.heartbeatIntervalSeconds` of fallback 200s. Default 15. */
  intervalSeconds?: number;
}

export class StubServer {
  readonly requests: RecordedRequest[] = [];
  /** Replies used in order, one per request, before the fallback. */
  readonly script: (Reply | Responder)[] = [];
  /** Answers requests once the script is used up; default {@link ok}. */
  fallback: Responder = () => this.ok();
  intervalSeconds: number;
  /** TCP connections accepted so far (keep-alive reuse shows as fewer connections than requests). */
  connections = 0;

  private readonly server: http.Server;
  private readonly secret: string;
  private readonly key: string;
  private readonly clock: Clock;
  private readonly seen = new Set<string>();

  private constructor(private readonly opts: StubOptions) {
    this.secret = opts.secret ?? TEST_SECRET;
    this.key = opts.key ?? TEST_KEY;
    this.clock = opts.clock ?? { now: () => Date.now(), sleep: realSleep };
    this.intervalSeconds = opts.intervalSeconds ?? 15;
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', () => this.connections++);
  }

  /** Starts a stub on 127.0.0.1 with an ephemeral port. */
  static async start(opts: StubOptions = {}): Promise<StubServer> {
    const stub = new StubServer(opts);
    await new Promise<void>((resolve) => stub.server.listen(0, '127.0.0.1', resolve));
    return stub;
  }

  /** Origin, e.g. `http://127.0.0.1:40123`. */
  get url(): string {
    const addr = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${addr.port}`;
  }

  /** Server time, epoch ms. */
  serverNow(): number {
    return this.clock.now() + (this.opts.serverOffsetMs ?? 0);
  }

  /** A 200 heartbeat response: `{commands, config:{heartbeatIntervalSeconds}, serverTime}`. */
  ok(fields: { commands?: unknown[]; intervalSeconds?: number } = {}): Reply {
    return {
      status: 200,
      body: {
        commands: fields.commands ?? [],
        config: { heartbeatIntervalSeconds: fields.intervalSeconds ?? this.intervalSeconds },
        serverTime: new Date(this.serverNow()).toISOString(),
      },
    };
  }

  /** An error envelope reply with `status` and `code`. */
  error(status: number, code: string, headers?: Record<string, string>): Reply {
    return {
      status,
      headers,
      body: { error: { code, message: code, requestId: `req-${this.requests.length}` }, serverTime: new Date(this.serverNow()).toISOString() },
    };
  }

  /** Appends scripted replies. */
  enqueue(...replies: (Reply | Responder)[]): this {
    this.script.push(...replies);
    return this;
  }

  /** Resolves once at least `n` requests arrived and were answered. @throws after `timeoutMs` real ms. */
  async waitForRequests(n: number, timeoutMs = 5000): Promise<RecordedRequest[]> {
    const until = Date.now() + timeoutMs;
    while (this.requests.filter((r) => r.status !== undefined).length < n) {
      if (Date.now() > until) throw new Error(`stub: expected ${n} requests, got ${this.requests.length} within ${timeoutMs} ms`);
      await realSleep(2);
    }
    return this.requests;
  }

  /** Heartbeat requests only. */
  heartbeats(): RecordedRequest[] {
    return this.requests.filter((r) => r.path === '/api/v1/game/heartbeat');
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const timestamp = String(req.headers['x-service-timestamp'] ?? '');
    const signature = String(req.headers['x-service-signature'] ?? '');
    let json: unknown;
    try {
      json = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
    } catch {
      json = undefined;
    }
    const rec: RecordedRequest = {
      index: this.requests.length,
      method: req.method ?? '',
      path: (req.url ?? '').split('?')[0] ?? '',
      query: rawQuery(req.url ?? ''),
      headers: req.headers,
      raw,
      json,
      timestamp,
      signature,
      signatureValid: verifyRequestSignature(this.secret, timestamp, raw, rawQuery(req.url ?? ''), signature) !== null,
      receivedAt: this.clock.now(),
    };
    this.requests.push(rec);

    let reply: Reply | undefined;
    if (req.headers.authorization !== `Bearer ${this.key}`) reply = this.error(401, 'unknown_key');
    else if (!/^\d{1,12}$/.test(timestamp)) reply = this.error(401, 'missing_timestamp');
    else if (!rec.signatureValid) reply = this.error(401, 'bad_signature');
    else if ((this.opts.checkWindow ?? true) && Math.abs(this.serverNow() / 1000 - Number(timestamp)) > 300) {
      reply = this.error(409, 'timestamp_out_of_window');
    } else if ((this.opts.replayCache ?? true) && this.seen.has(signature)) {
      reply = this.error(409, 'replayed_signature');
    } else {
      if (this.opts.replayCache ?? true) this.seen.add(signature);
      while (!reply && this.script.length) {
        const step = this.script.shift()!;
        reply = typeof step === 'function' ? await step(rec, this) : step;
      }
      reply ??= (await this.fallback(rec, this)) ?? this.ok();
    }
    rec.status = reply.status;
    const body = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(body);
  }
}

/**
 * A clock whose time runs `speed` times faster than real time (from the real time at creation): `sleep(ms)`
 * takes `ms / speed` real milliseconds and `now()` advances accordingly, for every sleeper at once.
 */
export function scaledClock(speed: number): Clock {
  const realStart = performance.now();
  const virtualStart = Date.now();
  return {
    now: () => Math.floor(virtualStart + (performance.now() - realStart) * speed),
    sleep: (ms, signal) => realSleep(ms / speed, signal),
  };
}

/** Real-time sleep for tests. */
export const pause = (ms: number): Promise<void> => realSleep(ms);
