/**
 * Spec: POST /api/v1/game/bans/check, Ban check result; issue #6: scope semantics across two workspaces
 * with the same externalIds, expiry to the second, lifting, history, served from Redis.
 */
import { expect } from 'chai';
import type request from 'supertest';
import { setLogLevel } from '../../src/log.js';
import { Harness, type TestGame } from '../support/harness.js';
import { listBans, type BanService } from '../../src/bans/ban-service.js';
import { banService, check, CHECK, siblingGame } from './support.js';

function expectEnvelope(res: request.Response, status: number, code?: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.error.code).to.be.a('string');
  if (code) expect(res.body.error.code).to.equal(code);
  expect(res.body.error.requestId).to.equal(res.headers['x-request-id']);
  expect(new Date(res.body.serverTime).toISOString()).to.equal(res.body.serverTime);
}

describe('POST /api/v1/game/bans/check', () => {
  const h = new Harness();
  let bans: BanService;
  // Workspace A with games A1 and A2; workspace B with game B1. Same externalIds everywhere.
  let a1: TestGame;
  let a2: TestGame;
  let b1: TestGame;

  before(async () => {
    setLogLevel(h.config.logLevel);
    bans = banService(h);
    a1 = await h.game();
    a2 = await siblingGame(h, a1);
    b1 = await h.game();
  });
  after(() => h.close());

  async function banned(g: TestGame, user: string, server = 'server-1'): Promise<boolean> {
    const res = await check(h, g, user, server);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.banned as boolean;
  }

  it('answers banned:false with null details and serverTime for a user without bans', async () => {
    const res = await check(h, a1, 'nobody');
    expect(res.status).to.equal(200);
    expect(res.body).to.have.all.keys('banned', 'scope', 'expiresAt', 'reason', 'serverTime');
    expect(res.body).to.include({ banned: false, scope: null, expiresAt: null, reason: null });
    expect(new Date(res.body.serverTime).toISOString()).to.equal(res.body.serverTime);
  });

  it('workspace scope: every game of the workspace, any server; never another workspace', async () => {
    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-ws', scope: 'workspace', reason: 'cheating', issuedBy: 'test' });
    const res = await check(h, a2, 'u-ws', 'any-server');
    expect(res.body).to.include({ banned: true, scope: 'workspace', expiresAt: null, reason: 'cheating' });
    expect(await banned(a1, 'u-ws', 'server-9')).to.equal(true);
    expect(await banned(b1, 'u-ws')).to.equal(false);
  });

  it('game scope: that game only', async () => {
    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-game', scope: 'game', gameId: a1.gameId, reason: 'griefing', issuedBy: 'test' });
    const res = await check(h, a1, 'u-game', 'server-7');
    expect(res.body).to.include({ banned: true, scope: 'game', reason: 'griefing' });
    expect(await banned(a2, 'u-game')).to.equal(false);
    expect(await banned(b1, 'u-game')).to.equal(false);
  });

  it('server scope: that server of that game only', async () => {
    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-srv', scope: 'server', gameId: a1.gameId, externalServerId: 's-1', reason: 'spam', issuedBy: 'test' });
    const res = await check(h, a1, 'u-srv', 's-1');
    expect(res.body).to.include({ banned: true, scope: 'server', reason: 'spam' });
    expect(await banned(a1, 'u-srv', 's-2')).to.equal(false);
    expect(await banned(a2, 'u-srv', 's-1')).to.equal(false);
    expect(await banned(b1, 'u-srv', 's-1')).to.equal(false);
  });

  it('a ban in another workspace never applies, whatever its scope', async () => {
    for (const [user, scope] of [['u-b-ws', 'workspace'], ['u-b-game', 'game']] as const) {
      await bans.create({ workspaceId: b1.workspaceId, externalId: user, scope, gameId: scope === 'game' ? b1.gameId : null, reason: 'b only', issuedBy: 'test' });
      expect(await banned(b1, user)).to.equal(true);
      expect(await banned(a1, user)).to.equal(false);
      expect(await banned(a2, user)).to.equal(false);
    }
  });

  it('reports the ban that lasts longest when several apply', async () => {
    const now = Date.now();
    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-many', scope: 'server', gameId: a1.gameId, externalServerId: 'server-1', expiresInSeconds: 600, reason: 'short', issuedBy: 'test' }, now);
    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-many', scope: 'game', gameId: a1.gameId, expiresInSeconds: 3600, reason: 'long', issuedBy: 'test' }, now);
    const res = await check(h, a1, 'u-many');
    expect(res.body).to.include({ banned: true, scope: 'game', reason: 'long', expiresAt: new Date(now + 3_600_000).toISOString() });
    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-many', scope: 'server', gameId: a1.gameId, externalServerId: 'server-1', reason: 'forever', issuedBy: 'test' }, now);
    expect((await check(h, a1, 'u-many')).body).to.include({ banned: true, scope: 'server', reason: 'forever', expiresAt: null });
  });

  it('expiry: an expired ban does not apply, a running one reports its exact end', async () => {
    const now = Date.now();
    // issued 10 s ago for 9 s: ended 1 s ago
    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-old', scope: 'game', gameId: a1.gameId, expiresInSeconds: 9, reason: 'old', issuedBy: 'test' }, now - 10_000);
    expect(await banned(a1, 'u-old')).to.equal(false);
    const { ban } = await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-new', scope: 'game', gameId: a1.gameId, expiresInSeconds: 90, reason: 'new', issuedBy: 'test' }, now);
    expect(ban.expiresAt!.getTime()).to.equal(now + 90_000);
    expect((await check(h, a1, 'u-new')).body).to.include({ banned: true, expiresAt: new Date(now + 90_000).toISOString() });
  });

  it('expiry is exact: banned while serverTime < expiresAt, not banned from expiresAt on', async () => {
    const { ban } = await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-edge', scope: 'workspace', expiresInSeconds: 2, reason: 'edge', issuedBy: 'test' });
    const end = ban.expiresAt!.getTime();
    const seen: { serverTime: number; banned: boolean }[] = [];
    const probe = async () => {
      const res = await check(h, a1, 'u-edge');
      expect(res.status).to.equal(200);
      seen.push({ serverTime: Date.parse(res.body.serverTime), banned: res.body.banned });
    };
    // Around the boundary only: the ban-check quota allows 10 checks per user per minute.
    await probe();
    await new Promise((r) => setTimeout(r, Math.max(0, end - 300 - Date.now())));
    while (!seen.some((s) => s.serverTime >= end)) {
      await probe();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen.filter((s) => s.serverTime < end).length).to.be.greaterThan(0);
    for (const s of seen) expect(s.banned, `serverTime ${s.serverTime} vs expiresAt ${end}`).to.equal(s.serverTime < end);
  });

  it('lifting ends the ban at once and keeps it in the history', async () => {
    const { ban } = await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-lift', scope: 'game', gameId: a1.gameId, reason: 'mistake?', issuedBy: 'mod-a' });
    expect(await banned(a1, 'u-lift')).to.equal(true);
    const lifted = await bans.lift(ban.id, 'mod-b');
    expect(lifted.alreadyLifted).to.equal(false);
    expect(await banned(a1, 'u-lift')).to.equal(false);
    const again = await bans.lift(ban.id, 'mod-c');
    expect(again.alreadyLifted).to.equal(true);
    expect(again.ban.liftedBy).to.equal('mod-b');

    await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-lift', scope: 'game', gameId: a1.gameId, reason: 'second time', issuedBy: 'mod-a' });
    expect(await banned(a1, 'u-lift')).to.equal(true);
    const history = await listBans(h.db, { workspaceId: a1.workspaceId, externalId: 'u-lift' });
    expect(history.map((b) => [b.reason, b.status, b.liftedBy])).to.deep.equal([
      ['second time', 'active', null],
      ['mistake?', 'lifted', 'mod-b'],
    ]);
    expect(history[1]!.liftedAt).to.be.instanceOf(Date);
    const active = await listBans(h.db, { workspaceId: a1.workspaceId, externalId: 'u-lift', activeOnly: true });
    expect(active.map((b) => b.reason)).to.deep.equal(['second time']);
    const row = await h.db.ban.findUniqueOrThrow({ where: { id: ban.id } });
    expect(row.liftedBy).to.equal('mod-b');
  });

  it('is served from the Redis blocklist, not from a Postgres query per call', async () => {
    const { ban } = await bans.create({ workspaceId: a1.workspaceId, externalId: 'u-redis', scope: 'game', gameId: a1.gameId, reason: 'r', issuedBy: 'test' });
    // Remove the row behind the service's back: a per-call Postgres query would now say "not banned".
    await h.db.ban.delete({ where: { id: ban.id } });
    expect(await banned(a1, 'u-redis')).to.equal(true);
  });

  it('refuses bad input with 400 and the envelope', async () => {
    const bodies: unknown[] = [{}, { externalId: 'x' }, { externalServerId: 's' }, { externalId: '', externalServerId: 's' }, { externalId: 5, externalServerId: 's' }, { externalId: 'x', externalServerId: 'y'.repeat(129) }, [], 'text'];
    for (const body of bodies) expectEnvelope(await h.signed(a1, 'post', CHECK, body), 400);
    expectEnvelope(await h.signed(a1, 'post', CHECK, undefined, { raw: '{"externalId":' }), 400, 'invalid_json');
    // unknown fields are ignored (spec: Versioning rule 2)
    expect((await h.signed(a1, 'post', CHECK, { externalId: 'x', externalServerId: 's', extra: true })).status).to.equal(200);
  });

  it('needs the heartbeat scope (403), a valid signature (401), and refuses a replay (409)', async () => {
    const noHeartbeat = await h.key(a1.gameId, ['doors', 'events']);
    expectEnvelope(await check(h, { ...a1, ...noHeartbeat }, 'x'), 403, 'scope_missing');
    expectEnvelope(await h.signed(a1, 'post', CHECK, { externalId: 'x', externalServerId: 's' }, { signature: 'a'.repeat(64) }), 401, 'bad_signature');
    const raw = JSON.stringify({ externalId: 'replay', externalServerId: 's' });
    const ts = Math.floor(Date.now() / 1000);
    expect((await h.signed(a1, 'post', CHECK, undefined, { raw, timestamp: ts })).status).to.equal(200);
    expectEnvelope(await h.signed(a1, 'post', CHECK, undefined, { raw, timestamp: ts }), 409, 'replayed_signature');
  });
});
