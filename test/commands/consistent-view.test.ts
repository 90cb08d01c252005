/**
 * Issue #21 item 6, "Consistent command view": `commands show` (a real CLI process) and the console's
 * command list read a command's status and its transitions from one source, so at every step of the
 * lifecycle, before and after the flusher ran, the transition that set the status is listed, with the
 * time the view reports for it.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { okJson, runAdmin } from '../admin/harness.js';
import { beat, closeOwnPrefix, issue, ownPrefixHarness } from './command-fixtures.js';
import { listCommands, showCommand, type CommandView } from '../../src/commands/command-query.js';
import { expireDueCommands } from '../../src/commands/command-expiry.js';

type Shown = { status: string; statusAt: string; source: string; failureReason: string | null; transitions: { toStatus: string; at: string; externalServerId: string | null; reason: string | null }[] };

/** The promise of the issue: the status is one of the listed transitions, at the time reported for it. */
function expectConsistent(v: { status: string; statusAt: Date | string; transitions: { toStatus: string; at: Date | string }[] }, label: string): void {
  const setBy = v.transitions.find((t) => t.toStatus === v.status);
  expect(setBy, `${label}: status ${v.status} without its transition in ${JSON.stringify(v.transitions)}`).to.not.equal(undefined);
  expect(new Date(setBy!.at).getTime(), label).to.equal(new Date(v.statusAt).getTime());
}

describe('consistent command view (status and transitions from one source)', function () {
  this.timeout(60_000);
  let h: Harness;
  let g: TestGame;
  const show = async (id: string): Promise<Shown> => okJson<Shown>(await runAdmin(['commands', 'show', '--id', id, '--json'], h.config.redisPrefix));

  before(async () => {
    h = ownPrefixHarness('view');
    g = await h.game();
  });
  after(async () => {
    await h.db.command.deleteMany({ where: { gameId: g.gameId } });
    await closeOwnPrefix(h);
  });

  it('commands show lists the transition of every status it reports, before and after the flush', async () => {
    await beat(h, g, 'cv-1', ['ann']);
    const c = await issue(h, g, { type: 'kick', payload: { reason: 'spam' }, target: { externalId: 'ann' } });

    const pending = await show(c.id);
    expect(pending).to.include({ status: 'pending', source: 'live' });
    expectConsistent(pending, 'pending');

    // Delivered: Redis says dispatched while Postgres still says pending (no flush yet).
    await beat(h, g, 'cv-1', ['ann']);
    expect((await h.db.command.findUniqueOrThrow({ where: { id: c.id } })).status).to.equal('pending');
    const dispatched = await show(c.id);
    expect(dispatched).to.include({ status: 'dispatched', source: 'live' });
    expect(dispatched.transitions.map((t) => t.toStatus)).to.deep.equal(['pending', 'dispatched']);
    expect(dispatched.transitions[1]!.externalServerId).to.equal('cv-1');
    expectConsistent(dispatched, 'dispatched, unflushed');

    await beat(h, g, 'cv-1', ['ann'], { acks: [c.id] });
    const acked = await show(c.id);
    expect(acked).to.include({ status: 'acked', source: 'live' });
    expect(acked.transitions.map((t) => t.toStatus)).to.deep.equal(['pending', 'dispatched', 'acked']);
    expectConsistent(acked, 'acked, unflushed');

    // After the flush, and once the hash is gone, Postgres tells the same story with the same times.
    await h.flush(g.gameId);
    await h.redis.del(h.keySpace.game(g.gameId).command(c.id));
    const afterwards = await show(c.id);
    expect(afterwards).to.include({ status: 'acked', source: 'recorded' });
    expect(afterwards.transitions).to.deep.equal(acked.transitions);
    expectConsistent(afterwards, 'acked, recorded');
  });

  it('a failure and an expiry carry their transition (with the reason) in the live view', async () => {
    await beat(h, g, 'cv-2', ['bea', 'cid']);
    const failing = await issue(h, g, { type: 'freeze', payload: {}, target: { externalId: 'bea' } });
    const expiring = await issue(h, g, { type: 'freeze', payload: {}, target: { externalId: 'cid' }, expiresInSeconds: 5 });
    await beat(h, g, 'cv-2', ['bea', 'cid']);
    await beat(h, g, 'cv-2', ['bea', 'cid'], { failures: [{ id: failing.id, reason: 'player is an admin' }] });
    await expireDueCommands(h.redis, h.keySpace, Date.now() + 10_000);

    const failed = await showCommand(h.db, h.redis, h.keySpace, failing.id);
    expect(failed).to.include({ status: 'failed', failureReason: 'player is an admin', source: 'live' });
    expect(failed.transitions.at(-1)).to.include({ toStatus: 'failed', externalServerId: 'cv-2', reason: 'player is an admin' });
    expectConsistent(failed, 'failed');

    const expired = await showCommand(h.db, h.redis, h.keySpace, expiring.id);
    expect(expired).to.include({ status: 'expired', source: 'live' });
    expect(expired.transitions.at(-1)!.at.getTime()).to.equal(expiring.expiresAt.getTime());
    expectConsistent(expired, 'expired');
  });

  it('a live hash without transition fields (written before this change) is not mixed with Postgres: the recorded view is shown', async () => {
    await beat(h, g, 'cv-3', ['dee']);
    const c = await issue(h, g, { type: 'kick', payload: { reason: 'x' }, target: { externalId: 'dee' } });
    await beat(h, g, 'cv-3', ['dee']);
    const key = h.keySpace.game(g.gameId).command(c.id);
    await h.redis.hdel(key, 't:pending', 't:dispatched');
    const v = await showCommand(h.db, h.redis, h.keySpace, c.id);
    expect(v).to.include({ status: 'pending', source: 'recorded' });
    expectConsistent(v, 'legacy hash');
  });

  it('the console list (listCommands) obeys the same rule for every command', async () => {
    const views: CommandView[] = await listCommands(h.db, h.redis, h.keySpace, { gameId: g.gameId, limit: 50 });
    expect(views.length).to.be.greaterThan(3);
    for (const v of views) expectConsistent(v, `${v.type} ${v.id}`);
  });
});
