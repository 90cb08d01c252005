/**
 * A local imitation of the main game platform's cloud messaging API (node:http on 127.0.0.1, ephemeral
 * port), for the command tests, the simulator and scripts/bench/commands.ts. Not part of the service.
 *
 * `POST /messaging-service/v1/universes/<universeId>/topics/<topic>` with `x-api-key` and a JSON body
 * `{"message": "<string>"}`:
 * - wrong or missing key → 401; unreadable body, or a message over 1 KiB → 400;
 * - scripted replies ({@link CloudMessagingImitation.enqueue}) are answered first, e.g. 429 + Retry-After;
 * - with `enforceReceiveBudget`, a publish that would take the topic's receipts over 40 + 80 × S in the
 *   last 60 s (S = subscribed servers, each receiving every message) → 429 with Retry-After, like the
 *   platform's own limit;
 * - otherwise 200, and the message is handed to every subscriber of that universe and topic (how a game
 *   server's subscription receives it).
 * Every request is recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One publish as received. */
export interface RecordedPublish {
  universeId: string;
  topic: string;
  /** The `message` string, or null when the body had none. */
  message: string | null;
  /** Exact body bytes. */
  raw: string;
  apiKeyValid: boolean;
  status: number;
  /** Arrival time, epoch ms. */
  at: number;
}

export interface ScriptedReply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface ImitationOptions {
  /** The API key the imitation accepts. */
  apiKey: string;
  /** Answer 429 when a publish would exceed the receive budget. Default false. */
  enforceReceiveBudget?: boolean;
  /** Servers receiving each message, for the budget; default the number of subscribers of the topic. */
  serverCount?: () => number;
  /** The imitation's clock, epoch ms (for the budget window and `at`); default Date.now. */
  now?: () => number;
}

type Subscriber = (message: string) => void;

const PATH = /^\/messaging-service\/v1\/universes\/([^/]+)\/topics\/([^/]+)$/;
const MAX_MESSAGE_BYTES = 1024;
const WINDOW_MS = 60_000;

export class CloudMessagingImitation {
  readonly publishes: RecordedPublish[] = [];
  private readonly server: http.Server;
  private readonly script: ScriptedReply[] = [];
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  /** topic → receipts in the window: [time ms, copies delivered]. */
  private readonly receipts = new Map<string, [number, number][]>();
  private port = 0;

  constructor(private readonly opts: ImitationOptions) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 5_000;
  }

  /** Listens on an ephemeral port; resolves with the base URL (what a game's cloudApiBaseUrl is set to). */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this.baseUrl;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Answers the next publish with `reply` (before any other rule except the key and body checks). */
  enqueue(reply: ScriptedReply): void {
    this.script.push(reply);
  }

  /** Calls `fn` with every message accepted on `universeId`/`topic`; returns an unsubscribe function. */
  subscribe(universeId: string, topic: string, fn: Subscriber): () => void {
    const key = `${universeId}/${topic}`;
    const set = this.subscribers.get(key) ?? new Set<Subscriber>();
    set.add(fn);
    this.subscribers.set(key, set);
    return () => set.delete(fn);
  }

  /** Publishes accepted (200) so far. */
  get accepted(): RecordedPublish[] {
    return this.publishes.filter((p) => p.status === 200);
  }

  private overBudget(key: string, now: number): number | null {
    const servers = this.opts.serverCount?.() ?? this.subscribers.get(key)?.size ?? 0;
    const list = (this.receipts.get(key) ?? []).filter(([t]) => t > now - WINDOW_MS);
    this.receipts.set(key, list);
    const used = list.reduce((n, [, c]) => n + c, 0);
    if (used + servers <= 40 + 80 * servers) {
      list.push([now, servers]);
      return null;
    }
    return Math.max(1, Math.ceil((list[0]![0] + WINDOW_MS - now) / 1000));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const m = req.method === 'POST' ? PATH.exec(req.url ?? '') : null;
    const send = (status: number, headers: Record<string, string> = {}, body = '') => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
      return status;
    };
    if (!m) {
      send(404, {}, '{"error":"NOT_FOUND"}');
      return;
    }
    const [universeId, topic] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
    const apiKeyValid = req.headers['x-api-key'] === this.opts.apiKey;
    let message: string | null = null;
    try {
      const body = JSON.parse(raw) as { message?: unknown };
      if (typeof body.message === 'string') message = body.message;
    } catch {
      // recorded with message null, answered 400 below
    }
    const now = (this.opts.now ?? Date.now)();
    const key = `${universeId}/${topic}`;
    let status: number;
    if (!apiKeyValid) status = send(401, {}, '{"error":"UNAUTHORIZED"}');
    else if (message === null || Buffer.byteLength(message) > MAX_MESSAGE_BYTES) status = send(400, {}, '{"error":"INVALID_ARGUMENT"}');
    else if (this.script.length) {
      const r = this.script.shift()!;
      status = send(r.status, r.headers, r.body ?? '');
    } else {
      const wait = this.opts.enforceReceiveBudget ? this.overBudget(key, now) : null;
      if (wait !== null) status = send(429, { 'retry-after': String(wait) }, '{"error":"RESOURCE_EXHAUSTED"}');
      else status = send(200);
    }
    this.publishes.push({ universeId, topic, message, raw, apiKeyValid, status, at: now });
    if (status === 200 && message !== null) {
      const delivered = message;
      for (const fn of this.subscribers.get(key) ?? []) setImmediate(() => fn(delivered));
    }
  }
}
