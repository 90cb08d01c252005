/**
 * A local imitation of the main platform's cloud user-restriction endpoint (node:http on an ephemeral
 * port), for the platform ban write tests:
 *
 *   PATCH /cloud/v2/universes/{universe}/user-restrictions/{user}?updateMask=…&idempotencyKey.key=…&idempotencyKey.firstSent=…
 *   x-api-key: <key>    body { gameJoinRestriction: { active, duration?, privateReason, displayReason, excludeAltAccounts } }
 *
 * Like the platform it enforces its write limits (per universe, per user; windows configurable so tests
 * can scale a minute down) and answers 429 with Retry-After when one is exceeded, remembers idempotency
 * keys (a repeated key is answered from memory, not applied again), and keeps each user's restriction.
 * Tests can script failures (e.g. 503, 429) for the next requests of a user.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as received. */
export interface PlatformRequest {
  at: number;
  universeId: string;
  userId: string;
  idempotencyKey: string | null;
  firstSent: string | null;
  apiKey: string | undefined;
  body: { gameJoinRestriction?: { active?: boolean; duration?: string; privateReason?: string; displayReason?: string } } | null;
  /** Status answered. */
  status: number;
  /** Why it was refused by the imitation's own limits, if it was. */
  limited?: 'universe' | 'user';
}

export interface ImitationOptions {
  apiKey: string;
  /** Writes per universe per window (platform: 10 per 1000 ms). */
  universeMax?: number;
  universeWindowMs?: number;
  /** Writes per user per window (platform: 2 per 60 000 ms). */
  userMax?: number;
  userWindowMs?: number;
}

/** A scripted answer for the next request(s) of a user. */
export interface ScriptedFailure {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export class PlatformImitation {
  readonly requests: PlatformRequest[] = [];
  /** Current restriction per `universe/user`. */
  readonly restrictions = new Map<string, { active: boolean; duration: string | null; displayReason: string }>();
  private readonly idempotent = new Map<string, number>();
  private readonly scripts = new Map<string, ScriptedFailure[]>();
  private readonly server: http.Server;
  private readonly opts: Required<ImitationOptions>;

  private constructor(opts: ImitationOptions) {
    this.opts = { universeMax: 10, universeWindowMs: 1000, userMax: 2, userWindowMs: 60_000, ...opts };
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, Buffer.concat(chunks), res));
    });
  }

  static async start(opts: ImitationOptions): Promise<PlatformImitation> {
    const p = new PlatformImitation(opts);
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve));
    return p;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers the next `count` requests for `userId` with `failure` (before limits and idempotency). */
  failNext(userId: string, count: number, failure: ScriptedFailure): void {
    const list = this.scripts.get(userId) ?? [];
    for (let i = 0; i < count; i++) list.push(failure);
    this.scripts.set(userId, list);
  }

  /** Requests for one user, in arrival order. */
  forUser(userId: string): PlatformRequest[] {
    return this.requests.filter((r) => r.userId === userId);
  }

  /** Requests the imitation refused because a limit was exceeded. */
  get violations(): PlatformRequest[] {
    return this.requests.filter((r) => r.limited);
  }

  /** Most accepted-or-limited requests of `universeId` that arrived within any `windowMs`. */
  maxInWindow(universeId: string, windowMs: number): number {
    const times = this.requests.filter((r) => r.universeId === universeId).map((r) => r.at).sort((a, b) => a - b);
    let best = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i]! - times[j]! >= windowMs) j++;
      best = Math.max(best, i - j + 1);
    }
    return best;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private countSince(pred: (r: PlatformRequest) => boolean, since: number): PlatformRequest[] {
    return this.requests.filter((r) => r.status === 200 && !r.limited && r.at > since && pred(r));
  }

  private handle(req: http.IncomingMessage, raw: Buffer, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const m = /^\/cloud\/v2\/universes\/([^/]+)\/user-restrictions\/([^/]+)$/.exec(url.pathname);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (req.method !== 'PATCH' || !m) return send(404, { message: 'not found' });
    const now = Date.now();
    let body: PlatformRequest['body'];
    try {
      body = JSON.parse(raw.toString('utf8')) as PlatformRequest['body'];
    } catch {
      body = null;
    }
    const entry: PlatformRequest = {
      at: now,
      universeId: decodeURIComponent(m[1]!),
      userId: decodeURIComponent(m[2]!),
      idempotencyKey: url.searchParams.get('idempotencyKey.key'),
      firstSent: url.searchParams.get('idempotencyKey.firstSent'),
      apiKey: req.headers['x-api-key'] as string | undefined,
      body,
      status: 0,
    };
    this.requests.push(entry);
    const answer = (status: number, b: unknown, headers?: Record<string, string>) => {
      entry.status = status;
      send(status, b, headers);
    };
    if (entry.apiKey !== this.opts.apiKey) return answer(401, { message: 'invalid api key' });
    const scripted = this.scripts.get(entry.userId)?.shift();
    if (scripted) return answer(scripted.status, scripted.body ?? { message: 'scripted' }, scripted.headers);
    if (!body?.gameJoinRestriction || typeof body.gameJoinRestriction.active !== 'boolean') return answer(400, { message: 'gameJoinRestriction.active required' });
    if (entry.idempotencyKey && this.idempotent.has(entry.idempotencyKey)) return answer(200, { replayed: true });

    const uni = this.countSince((r) => r.universeId === entry.universeId, now - this.opts.universeWindowMs);
    const usr = this.countSince((r) => r.universeId === entry.universeId && r.userId === entry.userId, now - this.opts.userWindowMs);
    if (uni.length >= this.opts.universeMax || usr.length >= this.opts.userMax) {
      entry.limited = uni.length >= this.opts.universeMax ? 'universe' : 'user';
      return answer(429, { message: 'too many requests' }, { 'retry-after': '1' });
    }
    const g = body.gameJoinRestriction;
    this.restrictions.set(`${entry.universeId}/${entry.userId}`, { active: g.active!, duration: g.duration ?? null, displayReason: g.displayReason ?? '' });
    if (entry.idempotencyKey) this.idempotent.set(entry.idempotencyKey, 200);
    answer(200, { path: url.pathname, gameJoinRestriction: g });
  }
}
