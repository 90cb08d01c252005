/**
 * Issue #19/#28, end to end: the Luau SDK under real Luau (../shared/tools/luau/luau, the shim of
 * sdk/luau/test/shim.luau in bridged mode: the CLI has no sockets, so each RequestAsync is printed, sent
 * by this test and answered through the REPL's stdin) against the real API (real Redis and Postgres)
 * through a small fault-injecting proxy. The client heartbeats a roster and events; an event the API
 * refuses (a type of 65 characters, queued as an older SDK would have) is named by the 400's
 * error.pointer, dropped and reported, and the rest are stored; it survives a 409 (a real replay: the proxy forwards the request, then forwards the same bytes
 * again and returns that 409), a 429 with Retry-After and a 503, a ban check shed with 503 `overloaded` +
 * Retry-After (asked again after it), sends every request with its own signed `?nonce=`, receives a kick
 * issued through the commands service, acks it, reports a freeze it has no handler for as failed, checks bans and doors,
 * flushes on BindToClose, and every event reaches Postgres exactly once.
 */
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { Harness, type TestGame } from '../support/harness.js';
import { issueCommand } from '../../src/commands/command-service.js';
import { banService } from '../bans/support.js';
import { doorWith } from '../doors/door-fixtures.js';
import { startLuau } from './luau-runner.js';

type Fault = '409' | '429' | '503';

/** One heartbeat that reached the proxy: when, and what the proxy did with it. */
interface Arrival {
  atMs: number;
  fault: Fault | null;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A proxy in front of the API that applies queued faults to heartbeats, in order. */
class FaultProxy {
  readonly faults: Fault[] = [];
  readonly heartbeats: Arrival[] = [];
  /** Every request target (path and query) that reached the proxy. */
  readonly urls: string[] = [];
  /** Ban checks to answer 503 `overloaded` with Retry-After: 1 before the API sees them (load shedding). */
  shedBanChecks = 0;
  readonly server: Server;

