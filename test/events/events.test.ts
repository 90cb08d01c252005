/** Spec: Events › Player events (idempotency rules 1–5), Event type values, durability of a 200. */
import { expect } from 'chai';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { StreamConsumer } from '../../src/store/streams.js';
import { flushEvents } from '../../src/events/event-flusher.js';
import { flushSessions } from '../../src/presence/session-flusher.js';

describe('player events', () => {
  const h = new Harness();
  let g: TestGame;
  beforeEach(async () => {
    g = await h.game();
  });
  after(() => h.close());

  it('stores the five known types and custom types exactly as given, payload as JSON', async () => {
    const types = ['join', 'leave', 'team_change', 'death', 'spawn', 'Quest.Complete:v2', 'boss killed'];
    const evs = types.map((t, i) => event(t, { payload: { i, nested: { list: [1, 'two', null] } }, externalId: `u${i}` }));
    evs.push(event('ping', { payload: undefined, externalId: undefined }));
    expect((await h.heartbeat(g, heartbeatBody(['u1'], { events: evs }))).status).to.equal(200);
    await h.flush(g.gameId);
    const stored = await h.db.playerEvent.findMany({ where: { gameId: g.gameId } });
    expect(stored).to.have.length(evs.length);
    const rows = evs.map((e) => stored.find((r) => r.eventId === e.eventId));
    expect(rows.map((r) => r?.type)).to.deep.equal([...types, 'ping']);
    expect(rows[5]!.payload).to.deep.equal({ i: 5, nested: { list: [1, 'two', null] } });
    expect(rows[5]!.occurredAt.toISOString()).to.equal(evs[5]!.occurredAt);
    expect(rows[7]).to.include({ payload: null, externalId: null, externalServerId: 'server-1' });
  });

  it('upserts by eventId: the same event twice is a no-op, a reused id keeps the first', async () => {
    const e1 = event('death', { payload: { killer: 'a' } });
    const reused = { ...e1, type: 'spawn', payload: { different: true } };
    expect((await h.heartbeat(g, heartbeatBody([], { events: [e1] }))).status).to.equal(200);
    // the client retried (re-signed) the same events, then reused the id for another event
    expect((await h.heartbeat(g, heartbeatBody([], { events: [e1, reused] }))).status).to.equal(200);
    await h.flush(g.gameId);
    const rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId } });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ type: 'death', eventId: e1.eventId });
    expect(rows[0]!.payload).to.deep.equal({ killer: 'a' });
  });

  it('treats eventIds as unique per game, not globally', async () => {
    const other = await h.game();
    const shared = event('join');
    await h.heartbeat(g, heartbeatBody([], { events: [shared] }));
    await h.heartbeat(other, heartbeatBody([], { events: [shared] }));
    await h.flush(g.gameId);
    await h.flush(other.gameId);
    expect(await h.db.playerEvent.count({ where: { eventId: shared.eventId } })).to.equal(2);
  });

  it('loses and duplicates nothing when a flusher dies between insert and acknowledge', async () => {
    const keys = h.keySpace.game(g.gameId);
    const batches = [0, 1, 2].map(() => [event('death'), event('spawn'), event('custom_x')]);
    for (const [i, evs] of batches.entries()) {
      expect((await h.heartbeat(g, heartbeatBody([`p${i}`], { events: evs }))).status).to.equal(200);
    }
    const doomed = new StreamConsumer(h.redis, 'flush-events', 'doomed-worker');
    let err: unknown;
    await flushEvents(h.db, doomed, h.keySpace, g.gameId, 2, { afterInsert: () => { throw new Error('SIGKILL'); } }).catch((e: unknown) => (err = e));
    expect(String(err)).to.include('SIGKILL');
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(6); // inserted, not acked
    expect(await h.redis.xlen(keys.eventStream())).to.equal(3);
    // the restarted worker (another consumer name) takes the abandoned entries over and finishes
    const restarted = new StreamConsumer(h.redis, 'flush-events', 'restarted-worker', 0);
    let total = 0;
    for (let r = await flushEvents(h.db, restarted, h.keySpace, g.gameId); r.entries; r = await flushEvents(h.db, restarted, h.keySpace, g.gameId)) total += r.entries;
    expect(total).to.equal(3);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(9);
    expect(await h.redis.xlen(keys.eventStream())).to.equal(0);
  });

  it('re-applies session transitions idempotently after a crash mid-flush', async () => {
    await h.heartbeat(g, heartbeatBody(['a', 'b']));
    await h.heartbeat(g, heartbeatBody(['a']));
    const doomed = new StreamConsumer(h.redis, 'flush-sessions', 'doomed');
    await flushSessions(h.db, doomed, h.keySpace, g.gameId, 100, { afterInsert: () => { throw new Error('crash'); } }).catch(() => undefined);
    const restarted = new StreamConsumer(h.redis, 'flush-sessions', 'restarted', 0);
    while ((await flushSessions(h.db, restarted, h.keySpace, g.gameId)).entries) { /* drain */ }
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { externalId: 'asc' } });
    expect(sessions.map((s) => [s.externalId, s.closeReason])).to.deep.equal([['a', null], ['b', 'left']]);
    expect(await h.db.gameServer.count({ where: { gameId: g.gameId } })).to.equal(1);
  });

  it('applies a session\'s open before its close when a read\'s reply was lost (the client timed out)', async () => {
    const key = h.keySpace.game(g.gameId).sessionStream();
    await h.heartbeat(g, heartbeatBody(['a', 'b']));
    const worker = new StreamConsumer(h.redis, 'flush-sessions', 'worker'); // claims others' entries only after 15 s
    expect(await worker.read(key, 100)).to.have.length(3); // up, open a, open b: delivered, the reply lost
    await h.heartbeat(g, heartbeatBody(['a'])); // closes b
    while ((await flushSessions(h.db, worker, h.keySpace, g.gameId)).entries) { /* drain */ }
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { externalId: 'asc' } });
    expect(sessions.map((s) => [s.externalId, s.username, s.closeReason])).to.deep.equal([['a', 'user_a', null], ['b', 'user_b', 'left']]);
    expect(await h.redis.xlen(key)).to.equal(0);
  });

  it('stores a session closed when its close is flushed before its open (a dead worker held the open)', async () => {
    const key = h.keySpace.game(g.gameId).sessionStream();
    await h.heartbeat(g, heartbeatBody(['a', 'b']));
    expect(await new StreamConsumer(h.redis, 'flush-sessions', 'doomed').read(key, 100)).to.have.length(3);
    await h.heartbeat(g, heartbeatBody(['a'])); // closes b
    const other = new StreamConsumer(h.redis, 'flush-sessions', 'other'); // the doomed entries are not idle long enough yet
    expect(await flushSessions(h.db, other, h.keySpace, g.gameId)).to.include({ entries: 1, closed: 1 });
    const closedFirst = await h.db.session.findMany({ where: { gameId: g.gameId } });
    expect(closedFirst.map((s) => [s.externalId, s.username, s.closeReason])).to.deep.equal([['b', null, 'left']]);
    const restarted = new StreamConsumer(h.redis, 'flush-sessions', 'restarted', 0);
    while ((await flushSessions(h.db, restarted, h.keySpace, g.gameId)).entries) { /* drain */ }
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { externalId: 'asc' } });
    expect(sessions.map((s) => [s.externalId, s.username, s.externalScopeId, s.closeReason])).to.deep.equal([
      ['a', 'user_a', 'place-1', null],
      ['b', 'user_b', 'place-1', 'left'],
    ]);
    expect(sessions[1]!.closedAt!.getTime()).to.equal(closedFirst[0]!.closedAt!.getTime());
  });

  it('keeps a 200 durable in Redis before any flush (nothing accepted is lost)', async () => {
    const keys = h.keySpace.game(g.gameId);
    const evs = [event('join'), event('leave')];
    expect((await h.heartbeat(g, heartbeatBody(['a'], { events: evs }))).status).to.equal(200);
    const entries = await h.redis.xrange(keys.eventStream(), '-', '+');
    expect(entries).to.have.length(1);
    const fields = entries[0]![1];
    expect(JSON.parse(fields[fields.indexOf('e') + 1]!).map((e: { eventId: string }) => e.eventId)).to.deep.equal(evs.map((e) => e.eventId));
  });
});
