/**
 * Issue #31, roles and tenancy: every console route in the permission table
 * (src/auth/moderators/console-permissions.ts) is called by a viewer, a moderator and an admin of the
 * game's workspace, by the operator, and by an admin of another workspace. Each must get what the table
 * says: the route's success status when its role holds the permission, 403 `forbidden` naming the
 * permission when not, 404 (as for a missing game) across workspaces. Also: the acting account is what the
 * commands and bans tables and the audit chain record (X-Moderator is ignored), bad tokens get a 401
 * envelope, and a flood of wrong secrets on a token's prefix never refuses the real token.
 */
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { Registry } from 'prom-client';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { moderator, moderatorStore } from '../support/moderators.js';
import { createConsoleApp } from '../../src/adapters/console/console-app.js';
import { createConsoleAuth, type ConsoleAuth } from '../../src/adapters/console/console-auth.js';
import { createConsoleServices, type ConsoleServices } from '../../src/adapters/console/console-services.js';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { createDoor } from '../../src/doors/door-admin-service.js';
import { CONSOLE_ROUTES, MODERATOR_ROLES, roleAllows, type ConsoleRoute, type ModeratorRole } from '../../src/auth/moderators/console-permissions.js';
import { setModeratorDisabled } from '../../src/auth/moderators/moderator-accounts.js';
import { verifyAuditChain } from '../../src/audit/audit-chain.js';
import { KeyRecords } from '../../src/auth/key-records.js';
import { VerifiedDigests } from '../../src/auth/verified-digests.js';
import { sharedDigestName } from '../../src/auth/moderators/moderator-token.js';
import type { IssuedModerator } from '../../src/auth/moderators/moderator-accounts.js';

const OPERATOR = 'roles-test-operator-token-0123456789';
const API = '/console/api';

/** A request ready to send: the concrete path (absolute) and body of a route. */
interface Call {
  method: ConsoleRoute['method'];
  path: string;
  body?: object;
  /** Status when the caller may do it. */
  ok: number;
}

