/**
 * Issue #6: "The reference client calls it on connect and, on a network error, fails open by default with
 * a switch to fail closed." Against the real app on a local port, and against a closed port.
 */
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import { setLogLevel } from '../../src/log.js';
import { Harness, type TestGame } from '../support/harness.js';
import { GameClient, type ProblemInfo } from '@gis/client';
import { banService } from './support.js';

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('reference client: checkBan', () => {
  const h = new Harness();
  let g: TestGame;
  let server: Server;
  let baseUrl: string;

  before(async () => {
    setLogLevel(h.config.logLevel);
    g = await h.game();
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const bans = banService(h);
    await bans.create({ workspaceId: g.workspaceId, externalId: 'c-banned', scope: 'game', gameId: g.gameId, expiresInSeconds: 600, reason: 'toxic', issuedBy: 'mod' });
    await bans.create({ workspaceId: g.workspaceId, externalId: 'c-elsewhere', scope: 'server', gameId: g.gameId, externalServerId: 'other-server', reason: 'r', issuedBy: 'mod' });
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await h.close();
  });

  function client(url: string, opts: { failClosed?: boolean; problems?: ProblemInfo[] } = {}): GameClient {
    return new GameClient({
      baseUrl: url,
      apiKey: g.key,
      externalServerId: 'client-server',
      maxPlayers: 10,
      banCheckFailMode: opts.failClosed ? 'closed' : undefined,
      onProblem: (p) => opts.problems?.push(p),
      requestTimeoutMs: 2000,
    });
  }

  it('reports a banned user with the informational fields, and admits others', async () => {
    const c = client(baseUrl);
    const banned = await c.checkBan('c-banned');
    expect(banned).to.include({ banned: true, source: 'service', scope: 'game', reason: 'toxic' });
    expect(Date.parse(banned.expiresAt!)).to.be.greaterThan(Date.now());
    expect(await c.checkBan('c-clean')).to.include({ banned: false, source: 'service', scope: null });
    // a server ban for another server does not apply to this one (the client sends its externalServerId)
    expect((await c.checkBan('c-elsewhere')).banned).to.equal(false);
  });

  it('fails open by default when the service is unreachable, and reports the problem', async () => {
    const problems: ProblemInfo[] = [];
    const c = client(`http://127.0.0.1:${await closedPort()}`, { problems });
    expect(await c.checkBan('c-banned')).to.deep.equal({ banned: false, source: 'fail_open', scope: null, expiresAt: null, reason: null });
    expect(problems.map((p) => p.kind)).to.deep.equal(['network']);
    // asked with includeDoors, the failed check says it has no door decisions (the bulk check is then sent)
    expect(await c.checkBan('c-banned', { includeDoors: true })).to.deep.equal({ banned: false, source: 'fail_open', scope: null, expiresAt: null, reason: null, doors: null });
  });

  it('fails closed with the switch (client option or per call)', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    expect(await client(url, { failClosed: true }).checkBan('anyone')).to.include({ banned: true, source: 'fail_closed' });
    expect(await client(url).checkBan('anyone', { failMode: 'closed' })).to.include({ banned: true, source: 'fail_closed' });
    // an answer from the service always wins over the fail mode
    expect(await client(baseUrl, { failClosed: true }).checkBan('c-clean')).to.include({ banned: false, source: 'service' });
  });

  it('applies the fail mode to a non-200 answer too (here 403: key without the heartbeat scope)', async () => {
    const k = await h.key(g.gameId, ['doors']);
    const problems: ProblemInfo[] = [];
    const c = new GameClient({ baseUrl, apiKey: k.key, externalServerId: 's', maxPlayers: 1, onProblem: (p) => problems.push(p) });
    expect(await c.checkBan('c-banned')).to.include({ banned: false, source: 'fail_open' });
    expect(await c.checkBan('c-banned', { failMode: 'closed' })).to.include({ banned: true, source: 'fail_closed' });
    expect(problems.map((p) => p.status)).to.deep.equal([403, 403]);
  });
});
