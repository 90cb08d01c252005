/**
 * The simulator's HTTP/1.1 client (packages/simulator/src/keep-alive-fetch.ts, issue #15 item 4) against real
 * servers on loopback: node:http for what the API does (Content-Length, chunked, keep-alive, closing idle
 * connections) and raw TCP servers for what it must survive (a body up to the close, an answer spread
 * over many reads, a malformed answer, a connection dropped mid-answer), and the reference client's
 * SignedTransport on top of it, verified by the service's own signature check.
 */
import { expect } from 'chai';
import http from 'node:http';
import { once } from 'node:events';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { SignedTransport, GAME_PATHS } from '@gis/client';
import { keepAliveFetch } from '@gis/simulator';
import { StubServer, TEST_KEY } from '../support/stub-server.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  socket: net.Socket;
}

/** A node:http server answering with `handler`, recording each request and the connections it saw. */
async function httpServer(handler: (seen: Seen, res: http.ServerResponse) => void): Promise<{ url: string; seen: Seen[]; sockets: Set<net.Socket>; server: http.Server }> {
  const seen: Seen[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks), socket: req.socket };
      seen.push(s);
      handler(s, res);
    });
  });
  server.on('connection', (s: net.Socket) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, sockets, server };
}

/** A raw TCP server: `onRequest` gets each connection once its first request head is in. */
async function rawServer(onRequest: (socket: net.Socket) => void): Promise<{ url: string; server: net.Server }> {
  const server = net.createServer((socket) => {
    let head = '';
    socket.on('data', (c: Buffer) => {
      head += c.toString('latin1');
      if (head.includes('\r\n\r\n')) {
        head = '';
        onRequest(socket);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const closeServer = (s: net.Server | http.Server): Promise<void> =>
  new Promise((r) => {
    (s as http.Server).closeAllConnections?.();
    s.close(() => r());
  });

describe('simulator: keep-alive fetch', function () {
  this.timeout(10_000);
  const fetchers: { close(): void }[] = [];
  const servers: (net.Server | http.Server)[] = [];
  const make = () => {
    const f = keepAliveFetch();
    fetchers.push(f);
    return f;
  };
  afterEach(async () => {
    for (const f of fetchers.splice(0)) f.close();
    await Promise.all(servers.splice(0).map(closeServer));
  });

  it('sends the exact bytes with the given headers and reads status, body and headers of the answer', async () => {
    const s = await httpServer((_seen, res) => {
      res.setHeader('Retry-After', '3');
      res.setHeader('x-multi', ['a', 'b']);
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"overloaded","message":"Zoë 🎮"}}');
    });
    servers.push(s.server);
    const body = Buffer.from('{"note":"Zoë 🎮 – ünïcode"}', 'utf8');
    const res = await make()(`${s.url}/api/v1/game/bans/check?nonce=abc`, { method: 'POST', headers: { 'x-service-timestamp': '123', 'content-type': 'application/json' }, body });
    expect(res.status).to.equal(503);
    expect(await res.text()).to.equal('{"error":{"code":"overloaded","message":"Zoë 🎮"}}');
    expect(res.headers.get('retry-after')).to.equal('3');
    expect(res.headers.get('Retry-After')).to.equal('3');
    expect(res.headers.get('x-multi')).to.equal('a, b');
    expect(res.headers.get('x-absent')).to.equal(null);
    const [req] = s.seen;
    expect(req!.method).to.equal('POST');
    expect(req!.url).to.equal('/api/v1/game/bans/check?nonce=abc');
    expect(req!.body.equals(body)).to.equal(true);
    expect(req!.headers).to.include({ 'x-service-timestamp': '123', 'content-type': 'application/json', 'content-length': String(body.length), host: s.url.slice(7) });
  });

  it('reuses one connection for requests one after another, opens more for requests at once', async () => {
    const s = await httpServer((seen, res) => res.end(`answer to ${seen.url}`));
    servers.push(s.server);
    const f = make();
    for (let i = 0; i < 5; i++) expect(await (await f(`${s.url}/seq/${i}`, { method: 'GET', headers: {} })).text()).to.equal(`answer to /seq/${i}`);
    expect(s.sockets.size).to.equal(1);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => f(`${s.url}/par/${i}`, { method: 'POST', headers: {}, body: Buffer.from(String(i)) }).then((r) => r.text())));
    expect(answers).to.deep.equal(Array.from({ length: 8 }, (_, i) => `answer to /par/${i}`));
    expect(s.sockets.size).to.be.at.least(2);
  });

  it('reads chunked answers, answers without a body, and opens a new connection after Connection: close', async () => {
    const s = await httpServer((seen, res) => {
      if (seen.url === '/chunked') {
        res.write('{"part":1,');
        setTimeout(() => res.end('"part2":"two"}'), 20);
      } else if (seen.url === '/empty') {
        res.writeHead(204).end();
      } else {
        res.writeHead(200, { connection: 'close', 'content-length': '2' }).end('ok');
      }
    });
    servers.push(s.server);
    const f = make();
    expect(await (await f(`${s.url}/chunked`, { method: 'GET', headers: {} })).text()).to.equal('{"part":1,"part2":"two"}');
    const empty = await f(`${s.url}/empty`, { method: 'GET', headers: {} });
    expect(empty.status).to.equal(204);
    expect(await empty.text()).to.equal('');
    expect(await (await f(`${s.url}/close`, { method: 'GET', headers: {} })).text()).to.equal('ok');
    expect(await (await f(`${s.url}/chunked`, { method: 'GET', headers: {} })).text()).to.equal('{"part":1,"part2":"two"}');
    expect(s.sockets.size).to.equal(2);
  });

  it('gets a fresh connection when the server closed the idle one', async () => {
    const s = await httpServer((_seen, res) => res.end('fine'));
    servers.push(s.server);
    const f = make();
    expect(await (await f(`${s.url}/a`, { method: 'GET', headers: {} })).text()).to.equal('fine');
    const [idle] = s.sockets;
    idle!.end(); // the server gives up on the idle connection (its keep-alive timeout, a restart)
    await once(idle!, 'close');
    await new Promise((r) => setTimeout(r, 50));
    expect(await (await f(`${s.url}/b`, { method: 'GET', headers: {} })).text()).to.equal('fine');
    expect(s.sockets.size).to.equal(2);
  });

  it('reads an answer spread over many reads, one with a 100 Continue first, and a body that ends with the connection', async () => {
    const big = 'x'.repeat(300_000);
    const s = await rawServer((socket) => {
      const answer = Buffer.from(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\n\r\n${big}`, 'latin1');
      let at = 0;
      const drip = () => {
        socket.write(answer.subarray(at, (at += 65_000)));
        if (at < answer.length) setTimeout(drip, 5);
      };
      drip();
    });
    const until = await rawServer((socket) => socket.end('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end'));
    servers.push(s.server, until.server);
    const f = make();
    expect(await (await f(`${s.url}/big`, { method: 'GET', headers: {} })).text()).to.equal(big);
    const res = await f(`${until.url}/eof`, { method: 'GET', headers: {} });
    expect([res.status, await res.text(), res.headers.get('content-type')]).to.deep.equal([200, 'to the end', 'text/plain']);
  });

  it('rejects with a network error on a malformed answer and on a connection dropped mid-answer', async () => {
    const bad = await rawServer((socket) => socket.write('SMTP ready\r\n\r\n'));
    const cut = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort'));
    servers.push(bad.server, cut.server);
    const f = make();
    const errOf = (url: string) => f(url, { method: 'GET', headers: {} }).then(() => null, (e: unknown) => e as Error & { cause?: { code?: string } });
    const malformed = await errOf(`${bad.url}/x`);
    expect(malformed).to.be.instanceOf(TypeError);
    expect(malformed!.cause?.code).to.equal('HPE_INVALID');
    const dropped = await errOf(`${cut.url}/x`);
    expect(dropped).to.be.instanceOf(TypeError);
    expect(dropped!.cause?.code).to.equal('ECONNRESET');
  });

  it('rejects with a network error when nothing listens', async () => {
    const s = await httpServer((_seen, res) => res.end('gone'));
    await closeServer(s.server);
    const err = await make()(`${s.url}/x`, { method: 'GET', headers: {} }).then(() => null, (e: unknown) => e as Error & { cause?: { code?: string } });
    expect(err).to.be.instanceOf(TypeError);
    expect(err!.cause?.code).to.equal('ECONNREFUSED');
  });

  it('rejects with the signal reason when aborted and does not reuse that connection', async () => {
    const s = await httpServer((seen, res) => {
      if (seen.url !== '/slow') res.end('quick');
    });
    servers.push(s.server);
    const f = make();
    const ctl = new AbortController();
    const pending = f(`${s.url}/slow`, { method: 'GET', headers: {}, signal: ctl.signal });
    await new Promise((r) => setTimeout(r, 30));
    ctl.abort(new DOMException('no response within 30 ms', 'TimeoutError'));
    const err = await pending.then(() => null, (e: unknown) => e as Error);
    expect(err?.name).to.equal('TimeoutError');
    expect(await f(`${s.url}/after`, { method: 'GET', headers: {}, signal: AbortSignal.abort() }).then(() => null, (e: unknown) => (e as Error).name)).to.equal('AbortError');
    expect(await (await f(`${s.url}/after`, { method: 'GET', headers: {} })).text()).to.equal('quick');
    expect(s.sockets.size).to.equal(2);
  });

  it('refuses a header or request line that would split the request', async () => {
    const s = await httpServer((_seen, res) => res.end('never'));
    servers.push(s.server);
    const f = make();
    const refused = (url: string, headers: Record<string, string>) => f(url, { method: 'GET', headers }).then(() => null, (e: unknown) => e);
    expect(await refused(`${s.url}/x`, { 'x-evil': 'a\r\nx-injected: 1' })).to.be.instanceOf(TypeError);
    expect(await refused(`${s.url}/x`, { 'bad name': 'a' })).to.be.instanceOf(TypeError);
    expect(await refused(`${s.url}/x y`, {})).to.be.instanceOf(TypeError);
    expect(s.seen).to.have.length(0);
  });

  it('carries the reference client: signatures verify, answers parse, a second request reuses the connection', async () => {
    const stub = await StubServer.start();
    try {
      const t = new SignedTransport({ baseUrl: stub.url, apiKey: TEST_KEY, fetch: make() });
      const first = await t.request('POST', GAME_PATHS.heartbeat, { externalServerId: 'srv-1', players: [] });
      const second = await t.request('GET', GAME_PATHS.doorsManifest);
      expect([first.status, second.status]).to.deep.equal([200, 200]);
      expect((first.json as { config: { heartbeatIntervalSeconds: number } }).config.heartbeatIntervalSeconds).to.equal(15);
      expect(stub.requests.map((r) => r.signatureValid)).to.deep.equal([true, true]);
      expect(stub.connections).to.equal(1);
    } finally {
      await stub.close();
    }
  });
});
