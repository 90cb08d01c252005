/**
 * Issue #5, "Reference client": manifest on boot and after refresh_permissions (and when the heartbeat
 * config names another doors version), bulk check on join, cache for the TTL, single checks only for
 * uncached doors, failMode when the service is unreachable, door_set_state applied. Against the real API.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { GameClient, DoorAccess, TransportError } from '@gis/client';
import { issueCommand } from '../../src/commands/command-service.js';
import { addPolicy, forceDoor } from '../../src/doors/door-admin-service.js';
import { doorWith } from './door-fixtures.js';

async function until(cond: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('reference client: doors', function () {
  this.timeout(30_000);
  const h = new Harness();
  let g: TestGame;
  let server: Server;
  let client: GameClient;
  let doors: DoorAccess;
  /** Requests DoorAccess sent, as `METHOD path`. */
  let sent: string[];
  /** When set, door requests fail as if the service were unreachable, or answer this status. */
  let outage: 'network' | 503 | null;
  const deps = () => ({ db: h.db, redis: h.redis, keySpace: h.keySpace });

  before(async () => {
    g = await h.game();
    await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['ann'] }], { key: 'vault', failMode: 'closed' });
    await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }], { key: 'lobby', failMode: 'open' });
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new GameClient({
      baseUrl,
      apiKey: g.key,
      externalServerId: 'srv-doors',
      maxPlayers: 10,
      minNudgeGapMs: 0,
      bootJitterSeconds: 0,
      onCommand: (cmd) => doors.commandHandler()(cmd),
      onHeartbeat: (s) => doors.onConfig(s.response.config),
    });
    doors = new DoorAccess({
      externalServerId: 'srv-doors',
      request: async (method, path, body) => {
        sent.push(`${method} ${path.split('?')[0]}`); // the manifest's ?externalServerId= is asserted in boot-herd.test.ts
        if (outage === 'network') throw new TransportError('network', 'ECONNREFUSED', 0);
        const res = await client.request(method, path, body);
        return outage === 503 ? { ...res, status: 503 } : res;
      },
    });
  });
  beforeEach(() => {
    sent = [];
    outage = null;
  });
  after(async () => {
    await client.stop({ flush: false });
    server.close();
    server.closeAllConnections();
    await h.close();
  });

  it('fetches the manifest on boot, bulk-checks on join, then answers from its cache', async () => {
    expect(await doors.refreshManifest()).to.equal(true);
    expect(doors.door('vault')).to.include({ failMode: 'closed', forcedState: 'auto' });
    await doors.onJoin('ann');
    expect(sent).to.deep.equal(['GET /api/v1/game/doors/manifest', 'POST /api/v1/game/doors/bulk']);
    expect(await doors.check('vault', 'ann')).to.include({ allowed: true, source: 'cache' });
    expect(await doors.check('lobby', 'ann')).to.include({ allowed: true, source: 'cache' });
    expect(sent).to.have.length(2);
  });

  it('one request per joining player: the ban check with includeDoors fills the cache, no doors/bulk is sent', async () => {
    expect(await doors.refreshManifest()).to.equal(true);
    sent = [];
    const ban = await client.checkBan('ann-joins', { includeDoors: true });
    expect(ban).to.include({ banned: false, source: 'service' });
    expect((ban.doors as { decisions: { doorKey: string }[] }).decisions.map((d) => d.doorKey)).to.deep.equal(['lobby', 'vault']);
    await doors.onJoin('ann-joins', ban.doors);
    expect(await doors.check('lobby', 'ann-joins')).to.include({ allowed: true, source: 'cache' });
    expect(await doors.check('vault', 'ann-joins')).to.include({ allowed: false, source: 'cache' });
    expect(sent).to.deep.equal([]);
    // without door decisions in the answer (null: refused, over quota, door data away) no bulk check is
    // sent at the join; the player's first uncached door asks for it, and the other doors answer from it
    await doors.onJoin('ann-later', null);
    expect(sent).to.deep.equal([]);
    expect(await doors.check('vault', 'ann-later')).to.include({ allowed: false, source: 'service' });
    expect(sent).to.deep.equal(['POST /api/v1/game/doors/bulk']);
    expect(await doors.check('lobby', 'ann-later')).to.include({ allowed: true, source: 'cache' });
    expect(sent).to.have.length(1);
    // a ban check asked without includeDoors carries no doors field
    expect(await client.checkBan('plain')).to.not.have.property('doors');
  });

  it('keeps decisions bulk-checked before the manifest arrived when it has the same version', async () => {
    const early = new DoorAccess({ request: (m, p, b) => { sent.push(`${m} ${p}`); return client.request(m, p, b); } });
    await early.onJoin('ann');
    expect(await early.refreshManifest()).to.equal(true);
    expect(await early.check('vault', 'ann')).to.include({ allowed: true, source: 'cache' });
    expect(sent).to.deep.equal(['POST /api/v1/game/doors/bulk', 'GET /api/v1/game/doors/manifest']);
  });

  it('makes a single check only for an uncached door', async () => {
    expect(await doors.check('vault', 'bob')).to.include({ allowed: false, source: 'service', reason: 'default_deny' });
    expect(await doors.check('vault', 'bob')).to.include({ allowed: false, source: 'cache' });
    expect(sent).to.deep.equal(['POST /api/v1/game/doors/check']);
    expect(await doors.check('nope', 'bob')).to.include({ allowed: false, reason: 'unknown_door' });
  });

  it("applies the door's failMode when the service is unreachable or failing", async () => {
    outage = 'network';
    expect(await doors.check('vault', 'cy')).to.include({ allowed: false, reason: 'fail_closed', source: 'fail_mode' });
    expect(await doors.check('lobby', 'cy')).to.include({ allowed: true, reason: 'fail_open', source: 'fail_mode' });
    expect(await doors.check('not-in-manifest', 'cy')).to.include({ allowed: false, reason: 'fail_closed' });
    outage = 503;
    expect(await doors.check('lobby', 'dee')).to.include({ allowed: true, reason: 'fail_open' });
  });

  it('applies door_set_state from the heartbeat and refetches the manifest when config names a new version', async () => {
    client.start();
    await until(() => client.stats().heartbeatsOk >= 1, 'first heartbeat');
    await forceDoor(deps(), g.gameId, 'vault', 'unlocked', 'test');
    client.nudge();
    await until(() => doors.door('vault')?.forcedState === 'unlocked', 'door_set_state applied');
    expect(await doors.check('vault', 'bob')).to.include({ allowed: true, reason: 'forced_unlocked', source: 'forced' });

    await forceDoor(deps(), g.gameId, 'vault', 'auto', 'test');
    client.nudge();
    await until(() => doors.door('vault')?.forcedState === 'auto', 'back to auto');
    expect(await doors.check('vault', 'bob')).to.include({ allowed: false, reason: 'default_deny' });

    const before = doors.manifestVersion!;
    const p = await addPolicy(deps(), { gameId: g.gameId, doorKey: 'vault', effect: 'allow', subjectType: 'users', subjectIds: ['bob'] }, 'test');
    client.nudge();
    await until(() => doors.manifestVersion === p.doorsVersion, 'manifest refetched after a version change');
    expect(doors.manifestVersion).to.be.greaterThan(before);
    expect(await doors.check('vault', 'bob')).to.include({ allowed: true, source: 'service' }); // cache was forgotten
  });

  it('refetches the manifest on refresh_permissions', async () => {
    client.start();
    const executed = client.stats().commandsExecuted;
    const acked = client.stats().commandsAcked;
    await issueCommand(deps(), { gameId: g.gameId, type: 'refresh_permissions', target: { externalServerId: 'srv-doors' }, issuedBy: 'test' });
    client.nudge();
    // the doors version did not change, so only the command can cause this fetch
    await until(() => sent.includes('GET /api/v1/game/doors/manifest'), 'manifest refetch');
    await until(() => client.stats().commandsExecuted > executed, 'refresh_permissions executed');
    client.nudge(); // the ack goes out with the next heartbeat
    await until(() => client.stats().commandsAcked > acked, 'refresh_permissions acked');
  });
});
