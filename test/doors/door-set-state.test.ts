/**
 * Issue #21 item 1: `door_set_state` issued as a moderation command takes effect, through the same path
 * as `doors force` (spec: States › Door forced state; Command types, "Overrides policy until returned to
 * auto"). Tried from outside: the command is issued with the real CLI, decisions and the manifest are
 * read with signed requests through the app, and the game server receives and acks the command in its
 * heartbeats. The state is recorded when the command is issued (README "Doors › door_set_state").
 */
import { expect } from 'chai';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { okJson, runAdmin } from '../admin/harness.js';
import { bulk, check, doorWith, manifest } from './door-fixtures.js';

type Decision = { doorKey: string; decision: string; reason: string; forcedState: string; doorsVersion: number; cached: boolean; policyId: string | null };
type Manifest = { version: number; doors: { key: string; forcedState: string }[] };
type Entry = { id: string; type: string; payload: Record<string, unknown>; target: { externalServerId: string } };

describe('door_set_state takes effect', function () {
  this.timeout(120_000);
  const h = new Harness();
  let g: TestGame;
  let armoryPolicy: string;
  const admin = (...args: string[]) => runAdmin(args, h.config.redisPrefix);
  const SERVER = 'dss-server-1';

  async function beat(extra: Parameters<typeof heartbeatBody>[1] = {}): Promise<{ commands: Entry[]; config: { doorsVersion?: number } }> {
    const res = await h.heartbeat(g, heartbeatBody(['alice'], { externalServerId: SERVER, ...extra }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { commands: Entry[]; config: { doorsVersion?: number } };
  }
  async function decide(door: string, user = 'alice'): Promise<Decision> {
    const res = await check(h, g, door, user, { externalServerId: SERVER });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as Decision;
  }
  async function manifestNow(): Promise<Manifest> {
    const res = await manifest(h, g);
    expect(res.status).to.equal(200);
    return res.body as Manifest;
  }
  const setState = (door: string, state: string, server = SERVER) =>
    admin('commands', 'issue', '--game', g.gameId, '--type', 'door_set_state', '--server', server, '--payload', JSON.stringify({ doorKey: door, state }), '--json');

  before(async () => {
    g = await h.game();
    await doorWith(h, g.gameId, [], { key: 'gate', defaultEffect: 'allow' });
    armoryPolicy = (await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['alice'] }], { key: 'armory', defaultEffect: 'deny' })).ids[0]!;
    await beat();
  });
  after(() => h.close());

  it('locked: the next doors/check denies with forcedState locked, the manifest shows it, the server receives and acks the command', async () => {
    const before = await decide('gate');
    expect(before).to.include({ decision: 'allow', reason: 'default_allow', forcedState: 'auto' });
    expect((await decide('gate')).cached, 'the allow is cached').to.equal(true);
    const m0 = await manifestNow();

    const issued = okJson<{ id: string; status: string; door: { key: string; from: string; forcedState: string; doorsVersion: number } }>(await setState('gate', 'locked'));
    expect(issued.status).to.equal('pending');
    expect(issued.door).to.deep.equal({ key: 'gate', from: 'auto', forcedState: 'locked', doorsVersion: m0.version + 1 });

    // The cached allow is retired: the very next check is a fresh deny.
    const after = await decide('gate');
    expect(after).to.include({ decision: 'deny', reason: 'forced_locked', forcedState: 'locked', cached: false, doorsVersion: issued.door.doorsVersion });
    const m1 = await manifestNow();
    expect(m1.version).to.equal(issued.door.doorsVersion);
    expect(m1.doors.find((d) => d.key === 'gate')?.forcedState).to.equal('locked');
    const all = (await bulk(h, g, 'alice')).body as { decisions: Decision[] };
    expect(all.decisions.find((d) => d.doorKey === 'gate')).to.include({ decision: 'deny', forcedState: 'locked' });

    // The game server gets the command (and the new doors version in config), acts, acks.
    const hb = await beat();
    expect(hb.config.doorsVersion).to.equal(issued.door.doorsVersion);
    const entry = hb.commands.find((c) => c.id === issued.id);
    expect(entry).to.deep.include({ type: 'door_set_state', payload: { doorKey: 'gate', state: 'locked' } });
    expect(entry!.target.externalServerId).to.equal(SERVER);
    await beat({ acks: [issued.id] });
    await h.flush(g.gameId);
    const shown = okJson<{ status: string; transitions: { toStatus: string }[] }>(await admin('commands', 'show', '--id', issued.id, '--json'));
    expect(shown.status).to.equal('acked');
    expect(shown.transitions.map((t) => t.toStatus)).to.deep.equal(['pending', 'dispatched', 'acked']);

    // The ack changes the command, not the door: still locked.
    expect(await decide('gate')).to.include({ decision: 'deny', forcedState: 'locked' });
    const audit = await h.db.auditLog.findMany({ where: { gameId: g.gameId, action: 'door.force' } });
    expect(audit.map((a) => a.detail)).to.deep.include({ key: 'gate', from: 'auto', to: 'locked', via: 'command', externalServerId: SERVER });
  });

  it('auto returns the door to policy; unlocked overrides a deny and auto restores it', async () => {
    const back = okJson<{ door: { forcedState: string; from: string } }>(await setState('gate', 'auto'));
    expect(back.door).to.include({ from: 'locked', forcedState: 'auto' });
    expect(await decide('gate')).to.include({ decision: 'allow', reason: 'default_allow', forcedState: 'auto' });
    expect((await manifestNow()).doors.find((d) => d.key === 'gate')?.forcedState).to.equal('auto');

    // bob has no allow policy on the armory: default deny; unlocked lets him in; auto restores the policy.
    expect(await decide('armory', 'bob')).to.include({ decision: 'deny', reason: 'default_deny' });
    okJson(await setState('armory', 'unlocked'));
    expect(await decide('armory', 'bob')).to.include({ decision: 'allow', reason: 'forced_unlocked', forcedState: 'unlocked' });
    okJson(await setState('armory', 'auto'));
    expect(await decide('armory', 'bob')).to.include({ decision: 'deny', reason: 'default_deny', forcedState: 'auto' });
    expect(await decide('armory', 'alice')).to.include({ decision: 'allow', reason: `policy_allow:${armoryPolicy}`, policyId: armoryPolicy });
  });

  it('a command that cannot be issued changes nothing: unknown door, server not live, user target, bad state or expiry', async () => {
    const m0 = await manifestNow();
    const commandsBefore = await h.db.command.count({ where: { gameId: g.gameId } });

    const unknown = await setState('no-such-door', 'locked');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('[unknown_door]');
    const gone = await setState('gate', 'locked', 'not-a-live-server');
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.include('[server_not_live]');
    const user = await admin('commands', 'issue', '--game', g.gameId, '--type', 'door_set_state', '--user', 'alice', '--payload', '{"doorKey":"gate","state":"locked"}');
    expect(user.code).to.equal(1);
    expect(user.stderr).to.include('[invalid_target]');
    const badState = await setState('gate', 'open');
    expect(badState.code).to.equal(1);
    expect(badState.stderr).to.include('[invalid_payload]');
    const badExpiry = await admin('commands', 'issue', '--game', g.gameId, '--type', 'door_set_state', '--server', SERVER, '--payload', '{"doorKey":"gate","state":"locked"}', '--expires-in', '1');
    expect(badExpiry.code).to.equal(1);
    expect(badExpiry.stderr).to.include('[invalid_expiry]');

    const m1 = await manifestNow();
    expect(m1.version).to.equal(m0.version);
    expect(m1.doors.find((d) => d.key === 'gate')?.forcedState).to.equal('auto');
    expect(await h.db.command.count({ where: { gameId: g.gameId } })).to.equal(commandsBefore);
  });
});