  constructor(private readonly upstream: string) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async forward(req: IncomingMessage, body: Buffer): Promise<Response> {
    const headers: Record<string, string> = {};
    for (const name of ['authorization', 'x-service-timestamp', 'x-service-signature', 'content-type']) {
      const v = req.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    return fetch(`${this.upstream}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    this.urls.push(req.url ?? '');
    const isHeartbeat = (req.url ?? '').split('?')[0] === '/api/v1/game/heartbeat';
    const fault = isHeartbeat ? (this.faults.shift() ?? null) : null;
    if (isHeartbeat) this.heartbeats.push({ atMs: Date.now(), fault });
    const envelope = (code: string) => JSON.stringify({ error: { code, message: code, requestId: 'proxy' }, serverTime: new Date().toISOString() });
    if ((req.url ?? '').startsWith('/api/v1/game/bans/check?') && this.shedBanChecks > 0) {
      this.shedBanChecks--;
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(envelope('overloaded'));
      return;
    }
    if (fault === '429') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' }).end(envelope('rate_limited'));
      return;
    }
    if (fault === '503') {
      res.writeHead(503, { 'content-type': 'application/json' }).end(envelope('unavailable'));
      return;
    }
    // 409: the API accepts the request, then sees the same signed bytes again and rejects the replay.
    let upstream = await this.forward(req, body);
    if (fault === '409') {
      await upstream.arrayBuffer();
      upstream = await this.forward(req, body);
    }
    const text = await upstream.text();
    const out: Record<string, string> = { 'content-type': upstream.headers.get('content-type') ?? 'application/json' };
    const retryAfter = upstream.headers.get('retry-after');
    if (retryAfter) out['retry-after'] = retryAfter;
    res.writeHead(upstream.status, out).end(text);
  }
}

/** One RequestAsync the Luau side printed: `REQ <id> <hex of {method, url, headers, body}>`. */
interface BridgedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Performs a bridged request; the answer as the shim reads it (an `error` string is what the platform raises). */
async function perform(r: BridgedRequest): Promise<{ status: number; headers: Record<string, string>; body: string } | { error: string }> {
  try {
    const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.method === 'GET' ? undefined : r.body });
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => (headers[k] = v));
    return { status: res.status, headers, body: await res.text() };
  } catch {
    return { error: 'HttpError: ConnectFail' };
  }
}

describe('Luau SDK: end to end under real Luau against the real API', function () {
  this.timeout(120_000);
  const h = new Harness();
  let g: TestGame;
  let api: Server;
  let proxy: FaultProxy;
  let lua: ChildProcessWithoutNullStreams | undefined;
  let cleanup = (): void => {};

  before(async () => {
    g = await h.game(undefined, 15);
    await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }], { key: 'lobby', failMode: 'open' });
    await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['101'] }], { key: 'vault', failMode: 'closed' });
    await banService(h).create({ workspaceId: g.workspaceId, externalId: '666', scope: 'game', gameId: g.gameId, reason: 'cheating', issuedBy: 'mod' });
    api = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => api.once('listening', r));
    proxy = new FaultProxy(`http://127.0.0.1:${(api.address() as AddressInfo).port}`);
  });

  after(async () => {
    lua?.kill();
    cleanup();
    proxy.server.closeAllConnections();
    proxy.server.close();
    api.closeAllConnections();
    api.close();
    await h.close();
  });

  it('heartbeats, survives 409/429/503, acks a kick, reports a failure, checks bans and doors, stores every event once', async () => {
    const baseUrl = await proxy.listen();
    const started = startLuau('test/e2e.luau', [baseUrl, g.key, String(Date.now())]);
    const proc = started.proc;
    lua = proc;
    cleanup = started.cleanup;
    // The REPL runs what we type: answers to requests, and a pump that lets due threads run.
    const send = (statement: string): void => {
      if (proc.stdin.writable) proc.stdin.write(`${statement}\n`);
    };
    const pump = setInterval(() => send('__pump()'), 20);
    proc.once('exit', () => clearInterval(pump));
    proc.stdin.on('error', () => {}); // EPIPE after the REPL ended: nothing left to answer
    const lines: string[] = [];
    let stderr = '';
    const waiters: { prefix: string; resolve: (line: string) => void }[] = [];
    let partial = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const parts = partial.split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        if (line.startsWith('REQ ')) {
          const [, id, hex] = line.split(' ');
          const request = JSON.parse(Buffer.from(hex!, 'hex').toString('utf8')) as BridgedRequest;
          void perform(request).then((answer) => send(`__resp(${id}, "${Buffer.from(JSON.stringify(answer), 'utf8').toString('hex')}")`));
          continue;
        }
        lines.push(line);
        if (process.env.LUAU_E2E_DEBUG) console.log(line);
        for (const w of waiters.filter((x) => line.startsWith(x.prefix))) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    });
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const waitLine = (prefix: string): Promise<string> => {
      const seen = lines.find((l) => l.startsWith(prefix));
      if (seen) return Promise.resolve(seen);
      return Promise.race([
        new Promise<string>((resolve) => waiters.push({ prefix, resolve })),
        exited.then((code) => {
          throw new Error(`luau exited ${code} before "${prefix}"\n${lines.join('\n')}\n${stderr}`);
        }),
      ]);
    };
    const nudge = () => send('__nudge()');

    const ready = await waitLine('READY');
    expect(ready).to.equal('READY 15'); // the interval the service set, not the SDK's default 20
    proxy.faults.push('409', '429', '503');
    proxy.shedBanChecks = 1; // the first ban check is shed: the SDK waits Retry-After (+ jitter) and asks again
    nudge();
    await waitLine('RECOVERED');
    expect(proxy.faults).to.deep.equal([]);

    const kick = await issueCommand(
      { db: h.db, redis: h.redis, keySpace: h.keySpace },
      { gameId: g.gameId, type: 'kick', payload: { reason: 'rule 7' }, target: { externalId: '101' }, issuedBy: 'test:mod' },
    );
    const freeze = await issueCommand(
      { db: h.db, redis: h.redis, keySpace: h.keySpace },
      { gameId: g.gameId, type: 'freeze', payload: {}, target: { externalId: '102' }, issuedBy: 'test:mod' },
    );
    nudge();
    expect(await waitLine('KICKED')).to.equal('KICKED 101 rule 7');
    await waitLine('DONE');
    proc.stdin.end(); // the REPL ends at the end of its input
    expect(await exited, `${lines.join('\n')}\n${stderr}`).to.equal(0);
    expect(lines.filter((l) => /^(TIMEOUT|TASK_ERROR|SETUP_ERROR)/.test(l)), lines.join('\n')).to.deep.equal([]);

    // The event the API refused was named by error.pointer, dropped and reported; track() refuses such a type itself.
    expect(lines).to.include('TRACK_REFUSED true');
    expect(lines.filter((l) => l.startsWith('REJECTED '))).to.deep.equal(['REJECTED legacy-bad-1 400 /events/2/type']);

    // Heartbeats as the proxy saw them: the 400 naming the legacy event, its resend at once (200), then
    // 409 (re-signed retry) -> 429 -> 503 -> 200.
    const hb = proxy.heartbeats;
    expect(hb.slice(0, 6).map((a) => a.fault)).to.deep.equal([null, null, '409', '429', '503', null]);
    // Retry-After: 2 is honoured, plus up to 1 s of jitter (lower bound only: a slow machine can only make the gap longer).
    expect(hb[4]!.atMs - hb[3]!.atMs).to.be.at.least(1950);
    const limited = lines.filter((l) => l.startsWith('PROBLEM rate_limited 429 '));
    expect(limited).to.have.length(1);
    expect(Number(limited[0]!.split(' ')[3])).to.be.within(2, 3);
    // Every request carried a fresh nonce in its query (signed with it), the 409 retry too; the 409 itself
    // came from the proxy sending the very same bytes to the API a second time. The manifest names its
    // server ahead of the nonce (its own manifest quota), and the API accepted it signed that way.
    expect(proxy.urls.every((u) => /[?&]nonce=[0-9A-Fa-f]{32}$/.test(u)), proxy.urls.join('\n')).to.equal(true);
    const manifests = proxy.urls.filter((u) => u.startsWith('/api/v1/game/doors/manifest?'));
    expect(manifests.length).to.be.at.least(1);
    expect(manifests.every((u) => /^\/api\/v1\/game\/doors\/manifest\?externalServerId=luau-srv&nonce=/.test(u))).to.equal(true);
    expect(new Set(proxy.urls).size).to.equal(proxy.urls.length);
    expect(lines.some((l) => /^PROBLEM server_error 503 /.test(l))).to.equal(true);

    expect(proxy.shedBanChecks).to.equal(0);
    expect(lines.find((l) => l.startsWith('BAN 666'))).to.equal('BAN 666 true service cheating');
    expect(lines.find((l) => l.startsWith('BAN 102'))).to.equal('BAN 102 false service');
    const door = (key: string) => lines.filter((l) => l.startsWith(`DOOR 102 ${key} `));
    expect(door('lobby')[0]).to.match(/^DOOR 102 lobby true \S+ service$/);
    expect(door('lobby')[1]).to.match(/^DOOR 102 lobby true \S+ (cache|service)$/);
    expect(door('vault')[0]).to.match(/^DOOR 102 vault false \S+ (cache|service)$/);
    expect(door('nope')[0]).to.equal('DOOR 102 nope false unknown_door service');
    expect(lines.filter((l) => l.startsWith('DONE'))).to.have.length(1);
    expect(lines.find((l) => l.startsWith('DONE'))).to.match(/^DONE queued=0 /);

    // Every tracked event is in Postgres exactly once; the kick is acked; the final roster lacks 101.
    await h.flush(g.gameId);
    const tracked = lines.filter((l) => l.startsWith('TRACKED ')).map((l) => l.slice(8));
    expect(tracked).to.have.length(6);
    const rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId }, select: { eventId: true, type: true, externalServerId: true } });
    expect(rows.map((r) => r.eventId).sort()).to.deep.equal([...tracked].sort());
    expect(rows.every((r) => r.externalServerId === 'luau-srv')).to.equal(true);
    const command = await h.db.command.findUnique({ where: { id: kick.id } });
    expect(command?.status).to.equal('acked');
    // No handler for freeze: reported in failures with the reason, never acked.
    const failed = await h.db.command.findUnique({ where: { id: freeze.id } });
    expect(failed).to.include({ status: 'failed', failureReason: 'no command handler' });
  });
});
