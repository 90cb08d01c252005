/**
 * Issue #6: "Creating a ban for a user who is online also issues a kick command to the server(s) it
 * covers (the commands issue), with the ban reason." The kick reaches the game in the next heartbeat.
 */
import { expect } from 'chai';
import { setLogLevel } from '../../src/log.js';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import type { BanService } from '../../src/bans/ban-service.js';
import { banService, siblingGame } from './support.js';

interface Delivered {
  id: string;
  type: string;
  payload: { reason?: string };
  target: { externalServerId: string; externalId?: string };
}

describe('kick on ban of an online user', () => {
  const h = new Harness();
  let bans: BanService;
  let g: TestGame;
  let sibling: TestGame;

  before(async () => {
    setLogLevel(h.config.logLevel);
    bans = banService(h);
    g = await h.game();
    sibling = await siblingGame(h, g);
  });
  after(() => h.close());

  async function commandsFor(game: TestGame, server: string, players: string[]): Promise<Delivered[]> {
    const res = await h.heartbeat(game, heartbeatBody(players, { externalServerId: server }));
    expect(res.status).to.equal(200);
    return res.body.commands as Delivered[];
  }

  it('kicks the user from the server they are on, with the ban reason, delivered by the next heartbeat', async () => {
    await commandsFor(g, 'k-srv-1', ['k-online', 'k-bystander']);
    const result = await bans.create({ workspaceId: g.workspaceId, externalId: 'k-online', scope: 'game', gameId: g.gameId, reason: 'aimbot', issuedBy: 'mod' });
    expect(result.kicks).to.have.length(1);
    expect(result.kicks[0]).to.include({ gameId: g.gameId, externalServerId: 'k-srv-1' });
    const delivered = await commandsFor(g, 'k-srv-1', ['k-online', 'k-bystander']);
    expect(delivered).to.have.length(1);
    expect(delivered[0]).to.deep.include({ id: result.kicks[0]!.commandId, type: 'kick', payload: { reason: 'aimbot' } });
    expect(delivered[0]!.target).to.deep.equal({ externalServerId: 'k-srv-1', externalId: 'k-online' });
    const row = await h.db.command.findUniqueOrThrow({ where: { id: result.kicks[0]!.commandId! } });
    expect(row).to.include({ type: 'kick', externalId: 'k-online', issuedBy: 'mod' });
  });

  it('issues no kick for a user who is not online', async () => {
    const result = await bans.create({ workspaceId: g.workspaceId, externalId: 'k-offline', scope: 'workspace', reason: 'r', issuedBy: 'mod' });
    expect(result.kicks).to.deep.equal([]);
    expect(await h.db.command.count({ where: { externalId: 'k-offline' } })).to.equal(0);
  });

  it('a server ban kicks only from that server', async () => {
    await commandsFor(g, 'k-srv-2', ['k-moved']);
    const other = await bans.create({ workspaceId: g.workspaceId, externalId: 'k-moved', scope: 'server', gameId: g.gameId, externalServerId: 'k-srv-3', reason: 'r', issuedBy: 'mod' });
    expect(other.kicks).to.deep.equal([]);
    const here = await bans.create({ workspaceId: g.workspaceId, externalId: 'k-moved', scope: 'server', gameId: g.gameId, externalServerId: 'k-srv-2', reason: 'here', issuedBy: 'mod' });
    expect(here.kicks.map((k) => k.externalServerId)).to.deep.equal(['k-srv-2']);
  });

  it('a workspace ban kicks from every game of the workspace the user is in', async () => {
    await commandsFor(g, 'k-srv-4', ['k-both']);
    await commandsFor(sibling, 'k-srv-5', ['k-both']);
    const result = await bans.create({ workspaceId: g.workspaceId, externalId: 'k-both', scope: 'workspace', reason: 'everywhere', issuedBy: 'mod' });
    expect(result.kicks.map((k) => [k.gameId, k.externalServerId]).sort()).to.deep.equal([[g.gameId, 'k-srv-4'], [sibling.gameId, 'k-srv-5']].sort());
    const inSibling = await commandsFor(sibling, 'k-srv-5', ['k-both']);
    expect(inSibling.map((c) => [c.type, c.payload.reason])).to.deep.equal([['kick', 'everywhere']]);
  });
});
