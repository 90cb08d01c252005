/**
 * Door cache TTL and pushed invalidation (issue #32 item 2; docs/decisions.md "Door cache TTL and pushed
 * invalidation"): clients cache a decision for up to DOOR_CACHE_TTL_SECONDS (300 s by default) while the
 * service shares it for one DOOR_DECISION_WINDOW_SECONDS window (60 s), so a change that could alter a
 * decision is pushed to the clients instead of waiting for the TTL: a member's change as a
 * `refresh_permissions` aimed at them on the server they are on, a workspace change as a raised doors
 * version in every game of the workspace.
 */
import { expect } from 'chai';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { createGame } from '../../src/games/game-service.js';
import { loadConfig, ConfigError } from '../../src/config.js';
import { DoorSubjectInvalidator } from '../../src/doors/subject-invalidation.js';
import { commandPermissionsRefresher, PERMISSIONS_ISSUER } from '../../src/doors/permissions-refresh.js';
import { beat } from '../commands/command-fixtures.js';
import { check, doorWith } from './door-fixtures.js';

describe('door cache TTL and pushed invalidation', () => {
  const h = new Harness();
  let g: TestGame;
  let other: TestGame;
  let invalidator: DoorSubjectInvalidator;

  before(async () => {
    g = await h.game(['doors', 'heartbeat', 'commands']);
    other = await h.game(['doors', 'heartbeat', 'commands']);
    const deps = { db: h.db, redis: h.redis, keySpace: h.keySpace };
    invalidator = new DoorSubjectInvalidator(h.db, h.redis, h.keySpace, commandPermissionsRefresher(deps, h.config.doorCacheTtlSeconds));
  });
  after(() => h.close());

  describe('config', () => {
    const base = { DATABASE_URL: 'postgresql://x@127.0.0.1/x' };

    it('clients cache 300 s by default while the shared cache window stays 60 s', () => {
      const c = loadConfig(base);
      expect([c.doorCacheTtlSeconds, c.doorDecisionWindowSeconds]).to.deep.equal([300, 60]);
    });

    it('a TTL shorter than 60 s shortens the default window to it; a window longer than the TTL is refused', () => {
      expect(loadConfig({ ...base, DOOR_CACHE_TTL_SECONDS: '30' }).doorDecisionWindowSeconds).to.equal(30);
      expect(() => loadConfig({ ...base, DOOR_CACHE_TTL_SECONDS: '30', DOOR_DECISION_WINDOW_SECONDS: '31' })).to.throw(ConfigError, /must not exceed DOOR_CACHE_TTL_SECONDS/);
    });
  });

  it('a fresh decision carries the client TTL, and is shared under the window of DOOR_DECISION_WINDOW_SECONDS', async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }]);
    const res = await check(h, g, door.key, 'ttl-user');
    expect(res.body).to.include({ decision: 'allow', cached: false, ttlSeconds: h.config.doorCacheTtlSeconds });
    const window = Math.floor(Date.now() / (h.config.doorDecisionWindowSeconds * 1000));
    const version = await h.redis.get(h.keySpace.game(g.gameId).doorsVersion());
    const head = h.keySpace.game(g.gameId).doorDecisions(String(version), window);
    const prev = h.keySpace.game(g.gameId).doorDecisions(String(version), window - 1);
    expect((await h.redis.exists(head)) + (await h.redis.exists(prev))).to.be.greaterThan(0);
  });

  it('a member\'s change reaches the server they are on as refresh_permissions aimed at them; a member on no server gets none', async () => {
    await beat(h, g, 'srv-push', ['on-server', 'bystander']);
    const before = await h.db.command.count({ where: { gameId: { in: [g.gameId, other.gameId] } } });
    await invalidator.memberChanged(g.workspaceId, 'on-server');
    await invalidator.memberChanged(g.workspaceId, 'offline-member');

    const rows = await h.db.command.findMany({ where: { gameId: { in: [g.gameId, other.gameId] }, type: 'refresh_permissions' } });
    expect(rows.map((r) => [r.gameId, r.externalId, r.externalServerId, r.issuedBy])).to.deep.equal([[g.gameId, 'on-server', null, PERMISSIONS_ISSUER]]);
    expect(await h.db.command.count({ where: { gameId: { in: [g.gameId, other.gameId] } } })).to.equal(before + 1);
    expect(rows[0]!.expiresAt.getTime() - rows[0]!.issuedAt.getTime()).to.equal(h.config.doorCacheTtlSeconds * 1000);

    const delivered = await beat(h, g, 'srv-push', ['on-server', 'bystander']);
    expect(delivered.map((c) => [c.type, c.target])).to.deep.equal([['refresh_permissions', { externalServerId: 'srv-push', externalId: 'on-server' }]]);
  });

  it('a push that fails is logged, not thrown: the subject version is raised all the same', async () => {
    await beat(h, g, 'srv-fail', ['unlucky']);
    const failing = new DoorSubjectInvalidator(h.db, h.redis, h.keySpace, () => Promise.reject(new Error('queue full')));
    const field = () => h.redis.hget(h.keySpace.game(g.gameId).doorSubjects(), 'u:unlucky');
    const before = Number((await field()) ?? 0);
    await failing.memberChanged(g.workspaceId, 'unlucky');
    expect(Number(await field())).to.equal(before + 1);
  });

  it('a workspace change raises the doors version of every game of the workspace, so servers refetch and forget', async () => {
    const sibling = await createGame(h.db, { workspaceId: g.workspaceId, name: 'sibling' });
    const hb = async () => {
      const res = await h.heartbeat(g, heartbeatBody([], { externalServerId: 'srv-ws' }));
      expect(res.status).to.equal(200);
      return (res.body as { config: { doorsVersion: number } }).config.doorsVersion;
    };
    const servedBefore = await hb();
    const games = { where: { id: { in: [g.gameId, sibling.id] } }, select: { id: true, doorsVersion: true }, orderBy: { id: 'asc' as const } };
    const before = await h.db.game.findMany(games);

    await invalidator.workspaceChanged(g.workspaceId);

    const after = await h.db.game.findMany(games);
    expect(after.map((r) => r.doorsVersion)).to.deep.equal(before.map((r) => r.doorsVersion + 1));
    expect(Number(await h.redis.get(h.keySpace.game(sibling.id).doorsVersion()))).to.equal(after.find((r) => r.id === sibling.id)!.doorsVersion);
    expect(await hb()).to.equal(servedBefore + 1);
  });
});
