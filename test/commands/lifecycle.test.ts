/**
 * Spec: States › Command lifecycle (pending → dispatched → acked; failed), Heartbeat response (commands),
 * client rules (at-least-once redelivery, idempotent acks). Every transition is checked in Redis (what the
 * next heartbeat sees) and in Postgres after the workers' flush (what moderators see).
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { StreamConsumer } from '../../src/store/streams.js';
import { flushCommandLog } from '../../src/commands/command-log-flusher.js';
import { beat, deleteCommands, isCommandEntry, issue, recorded } from './command-fixtures.js';

describe('command lifecycle', () => {
  const h = new Harness();
  const games: TestGame[] = [];
  const game = async (...args: Parameters<Harness['game']>) => {
    const g = await h.game(...args);
    games.push(g);
    return g;
  };
  after(async () => {
    await deleteCommands(h, games);
    await h.close();
  });

  it('records an issued command as pending with its issuer, expiry and a pending transition', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'kick', target: { externalId: 'u1' }, payload: { reason: 'spam' }, expiresInSeconds: 120 });
    expect(c).to.include({ status: 'pending', routedTo: 'srv-1', type: 'kick' });
    expect(c.expiresAt.getTime() - c.issuedAt.getTime()).to.equal(120_000);
    const row = await h.db.command.findUniqueOrThrow({ where: { id: c.id } });
    expect(row).to.include({ gameId: g.gameId, type: 'kick', status: 'pending', issuedBy: 'test:moderator', externalId: 'u1', externalServerId: null });
    expect(row.payload).to.deep.equal({ reason: 'spam' });
    expect(row.expiresAt.getTime()).to.equal(c.expiresAt.getTime());
    const r = await recorded(h, c.id);
    expect(r.transitions.map((t) => [t.toStatus, t.at.getTime()])).to.deep.equal([['pending', c.issuedAt.getTime()]]);
  });

  it('delivers a pending command in the next heartbeat as dispatched, in the documented entry shape', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'mute', target: { externalId: 'u1' }, payload: { durationSeconds: 600, reason: 'caps' } });
    const [entry, ...rest] = await beat(h, g, 'srv-1', ['u1']);
    expect(rest).to.deep.equal([]);
    expect(isCommandEntry(entry), JSON.stringify(isCommandEntry.errors)).to.equal(true);
    expect(entry).to.deep.equal({
      id: c.id,
      type: 'mute',
      payload: { durationSeconds: 600, reason: 'caps' },
      issuedAt: c.issuedAt.toISOString(),
      expiresAt: c.expiresAt.toISOString(),
      target: { externalServerId: 'srv-1', externalId: 'u1' },
    });
    const keys = h.keySpace.game(g.gameId);
    expect(await h.redis.hget(keys.command(c.id), 'status')).to.equal('dispatched');
    await h.flush(g.gameId);
    const r = await recorded(h, c.id);
    expect(r.status).to.equal('dispatched');
    expect(r.transitions.map((t) => [t.toStatus, t.externalServerId])).to.deep.equal([['pending', null], ['dispatched', 'srv-1']]);
  });

  it('server commands carry a target without a user', async () => {
    const g = await game();
    await beat(h, g, 'srv-1');
    const c = await issue(h, g, { type: 'refresh_permissions', target: { externalServerId: 'srv-1' } });
    const [entry] = await beat(h, g, 'srv-1');
    expect(entry).to.deep.include({ id: c.id, payload: {}, target: { externalServerId: 'srv-1' } });
  });

  it('re-delivers a dispatched command on every heartbeat until it is acked (a lost response loses nothing)', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'freeze', target: { externalId: 'u1' } });
    // the response of this heartbeat is "lost": the client never saw it and acks nothing
    expect((await beat(h, g, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
    expect((await beat(h, g, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
    expect((await beat(h, g, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
    expect(await beat(h, g, 'srv-1', ['u1'], { acks: [c.id] })).to.deep.equal([]);
    expect(await beat(h, g, 'srv-1', ['u1'])).to.deep.equal([]);
    await h.flush(g.gameId);
    const r = await recorded(h, c.id);
    expect(r.status).to.equal('acked');
    expect(r.transitions.map((t) => t.toStatus)).to.deep.equal(['pending', 'dispatched', 'acked']);
  });

  it('acks are idempotent: re-acking an acked command succeeds and changes nothing', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'unmute', target: { externalId: 'u1' } });
    await beat(h, g, 'srv-1', ['u1']);
    await beat(h, g, 'srv-1', ['u1'], { acks: [c.id] });
    await h.flush(g.gameId);
    const first = await recorded(h, c.id);
    const keys = h.keySpace.game(g.gameId);
    const hashBefore = await h.redis.hgetall(keys.command(c.id));
    expect(await beat(h, g, 'srv-1', ['u1'], { acks: [c.id, c.id] })).to.deep.equal([]);
    expect(await beat(h, g, 'srv-1', ['u1'], { acks: [c.id] })).to.deep.equal([]);
    await h.flush(g.gameId);
    expect(await h.redis.hgetall(keys.command(c.id))).to.deep.equal(hashBefore);
    expect(await recorded(h, c.id)).to.deep.equal(first);
    expect(first.status).to.equal('acked');
  });

  it('an ack that arrives after expiresAt does not ack: the command ends expired', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'freeze', target: { externalId: 'u1' } });
    expect((await beat(h, g, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
    // time passes beyond expiresAt before the ack arrives (the expiry job has not run yet)
    const keys = h.keySpace.game(g.gameId);
    await h.redis.hset(keys.command(c.id), 'exp', String(Date.now() - 1));
    expect(await beat(h, g, 'srv-1', ['u1'], { acks: [c.id] })).to.deep.equal([]);
    expect(await h.redis.hget(keys.command(c.id), 'status')).to.equal('expired');
    await h.flush(g.gameId);
    expect((await recorded(h, c.id)).status).to.equal('expired');
  });

  it('ignores acks of unknown ids and of commands dispatched to another server', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    await beat(h, g, 'srv-2', ['u2']);
    const c = await issue(h, g, { type: 'kick', target: { externalId: 'u1' }, payload: { reason: 'r' } });
    await beat(h, g, 'srv-1', ['u1']);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await beat(h, g, 'srv-2', ['u2'], { acks: [c.id, unknown, 'not-a-uuid'] })).to.deep.equal([]);
    expect((await beat(h, g, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
    await h.flush(g.gameId);
    expect((await recorded(h, c.id)).status).to.equal('dispatched');
    expect(await h.db.command.count({ where: { id: unknown } })).to.equal(0);
  });

  it('a failure report moves a dispatched command to failed with its reason, surfaced with the issuer', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'teleport', target: { externalId: 'u1' }, payload: { place: 'arena' }, issuedBy: 'cli:alice' });
    await beat(h, g, 'srv-1', ['u1']);
    expect(await beat(h, g, 'srv-1', ['u1'], { failures: [{ id: c.id, reason: 'place not reachable' }] })).to.deep.equal([]);
    // a later ack of a failed command changes nothing
    await beat(h, g, 'srv-1', ['u1'], { acks: [c.id] });
    await h.flush(g.gameId);
    const r = await recorded(h, c.id);
    expect(r).to.include({ status: 'failed', issuedBy: 'cli:alice', failureReason: 'place not reachable' });
    expect(r.transitions.map((t) => [t.toStatus, t.reason])).to.deep.equal([['pending', null], ['dispatched', null], ['failed', 'place not reachable']]);
  });

  it('failure reports of a pending (never delivered) command are ignored', async () => {
    const g = await game();
    await beat(h, g, 'srv-1');
    await beat(h, g, 'srv-2');
    const c = await issue(h, g, { type: 'shutdown', target: { externalServerId: 'srv-1' } });
    await beat(h, g, 'srv-2', [], { failures: [{ id: c.id, reason: 'nope' }] });
    expect((await beat(h, g, 'srv-1')).map((e) => e.id)).to.deep.equal([c.id]);
  });

  it('keys without the commands scope get no commands, and the command stays pending for them', async () => {
    const g = await game(['heartbeat', 'events']);
    const withCommands = { ...g, ...(await h.key(g.gameId, ['heartbeat', 'commands'])) };
    await beat(h, g, 'srv-1', ['u1']);
    const c = await issue(h, g, { type: 'message', target: { externalId: 'u1' }, payload: { text: 'hello' } });
    expect(await beat(h, g, 'srv-1', ['u1'])).to.deep.equal([]);
    expect((await beat(h, withCommands, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
  });

  it('Redis and Postgres agree after a command-log flusher dies mid-batch and another takes over', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1', 'u2', 'u3']);
    const a = await issue(h, g, { type: 'kick', target: { externalId: 'u1' }, payload: { reason: 'a' } });
    const b = await issue(h, g, { type: 'freeze', target: { externalId: 'u2' } });
    const c = await issue(h, g, { type: 'message', target: { externalServerId: 'srv-1' }, payload: { text: 'hi' } });
    await beat(h, g, 'srv-1', ['u1', 'u2', 'u3']);
    await beat(h, g, 'srv-1', ['u2', 'u3'], { acks: [a.id], failures: [{ id: b.id, reason: 'gone' }] });
    const keys = h.keySpace.game(g.gameId);
    // worker 1 reads the whole log and dies before committing anything
    const dying = new StreamConsumer(h.redis, 'flush-command-log', 'worker-1', 0);
    expect((await dying.read(keys.commandLog(), 100)).length).to.be.greaterThan(0);
    // worker 2 (after the restart) claims the abandoned entries and flushes them
    const next = new StreamConsumer(h.redis, 'flush-command-log', 'worker-2', 0);
    while ((await flushCommandLog(h.db, next, h.keySpace, g.gameId)).entries) { /* drain */ }
    // and a second pass over the same entries (the dead worker's duplicate) changes nothing
    const again = new StreamConsumer(h.redis, 'flush-command-log', 'worker-3', 0);
    expect((await flushCommandLog(h.db, again, h.keySpace, g.gameId)).entries).to.equal(0);
    for (const cmd of [a, b, c]) {
      const live = await h.redis.hget(keys.command(cmd.id), 'status');
      expect((await recorded(h, cmd.id)).status, cmd.type).to.equal(live);
    }
    expect(await h.redis.xlen(keys.commandLog())).to.equal(0);
  });
});
