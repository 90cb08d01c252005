/**
 * Signed heartbeat load for the process fault tests: each request on its own TCP connection (no
 * keep-alive, so "in flight" is unambiguous), each carrying fresh events. Records which events were
 * answered 200 (the ones the service promised to keep) and every status seen.
 */
import http from 'node:http';
import { sign } from '../../src/auth/signature.js';
import { event, heartbeatBody } from '../support/harness.js';

export interface Sent {
  status: number | 'refused' | 'reset';
  retryAfter?: string;
  eventIds: string[];
}

/** POSTs one signed heartbeat with `events` events for `externalServerId` to `origin`. */
export function sendHeartbeat(origin: string, key: { key: string; secret: string }, events: number, externalServerId = 'server-1'): Promise<Sent> {
  const evs = Array.from({ length: events }, () => event('kill', { externalId: 'p1' }));
  const raw = JSON.stringify(heartbeatBody(['p1'], { externalServerId, events: evs }));
  const ts = String(Math.floor(Date.now() / 1000));
  const eventIds = evs.map((e) => e.eventId);
  return new Promise((resolve) => {
    const req = http.request(`${origin}/api/v1/game/heartbeat`, {
      method: 'POST',
      agent: false,
      headers: { Authorization: `Bearer ${key.key}`, 'X-Service-Timestamp': ts, 'X-Service-Signature': sign(key.secret, ts, raw), 'Content-Type': 'application/json' },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], eventIds }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code === 'ECONNREFUSED' ? 'refused' : 'reset', eventIds }));
    req.end(raw);
  });
}

/**
 * Starts a heartbeat whose request is truly in flight at the server: headers and half the body are sent
 * now, the rest when `finish()` is called. `answered` resolves with the outcome.
 */
export function startHeartbeat(origin: string, key: { key: string; secret: string }, events: number, externalServerId = 'server-1'): { finish: () => void; answered: Promise<Sent> } {
  const evs = Array.from({ length: events }, () => event('kill', { externalId: 'p1' }));
  const raw = Buffer.from(JSON.stringify(heartbeatBody(['p1'], { externalServerId, events: evs })));
  const ts = String(Math.floor(Date.now() / 1000));
  const eventIds = evs.map((e) => e.eventId);
  let req!: http.ClientRequest;
  const answered = new Promise<Sent>((resolve) => {
    req = http.request(`${origin}/api/v1/game/heartbeat`, {
      method: 'POST',
      agent: false,
      headers: { Authorization: `Bearer ${key.key}`, 'X-Service-Timestamp': ts, 'X-Service-Signature': sign(key.secret, ts, raw), 'Content-Type': 'application/json', 'Content-Length': String(raw.length) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], eventIds }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code === 'ECONNREFUSED' ? 'refused' : 'reset', eventIds }));
  });
  const half = Math.floor(raw.length / 2);
  req.write(raw.subarray(0, half));
  return { finish: () => req.end(raw.subarray(half)), answered };
}

/** Event ids of the 200-answered heartbeats in `sent`. */
export function acceptedEventIds(sent: Sent[]): string[] {
  return sent.filter((s) => s.status === 200).flatMap((s) => s.eventIds);
}

/** Polls `check` every 250 ms until it returns true or `timeoutMs` passes; returns the last result. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** GET `url` on a fresh connection: status (or 'refused'/'reset') and elapsed ms. */
export function timedGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number | 'refused' | 'reset'; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code === 'ECONNREFUSED' ? 'refused' : 'reset', ms: performance.now() - started, body: '' }));
  });
}

/** One request of a {@link mixedLoad}: which listener, its status, how long it took and when it was answered (ms after the load began). */
export interface TimedRequest {
  kind: 'heartbeat' | 'console';
  status: number | 'refused' | 'reset';
  ms: number;
  at: number;
  retryAfter?: string;
  eventIds?: string[];
}

/**
 * Heartbeat senders (each one request at a time, `pauseMs` apart, on fresh connections, one event each)
 * and one console reader of the game's live view (every 100 ms) against a running stack, until `stop()`.
 * `results` fills as answers come; `t0` is when the load began (Date.now()).
 */
export function mixedLoad(
  stack: { url: string; consoleUrl: string; consoleToken: string },
  game: { key: string; secret: string; gameId: string },
  opts: { senders: number; pauseMs: number },
): { results: TimedRequest[]; t0: number; stop: () => Promise<void> } {
  const results: TimedRequest[] = [];
  const t0 = Date.now();
  let running = true;
  const auth = { authorization: `Bearer ${stack.consoleToken}`, 'x-moderator': 'fault-test' };
  const senders = Array.from({ length: opts.senders }, (_, i) => (async () => {
    for (let n = 0; running; n++) {
      const started = performance.now();
      const x = await sendHeartbeat(stack.url, game, 1, `load-${i}-${n % 50}`);
      results.push({ kind: 'heartbeat', status: x.status, ms: performance.now() - started, at: Date.now() - t0, retryAfter: x.retryAfter, eventIds: x.eventIds });
      await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  })());
  const consoleReader = (async () => {
    while (running) {
      const x = await timedGet(`${stack.consoleUrl}/console/api/games/${game.gameId}/live`, auth);
      results.push({ kind: 'console', status: x.status, ms: x.ms, at: Date.now() - t0 });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    results,
    t0,
    stop: async () => {
      running = false;
      await Promise.all([...senders, consoleReader]);
    },
  };
}
