/**
 * Issue #5 operator CLI: `doors create|list|delete|force`, `policies add|list|delete`, `--json` (exactly
 * one JSON object on stdout; errors on stderr, non-zero exit). Forcing a door sends door_set_state to
 * every live server of the game, which receives it in its next heartbeat.
 */
import { expect } from 'chai';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { okJson, runAdmin } from '../admin/harness.js';
import { buildOrg, check, manifest, type Org } from './door-fixtures.js';

describe('admin CLI: doors and policies', function () {
  // Every command is a real `scripts/admin.ts` process (about 1-2 s of start-up each).
  this.timeout(120_000);
  const h = new Harness();
  let g: TestGame;
  let org: Org;
  const admin = (...args: string[]) => runAdmin(args, h.config.redisPrefix);

  before(async () => {
    g = await h.game();
    org = await buildOrg(h, g.workspaceId);
  });
  after(() => h.close());

  it('creates, lists and deletes doors', async () => {
    const created = okJson<Record<string, unknown>>(await admin('doors', 'create', '--game', g.gameId, '--key', 'armory', '--name', 'Armory', '--kind', 'locker', '--fail-mode', 'closed', '--json'));
    expect(created).to.include({ key: 'armory', name: 'Armory', kind: 'locker', defaultEffect: 'deny', failMode: 'closed', forcedState: 'auto', policies: 0 });
    expect(created.doorsVersion).to.be.a('number');
    okJson(await admin('doors', 'create', '--game', g.gameId, '--key', 'gate', '--name', 'Front gate', '--default', 'allow', '--fail-mode', 'open', '--json'));

    const dup = await admin('doors', 'create', '--game', g.gameId, '--key', 'gate', '--name', 'again', '--json');
    expect(dup.code).to.equal(1);
    expect(dup.stdout).to.equal('');
    expect(dup.stderr).to.match(/^error: .*\[door_exists\]\n$/);
    expect((await admin('doors', 'create', '--game', g.gameId, '--name', 'no key')).code).to.equal(2);

    const listed = okJson<{ doors: { key: string; forcedState: string }[] }>(await admin('doors', 'list', '--game', g.gameId, '--json'));
    expect(listed.doors.map((d) => d.key)).to.deep.equal(['armory', 'gate']);
    const text = await admin('doors', 'list', '--game', g.gameId);
    expect(text.stdout).to.match(/^KEY\s+NAME\s+KIND/);

    expect(okJson(await admin('doors', 'delete', '--game', g.gameId, '--door', 'gate', '--yes', '--json'))).to.include({ key: 'gate' });
    const gone = await admin('doors', 'delete', '--game', g.gameId, '--door', 'gate', '--yes');
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.include('[unknown_door]');
  });

  it('adds, lists and deletes policies, conditions included', async () => {
    const p = okJson<Record<string, unknown>>(
      await admin('policies', 'add', '--game', g.gameId, '--door', 'armory', '--effect', 'allow', '--subject', 'units', '--ids', org.root,
        '--include-descendants', '--priority', '5', '--clocked-in', '--min-tenure-days', '30',
        '--window-from', '08:00', '--window-to', '20:00', '--window-days', 'mon,fri', '--window-tz', 'Europe/Paris', '--json'),
    );
    expect(p).to.deep.include({
      doorKey: 'armory', effect: 'allow', priority: 5, subjectType: 'units', subjectIds: [org.root], includeDescendants: true,
      conditions: { clockedIn: true, minTenureDays: 30, timeWindow: { from: '08:00', to: '20:00', timeZone: 'Europe/Paris', days: ['mon', 'fri'] } },
    });
    const deny = okJson<{ id: string }>(await admin('policies', 'add', '--game', g.gameId, '--door', 'armory', '--effect', 'deny', '--subject', 'users', '--ids', 'troll,griefer',
      '--conditions', '{"noActiveRecordType":"pardon"}', '--json'));

    const listed = okJson<{ policies: { id: string; priority: number }[] }>(await admin('policies', 'list', '--game', g.gameId, '--door', 'armory', '--json'));
    expect(listed.policies.map((x) => x.id)).to.deep.equal([p.id, deny.id]);

    for (const [args, code] of [
      [['--subject', 'positions', '--ids', '00000000-0000-4000-8000-000000000000'], 'unknown_subject'],
      [['--subject', 'everyone', '--window-from', '25:00', '--window-to', '10:00'], 'invalid_conditions'],
      [['--subject', 'everyone', '--conditions', '{"clockedin":true}'], 'invalid_conditions'],
      [['--subject', 'everyone', '--window-from', '08:00', '--window-to', '10:00', '--window-tz', 'Mars/Base'], 'invalid_conditions'],
    ] as const) {
      const r = await admin('policies', 'add', '--game', g.gameId, '--door', 'armory', '--effect', 'allow', ...args);
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.include(`[${code}]`);
    }

    expect(okJson(await admin('policies', 'delete', '--game', g.gameId, '--id', deny.id, '--yes', '--json'))).to.include({ id: deny.id, doorKey: 'armory' });
    expect((await admin('policies', 'delete', '--game', g.gameId, '--id', deny.id, '--yes')).stderr).to.include('[unknown_policy]');
  });

  it('doors force records the state and sends door_set_state to every live server', async () => {
    for (const server of ['server-1', 'server-2']) {
      expect((await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: server }))).status).to.equal(200);
    }
    const r = okJson<{ forcedState: string; commands: { externalServerId: string; commandId: string }[]; failures: unknown[] }>(
      await admin('doors', 'force', '--game', g.gameId, '--door', 'armory', '--state', 'locked', '--json'),
    );
    expect(r.forcedState).to.equal('locked');
    expect(r.failures).to.deep.equal([]);
    expect(r.commands.map((c) => c.externalServerId).sort()).to.deep.equal(['server-1', 'server-2']);

    for (const server of ['server-1', 'server-2']) {
      const hb = await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: server }));
      const cmd = hb.body.commands.find((c: { type: string }) => c.type === 'door_set_state');
      expect(cmd, server).to.deep.include({ payload: { doorKey: 'armory', state: 'locked' } });
      expect(cmd.target.externalServerId).to.equal(server);
    }
    expect((await manifest(h, g)).body.doors.find((d: { key: string }) => d.key === 'armory').forcedState).to.equal('locked');
    expect((await check(h, g, 'armory', 'alice')).body).to.include({ decision: 'deny', reason: 'forced_locked' });

    const auto = okJson<{ forcedState: string }>(await admin('doors', 'force', '--game', g.gameId, '--door', 'armory', '--state', 'auto', '--json'));
    expect(auto.forcedState).to.equal('auto');
    expect((await admin('doors', 'force', '--game', g.gameId, '--door', 'armory', '--state', 'open')).stderr).to.include('state must be one of');
    const audit = await h.db.auditLog.findMany({ where: { gameId: g.gameId, action: 'door.force' } });
    expect(audit.map((a) => (a.detail as { to: string }).to)).to.have.members(['locked', 'auto']);
  });
});