describe('console roles and tenancy (issue #31)', function () {
  this.timeout(60_000);
  const h = new Harness();
  let services: ConsoleServices;
  let auth: ConsoleAuth;
  let app: Express;
  let g: TestGame;
  let other: TestGame;
  const accounts = {} as Record<ModeratorRole, IssuedModerator>;
  let outsider: IssuedModerator;
  let victim: IssuedModerator;

  const send = (c: Call, bearer: string, headers: Record<string, string> = {}) => {
    let req = request(app)[c.method](c.path).set('Authorization', `Bearer ${bearer}`);
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return c.body === undefined ? req : req.send(c.body);
  };

  /** A concrete call of `route` on `game` (fresh ban for a lift, so every allowed lift succeeds). */
  async function callOf(route: ConsoleRoute, game: TestGame): Promise<Call> {
    const ban = route.path.includes(':banId')
      ? await services.bans.create({ workspaceId: game.workspaceId, externalId: `b-${Math.random()}`, scope: 'game', gameId: game.gameId, externalServerId: null, expiresInSeconds: null, reason: 'r', issuedBy: 'test' })
      : null;
    const path = route.path
      .replace(':gameId', game.gameId)
      .replace(':doorKey', 'gate')
      .replace(':policyId', '00000000-0000-4000-8000-000000000000')
      .replace(':banId', ban?.ban.id ?? '')
      .replace(':workspaceId', game.workspaceId)
      .replace(':moderatorId', victim.id);
    const full = path.startsWith('//') ? path.slice(1) : `${API}${path}`;
    const key = `${route.method} ${route.path}`;
    const table: Record<string, Omit<Call, 'method' | 'path'>> = {
      'post /games/:gameId/commands': { body: { type: 'kick', target: { externalId: 'p1' }, payload: { reason: 'r' } }, ok: 201 },
      'post /games/:gameId/doors/:doorKey/state': { body: { state: 'locked' }, ok: 200 },
      'post /games/:gameId/lockdown': { body: { locked: false }, ok: 200 },
      'post /games/:gameId/bans': { body: { externalId: 'p9', scope: 'game', reason: 'r' }, ok: 201 },
      'post /bans/:banId/lift': { ok: 200 },
      // An unknown policy: 404 `unknown_policy` means the caller was let through to the lookup.
      'get /games/:gameId/policies/:policyId': { ok: 404 },
      'post /workspaces/:workspaceId/moderators': { body: { name: 'added', role: 'viewer' }, ok: 201 },
      'patch /workspaces/:workspaceId/moderators/:moderatorId': { body: { role: 'viewer' }, ok: 200 },
      'post /workspaces/:workspaceId/moderators/:moderatorId/token': { ok: 201 },
      'post /workspaces/:workspaceId/moderators/:moderatorId/invitations': { ok: 201 },
      'patch /games/:gameId/settings': { body: { heartbeatIntervalSeconds: 30 }, ok: 200 },
    };
    return { method: route.method, path: full, ok: 200, ...table[key] };
  }

  before(async () => {
    services = createConsoleServices({ db: h.db, redis: h.redis, keySpace: h.keySpace });
    auth = createConsoleAuth(OPERATOR, services);
    app = createConsoleApp({ services, token: OPERATOR, metrics: new Registry(), openapi: buildOpenApiDocument(), auth });
    g = await h.game();
    other = await h.game();
    for (const game of [g, other]) {
      await h.heartbeat(game, heartbeatBody(['p1'], { externalServerId: 'srv-1' }));
      await createDoor({ db: h.db, redis: h.redis, keySpace: h.keySpace }, { gameId: game.gameId, key: 'gate', name: 'Gate' }, 'test');
    }
    for (const role of MODERATOR_ROLES) accounts[role] = await moderator(h, g.workspaceId, role, `${role} of A`);
    outsider = await moderator(h, other.workspaceId, 'admin', 'admin of B');
    victim = await moderator(h, g.workspaceId, 'moderator', 'victim');
  });
  after(async () => {
    await services.close();
    await h.close();
  });

  it('lists every route of the console API in the table (the stream needs a live hub, covered in console-revocation)', () => {
    const keys = CONSOLE_ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).to.equal(keys.length);
    expect(keys).to.include.members(['get /games/:gameId/live/stream', 'post /games/:gameId/commands', 'post /bans/:banId/lift', 'get //metrics']);
  });

  for (const route of CONSOLE_ROUTES.filter((r) => !r.path.endsWith('/stream'))) {
    it(`${route.method.toUpperCase()} ${route.path} (${route.permission}): allowed and refused per role, 404 across workspaces`, async () => {
      for (const role of MODERATOR_ROLES) {
        const call = await callOf(route, g);
        const res = await send(call, accounts[role].token);
        if (roleAllows(role, route.permission)) {
          expect(res.status, `${role}: ${JSON.stringify(res.body)}`).to.equal(call.ok);
          if (call.ok === 404) expect(res.body.error.code).to.equal('unknown_policy');
        } else {
          expect(res.status, `${role}: ${JSON.stringify(res.body)}`).to.equal(403);
          expect(res.body.error.code).to.equal('forbidden');
          expect(res.body.error.message).to.include(`"${route.permission}"`);
          expect(res.body.serverTime).to.be.a('string');
        }
      }
      const asOperator = await send(await callOf(route, g), OPERATOR);
      expect(asOperator.status, JSON.stringify(asOperator.body)).to.equal((await callOf(route, g)).ok);
      // An admin of another workspace: the game, ban or workspace does not exist for them.
      if (/:gameId|:banId|:workspaceId/.test(route.path)) {
        const res = await send(await callOf(route, g), outsider.token);
        expect(res.status, JSON.stringify(res.body)).to.equal(404);
        expect(res.body.error.code).to.match(/^unknown_(game|ban|workspace)$/);
      }
    });
  }

  it('game settings: an admin changes the interval and platform settings, recorded as them, cached records refreshed; the cloud API URL and key stay the operator\'s', async () => {
    const admin = accounts.admin;
    const path = `${API}/games/${g.gameId}/settings`;
    const patch = (body: object, bearer: string) => send({ method: 'patch', path, body, ok: 200 }, bearer);
    const before = await h.db.game.findUniqueOrThrow({ where: { id: g.gameId } });

    for (const body of [{ cloudApiBaseUrl: 'http://10.0.0.1:8080' }, { cloudApiKey: 'stolen', platform: 'roblox' }]) {
      const res = await patch(body, admin.token);
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
      expect(res.body.error.message).to.include('"operator.only"');
    }
    for (const [body, pointer] of [[{ heartbeatIntervalSeconds: 14 }, '/heartbeatIntervalSeconds'], [{ heartbeatIntervalSeconds: 61 }, '/heartbeatIntervalSeconds'], [{}, ''], [{ secret: 1 }, '']] as const) {
      const res = await patch(body, admin.token);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error).to.include({ code: 'invalid_request' });
      expect(res.body.error.requestId).to.be.a('string');
      expect(res.body.serverTime).to.be.a('string');
      if (pointer) expect(res.body.error.pointer).to.equal(pointer);
    }
    // Native bans need the operator's URL and key first: refused whole, the interval sent with it unchanged.
    const refused = await patch({ nativeBans: true, heartbeatIntervalSeconds: 45 }, admin.token);
    expect([refused.status, refused.body.error.code]).to.deep.equal([400, 'invalid_request']);
    const unchanged = await h.db.game.findUniqueOrThrow({ where: { id: g.gameId } });
    expect([unchanged.heartbeatIntervalSeconds, unchanged.cloudApiBaseUrl, unchanged.cloudApiKey, unchanged.platform, unchanged.nativeBans])
      .to.deep.equal([before.heartbeatIntervalSeconds, before.cloudApiBaseUrl, before.cloudApiKey, before.platform, before.nativeBans]);

    const asOperator = await patch({ cloudApiBaseUrl: 'https://apis.example.com/', cloudApiKey: 'k-0123456789' }, OPERATOR);
    expect(asOperator.status, JSON.stringify(asOperator.body)).to.equal(200);
    expect(asOperator.body.settings).to.include({ cloudApiBaseUrl: 'https://apis.example.com', cloudApiKeySet: true });
    expect(JSON.stringify(asOperator.body)).to.not.include('k-0123456789');

    const res = await patch({ heartbeatIntervalSeconds: 45, platform: 'roblox', universeId: 'u-1', nativeBans: true }, admin.token);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.settings).to.deep.equal({
      id: g.gameId, heartbeatIntervalSeconds: 45, platform: 'roblox', universeId: 'u-1',
      cloudApiBaseUrl: 'https://apis.example.com', cloudApiKeySet: true, nativeBans: true,
    });
    const row = await h.db.game.findUniqueOrThrow({ where: { id: g.gameId } });
    expect([row.heartbeatIntervalSeconds, row.platform, row.universeId, row.nativeBans, row.cloudApiKey]).to.deep.equal([45, 'roblox', 'u-1', true, 'k-0123456789']);
    const actor = `moderator:${admin.id} (admin of A)`;
    const audit = await h.db.auditLog.findMany({ where: { workspaceId: g.workspaceId, gameId: g.gameId, action: { in: ['game.set-interval', 'game.set-platform'] } }, orderBy: { id: 'desc' }, take: 3 });
    expect(audit.map((a) => [a.action, a.actor])).to.deep.equal([['game.set-interval', actor], ['game.set-platform', actor], ['game.set-platform', 'operator']]);
    expect(JSON.stringify(audit.map((a) => a.detail))).to.not.include('k-0123456789');
    expect((await verifyAuditChain(h.db, g.workspaceId)).ok).to.equal(true);
    // The game's Redis record, which API processes authenticate from, carries the new settings at once.
    const record = await new KeyRecords(h.redis, h.keySpace).load(g.keyPrefix);
    expect(record?.game.heartbeatIntervalSeconds).to.equal(45);
    // The outsider (an admin of another workspace) cannot learn the game exists, whatever the body.
    const foreign = await patch({ heartbeatIntervalSeconds: 20 }, outsider.token);
    expect([foreign.status, foreign.body.error.code]).to.deep.equal([404, 'unknown_game']);
  });

  it('rotating a token from the console: the new one is shown once and works, the old one is refused; an invitation is for this workspace\'s accounts only', async () => {
    const admin = accounts.admin;
    const target = await moderator(h, g.workspaceId, 'viewer', 'rotated');
    const live = { method: 'get' as const, path: `${API}/games/${g.gameId}/live`, ok: 200 };
    expect((await send(live, target.token)).status).to.equal(200);
    const res = await send({ method: 'post', path: `${API}/workspaces/${g.workspaceId}/moderators/${target.id}/token`, ok: 201 }, admin.token);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.moderator).to.include({ id: target.id, name: 'rotated', role: 'viewer', workspaceId: g.workspaceId });
    expect(res.body.moderator.token).to.match(/^gmod_[a-z0-9]{12}\./).and.not.equal(target.token);
    auth.invalidate(`moderator:${target.id}`);
    const old = await send(live, target.token);
    expect([old.status, old.body.error.code]).to.deep.equal([401, 'unknown_token']);
    expect((await send(live, res.body.moderator.token)).status).to.equal(200);
    expect(await h.db.auditLog.count({ where: { workspaceId: g.workspaceId, action: 'moderator.rotate-token', actor: `moderator:${admin.id} (admin of A)` } })).to.be.greaterThan(0);

    const invited = await send({ method: 'post', path: `${API}/workspaces/${g.workspaceId}/moderators/${target.id}/invitations`, ok: 201 }, admin.token);
    expect(invited.status).to.equal(201);
    expect(invited.body.invitation.code).to.match(/^[A-Za-z0-9_-]{22}$/);
    expect(await h.db.moderatorInvitation.count({ where: { moderatorId: target.id, usedAt: null } })).to.equal(1);
    // An account of another workspace, named under this one: as missing, and no invitation made.
    const across = await send({ method: 'post', path: `${API}/workspaces/${g.workspaceId}/moderators/${outsider.id}/invitations`, ok: 201 }, admin.token);
    expect([across.status, across.body.error.code]).to.deep.equal([404, 'unknown_moderator']);
    const acrossRotate = await send({ method: 'post', path: `${API}/workspaces/${g.workspaceId}/moderators/${outsider.id}/token`, ok: 201 }, admin.token);
    expect([acrossRotate.status, acrossRotate.body.error.code]).to.deep.equal([404, 'unknown_moderator']);
    expect(await h.db.moderatorInvitation.count({ where: { moderatorId: outsider.id } })).to.equal(0);
    expect((await send({ ...live, path: `${API}/games/${other.gameId}/live` }, outsider.token)).status).to.equal(200);
  });

  it('lists only the games of the caller’s workspaces; the operator sees every one', async () => {
    const ids = async (bearer: string) => (await send({ method: 'get', path: `${API}/games`, ok: 200 }, bearer)).body.games.map((x: { id: string }) => x.id);
    expect(await ids(accounts.viewer.token)).to.deep.equal([g.gameId]);
    expect(await ids(outsider.token)).to.deep.equal([other.gameId]);
    expect(await ids(OPERATOR)).to.include.members([g.gameId, other.gameId]);
  });

  it('answers a game of another workspace exactly as a missing one (same status, code and message shape)', async () => {
    const missing = await send({ method: 'get', path: `${API}/games/00000000-0000-4000-8000-000000000000/live`, ok: 200 }, accounts.admin.token);
    const foreign = await send({ method: 'get', path: `${API}/games/${other.gameId}/live`, ok: 200 }, accounts.admin.token);
    expect([missing.status, foreign.status]).to.deep.equal([404, 404]);
    expect(foreign.body.error.code).to.equal(missing.body.error.code);
    expect(foreign.body.error.message).to.equal(`game ${other.gameId} not found`);
  });

  it('records the authenticated account on commands, bans and the audit chain; X-Moderator names nobody', async () => {
    const mod = accounts.moderator;
    const actor = `moderator:${mod.id} (moderator of A)`;
    const spoof = { 'X-Moderator': 'someone-else' };
    const cmd = await send({ method: 'post', path: `${API}/games/${g.gameId}/commands`, body: { type: 'kick', target: { externalId: 'p1' }, payload: { reason: 'r' } }, ok: 201 }, mod.token, spoof);
    expect(cmd.status).to.equal(201);
    const live = await send({ method: 'get', path: `${API}/games/${g.gameId}/live`, ok: 200 }, mod.token);
    expect(live.body.commands.find((c: { id: string }) => c.id === cmd.body.command.id).issuedBy).to.equal(actor);
    const ban = await send({ method: 'post', path: `${API}/games/${g.gameId}/bans`, body: { externalId: 'p7', scope: 'game', reason: 'proven' }, ok: 201 }, mod.token, spoof);
    expect(ban.status).to.equal(201);
    const lift = await send({ method: 'post', path: `${API}/bans/${ban.body.ban.id}/lift`, ok: 200 }, mod.token, spoof);
    const row = await h.db.ban.findUniqueOrThrow({ where: { id: ban.body.ban.id } });
    expect([row.issuedBy, row.liftedBy, lift.body.ban.liftedBy]).to.deep.equal([actor, actor, actor]);
    const audit = await h.db.auditLog.findMany({ where: { workspaceId: g.workspaceId, actor }, select: { action: true } });
    expect(audit.map((a) => a.action)).to.include.members(['ban.create', 'ban.lift']);
    expect(await h.db.auditLog.count({ where: { actor: { contains: 'someone-else' } } })).to.equal(0);
    const admin = accounts.admin;
    await send({ method: 'post', path: `${API}/games/${g.gameId}/doors/gate/state`, body: { state: 'auto' }, ok: 200 }, admin.token);
    expect(await h.db.auditLog.count({ where: { workspaceId: g.workspaceId, action: 'door.force', actor: `moderator:${admin.id} (admin of A)` } })).to.be.greaterThan(0);
    const addedBy = { workspaceId: g.workspaceId, action: 'moderator.add', actor: `moderator:${admin.id} (admin of A)` };
    const before = await h.db.auditLog.count({ where: addedBy });
    const added = await send({ method: 'post', path: `${API}/workspaces/${g.workspaceId}/moderators`, body: { name: 'trial', role: 'viewer' }, ok: 201 }, admin.token);
    expect(added.body.moderator.token).to.match(/^gmod_[a-z0-9]{12}\./);
    expect(await h.db.auditLog.count({ where: addedBy })).to.equal(before + 1);
    expect((await verifyAuditChain(h.db, g.workspaceId)).ok).to.equal(true);
  });

  it('refuses malformed, unknown, wrong and disabled tokens with a 401 envelope', async () => {
    const live = { method: 'get' as const, path: `${API}/games/${g.gameId}/live`, ok: 200 };
    const [, prefix] = /^gmod_([a-z0-9]{12})\./.exec(accounts.viewer.token)!;
    const wrong = `gmod_${prefix}.${'A'.repeat(43)}`;
    const unknown = `gmod_zzzzzzzzzzzz.${'A'.repeat(43)}`;
    const cases: [string, string][] = [['gmod_short', 'malformed_token'], [unknown, 'unknown_token'], [wrong, 'bad_token'], ['not-the-operator-token', 'console_unauthorized']];
    for (const [bearer, code] of cases) {
      const res = await send(live, bearer);
      expect(res.status, code).to.equal(401);
      expect(res.body.error.code).to.equal(code);
      expect(res.body.error.requestId).to.be.a('string');
      expect(res.body.serverTime).to.be.a('string');
    }
    const gone = await moderator(h, g.workspaceId, 'viewer');
    expect((await send(live, gone.token)).status).to.equal(200);
    await setModeratorDisabled(moderatorStore(h), gone.id, true, 'test');
    auth.invalidate(`moderator:${gone.id}`);
    const res = await send(live, gone.token);
    expect([res.status, res.body.error.code]).to.deep.equal([401, 'moderator_disabled']);
  });

  it('failed sign-ins on an account never stop its real sign-in or token: no per-account lockout, no argon2 for them', async () => {
    const cold = createConsoleAuth(OPERATOR, services);
    const coldApp = createConsoleApp({ services, token: OPERATOR, metrics: new Registry(), openapi: buildOpenApiDocument(), auth: cold });
    const real = accounts.moderator.token;
    const [, prefix] = /^gmod_([a-z0-9]{12})\./.exec(real)!;
    const signIn = (token: string) => request(coldApp).post(`${API}/session`).send({ token });
    const signIns: { status: number; cookie: boolean }[] = [];
    const bearer: number[] = [];
    const flood: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      flood.push(signIn(`gmod_${prefix}.${String(i).padStart(43, 'w')}`).then((r) => {
        expect([r.status, r.body.error.code]).to.deep.equal([401, 'bad_token']);
        expect(r.headers['set-cookie']).to.equal(undefined);
      }));
      if (i % 20 === 10) {
        flood.push(signIn(real).then((r) => signIns.push({ status: r.status, cookie: String(r.headers['set-cookie'] ?? '').includes('HttpOnly') })));
        flood.push(request(coldApp).get(`${API}/games/${g.gameId}/health`).set('Authorization', `Bearer ${real}`).then((r) => bearer.push(r.status)));
      }
    }
    await Promise.all(flood);
    expect(signIns).to.deep.equal(Array(10).fill({ status: 201, cookie: true }));
    expect(bearer).to.deep.equal(Array(10).fill(200));
    expect(cold.deps.tokens.counts.argon2).to.equal(0);
    expect(cold.deps.tokens.counts.refused).to.equal(0);
    // With the shared digest gone (a Redis that lost it), a process that has verified the token answers it
    // and the flood from its own cache: no argon2 budget is spent, so nothing can throttle the real token.
    await new VerifiedDigests(h.redis, h.keySpace).delete(sharedDigestName(prefix!));
    const after: number[] = [];
    const degraded: Promise<unknown>[] = [];
    for (let i = 0; i < 40; i++) {
      degraded.push(signIn(`gmod_${prefix}.${String(i).padStart(43, 'z')}`).then((r) => expect(r.status).to.equal(401)));
      if (i % 10 === 5) degraded.push(signIn(real).then((r) => after.push(r.status)));
    }
    await Promise.all(degraded);
    expect(after).to.deep.equal([201, 201, 201, 201]);
    expect([cold.deps.tokens.counts.argon2, cold.deps.tokens.counts.refused]).to.deep.equal([0, 0]);
  });

  it('never refuses the real token while wrong secrets flood its prefix, and runs no argon2 for them', async () => {
    // A process that has never seen the token: the shared digest recognises it, and refuses the flood.
    const cold = createConsoleAuth(OPERATOR, services);
    const coldApp = createConsoleApp({ services, token: OPERATOR, metrics: new Registry(), openapi: buildOpenApiDocument(), auth: cold });
    const real = accounts.viewer.token;
    const [, prefix] = /^gmod_([a-z0-9]{12})\./.exec(real)!;
    const wrong = (i: number) => `gmod_${prefix}.${String(i).padStart(43, 'x')}`;
    const path = `${API}/games/${g.gameId}/health`;
    const statuses: number[] = [];
    const flood: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      flood.push(request(coldApp).get(path).set('Authorization', `Bearer ${wrong(i)}`).then((r) => expect(r.status).to.equal(401)));
      if (i % 20 === 0) flood.push(request(coldApp).get(path).set('Authorization', `Bearer ${real}`).then((r) => statuses.push(r.status)));
    }
    await Promise.all(flood);
    expect(statuses).to.deep.equal(Array(10).fill(200));
    expect(cold.deps.tokens.counts.argon2).to.equal(0);
    expect(cold.deps.tokens.counts.refused).to.equal(0);
  });
});
