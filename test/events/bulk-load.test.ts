/**
 * Bulk-loading flush (issue #20, src/store/bulk-copy.ts): COPY into a staging table + one INSERT/UPDATE per
 * batch keeps the flush's guarantees — exactly once by natural keys, XACK only after COMMIT, a re-read after
 * a crash stores nothing twice, a refused row goes to the dead letters and the rest of the batch is stored.
 */
import { expect } from 'chai';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { StreamConsumer } from '../../src/store/streams.js';
import { DeadLetters } from '../../src/store/dead-letters.js';
import { flushEvents } from '../../src/events/event-flusher.js';
import { flushSessions } from '../../src/presence/session-flusher.js';
import { flushAccessLog } from '../../src/doors/access-log-flusher.js';
import { copyField, copyLine } from '../../src/store/bulk-copy.js';

describe('bulk-loading flush (issue #20)', function () {
  this.timeout(60_000);
  const h = new Harness();
  let g: TestGame;
  const keys = () => h.keySpace.game(g.gameId);
  const drain = async (run: () => Promise<{ entries: number }>): Promise<void> => {
    while ((await run()).entries) { /* until the stream is empty */ }
  };
  beforeEach(async () => {
    g = await h.game();
  });
  after(() => h.close());

  it('encodes COPY text fields: NULL, and backslash, tab, newline, carriage return escaped', () => {
    expect(copyField(null)).to.equal('\\N');
    expect(copyField(undefined)).to.equal('\\N');
    expect(copyField('plain')).to.equal('plain');
    expect(copyField('a\\b\tc\nd\re')).to.equal('a\\\\b\\tc\\nd\\re');
    expect(copyLine(['x', null, '\\N'])).to.equal('x\t\\N\t\\\\N\n');
  });

  it('stores text that needs escaping exactly as sent (tabs, newlines, backslashes, a literal \\N)', async () => {
    const awkward = event('custom\tkind', { externalId: '\\N', payload: { text: 'line1\nline2\r\\end\t' } });
    expect((await h.heartbeat(g, heartbeatBody([], { events: [awkward] }))).status).to.equal(200);
    await h.flush(g.gameId);
    const row = await h.db.playerEvent.findFirstOrThrow({ where: { gameId: g.gameId } });
    expect(row).to.include({ type: 'custom\tkind', externalId: '\\N' });
    expect(row.payload).to.deep.equal({ text: 'line1\nline2\r\\end\t' });
  });

  it('stores an event repeated across batches once, the first one sent', async () => {
    const first = event('death', { payload: { n: 1 } });
    const repeat = { ...first, type: 'spawn', payload: { n: 2 } };
    for (const evs of [[first], [event('join')], [repeat, event('leave')]]) {
      expect((await h.heartbeat(g, heartbeatBody([], { events: evs }))).status).to.equal(200);
    }
    const consumer = new StreamConsumer(h.redis, 'flush-events', 'test');
    // One stream entry per batch: the repeat arrives in a later load than the original.
    await drain(() => flushEvents(h.db, consumer, h.keySpace, g.gameId, 1));
    const rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId, eventId: first.eventId } });
    expect(rows).to.have.length(1);
    expect(rows[0]!.payload).to.deep.equal({ n: 1 });
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(3);
  });

  it('events: a crash after COPY and before COMMIT stores nothing, keeps the entries pending, and the re-read stores each event once', async () => {
    const evs = [event('death'), event('spawn'), event('custom_x')];
    expect((await h.heartbeat(g, heartbeatBody(['p1'], { events: evs }))).status).to.equal(200);
    const doomed = new StreamConsumer(h.redis, 'flush-events', 'doomed');
    let err: unknown;
    await flushEvents(h.db, doomed, h.keySpace, g.gameId, 10, { beforeCommit: () => { throw new Error('SIGKILL'); } }).catch((e: unknown) => (err = e));
    expect(String(err)).to.include('SIGKILL');
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(0); // rolled back
    expect(await h.redis.xlen(keys().eventStream())).to.equal(1); // not acknowledged
    const restarted = new StreamConsumer(h.redis, 'flush-events', 'restarted', 0);
    await drain(() => flushEvents(h.db, restarted, h.keySpace, g.gameId));
    // A second pass over the same rows (the retry of a flusher killed after COMMIT) adds nothing.
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(3);
    expect(await h.redis.xlen(keys().eventStream())).to.equal(0);
  });

  it('sessions: a crash before COMMIT of the opens, then a re-read, opens and closes each session once', async () => {
    expect((await h.heartbeat(g, heartbeatBody(['a', 'b']))).status).to.equal(200);
    expect((await h.heartbeat(g, heartbeatBody(['a']))).status).to.equal(200);
    const doomed = new StreamConsumer(h.redis, 'flush-sessions', 'doomed');
    await flushSessions(h.db, doomed, h.keySpace, g.gameId, 100, { beforeCommit: () => { throw new Error('crash'); } }).catch(() => undefined);
    expect(await h.db.session.count({ where: { gameId: g.gameId } })).to.equal(0);
    const restarted = new StreamConsumer(h.redis, 'flush-sessions', 'restarted', 0);
    await drain(() => flushSessions(h.db, restarted, h.keySpace, g.gameId));
    // The same transitions again (a flusher killed after COMMIT, before XACK) change nothing.
    await h.redis.xadd(keys().sessionStream(), '*', ...(await h.db.session.findMany({ where: { gameId: g.gameId, externalId: 'a' } })).flatMap((s) => ['k', 'o', 's', s.externalServerId, 'u', s.externalId, 'n', 'a', 'at', String(s.openedAt.getTime())]));
    await drain(() => flushSessions(h.db, restarted, h.keySpace, g.gameId));
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { externalId: 'asc' } });
    expect(sessions.map((s) => [s.externalId, s.closeReason])).to.deep.equal([['a', null], ['b', 'left']]);
  });

  it('servers: up, gone and up again of one server in one batch end in stream order (registered, not gone, first seen kept)', async () => {
    const up = (sid: string, at: number, sdk: string) => ['k', 'up', 's', sid, 'at', String(at), 'sc', '', 'rg', 'eu', 'sdk', sdk, 'mp', '40'];
    const t0 = Date.now() - 60_000;
    await h.redis.xadd(keys().sessionStream(), '*', ...up('srv-1', t0, '1.0'));
    await h.redis.xadd(keys().sessionStream(), '*', ...up('srv-2', t0, '1.0'));
    await h.redis.xadd(keys().sessionStream(), '*', 'k', 'gone', 's', 'srv-1', 'at', String(t0 + 1000));
    await h.redis.xadd(keys().sessionStream(), '*', ...up('srv-1', t0 + 2000, '1.1'));
    await h.redis.xadd(keys().sessionStream(), '*', ...up('srv-1', t0 + 3000, '1.2'));
    await drain(() => flushSessions(h.db, new StreamConsumer(h.redis, 'flush-sessions', 'test'), h.keySpace, g.gameId));
    const servers = await h.db.gameServer.findMany({ where: { gameId: g.gameId }, orderBy: { externalServerId: 'asc' } });
    expect(servers.map((s) => [s.externalServerId, s.sdkVersion, s.maxPlayers, s.region, s.goneAt, s.firstSeenAt.getTime(), s.lastSeenAt.getTime()])).to.deep.equal([
      ['srv-1', '1.2', 40, 'eu', null, t0, t0 + 3000],
      ['srv-2', '1.0', 40, 'eu', null, t0, t0],
    ]);
  });

  it('events: a row COPY itself refuses (U+0000 written by an older build) is dead-lettered, the rest of the batch stored', async () => {
    const ok = [event('join'), event('leave')];
    const bad = event('spawn', { eventId: 'bad\u0000id' });
    await h.redis.xadd(keys().eventStream(), '*', 's', 'srv-old', 'r', String(Date.now()), 'e', JSON.stringify([ok[0], bad, ok[1]]));
    await flushEvents(h.db, new StreamConsumer(h.redis, 'flush-events', 'test'), h.keySpace, g.gameId);
    const stored = await h.db.playerEvent.findMany({ where: { gameId: g.gameId }, select: { eventId: true } });
    expect(stored.map((r) => r.eventId).sort()).to.deep.equal(ok.map((e) => e.eventId).sort());
    const letters = await new DeadLetters(h.redis, h.keySpace).summary(g.gameId);
    expect(letters.bySource.events).to.equal(1);
    expect(letters.latest[0]!.reason).to.match(/^22/); // a data exception, from COPY's input conversion
    expect(await h.redis.xlen(keys().eventStream())).to.equal(0);
  });

  it('events: one batch holding a stored event beside new ones stores the new ones in order and keeps the stored one (the straight COPY is refused, the staged load decides)', async () => {
    const stored = event('death', { payload: { n: 1 } });
    expect((await h.heartbeat(g, heartbeatBody([], { events: [stored] }))).status).to.equal(200);
    await h.flush(g.gameId);
    const fresh = [event('join'), event('leave')];
    const twiceInBatch = event('spawn', { payload: { n: 3 } });
    const batch = [fresh[0], { ...stored, payload: { n: 2 } }, twiceInBatch, fresh[1], { ...twiceInBatch, payload: { n: 4 } }];
    await h.redis.xadd(keys().eventStream(), '*', 's', 'srv-1', 'r', String(Date.now()), 'e', JSON.stringify(batch));
    await flushEvents(h.db, new StreamConsumer(h.redis, 'flush-events', 'test'), h.keySpace, g.gameId);
    const rows = await h.db.playerEvent.findMany({ where: { gameId: g.gameId }, select: { eventId: true, payload: true } });
    const byId = new Map(rows.map((r) => [r.eventId, r.payload]));
    expect(rows).to.have.length(4);
    expect(byId.get(stored.eventId)).to.deep.equal({ n: 1 }); // the first stored wins
    expect(byId.get(twiceInBatch.eventId)).to.deep.equal({ n: 3 }); // the first of the batch wins
    expect(byId.has(fresh[0]!.eventId) && byId.has(fresh[1]!.eventId)).to.equal(true);
    expect((await new DeadLetters(h.redis, h.keySpace).summary(g.gameId)).bySource.events).to.equal(0);
    expect(await h.redis.xlen(keys().eventStream())).to.equal(0);
  });

  it('events of a game deleted before the flush are dropped: no row, no dead letter, the entries acknowledged', async () => {
    expect((await h.heartbeat(g, heartbeatBody([], { events: [event('join'), event('leave')] }))).status).to.equal(200);
    await h.db.game.delete({ where: { id: g.gameId } });
    const res = await flushEvents(h.db, new StreamConsumer(h.redis, 'flush-events', 'test'), h.keySpace, g.gameId);
    expect(res).to.include({ entries: 1, events: 2 });
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(0);
    expect((await new DeadLetters(h.redis, h.keySpace).summary(g.gameId)).bySource.events).to.equal(0);
    expect(await h.redis.xlen(keys().eventStream())).to.equal(0);
  });

  it('access log: a crash before COMMIT, then a re-read, stores each decision once', async () => {
    const decisions = JSON.stringify([{ doorKey: 'd1', decision: 'grant', reason: 'policy', policyId: null }, { doorKey: 'd2', decision: 'deny', reason: 'no_policy', policyId: null }]);
    await h.redis.xadd(keys().accessStream(), '*', 'u', 'user-1', 's', 'srv-1', 'at', String(Date.now()), 'v', decisions);
    const doomed = new StreamConsumer(h.redis, 'flush-access-log', 'doomed');
    await flushAccessLog(h.db, doomed, h.keySpace, g.gameId, 10, { beforeCommit: () => { throw new Error('crash'); } }).catch(() => undefined);
    expect(await h.db.accessLog.count({ where: { gameId: g.gameId } })).to.equal(0);
    const restarted = new StreamConsumer(h.redis, 'flush-access-log', 'restarted', 0);
    await drain(() => flushAccessLog(h.db, restarted, h.keySpace, g.gameId));
    const rows = await h.db.accessLog.findMany({ where: { gameId: g.gameId }, orderBy: { doorKey: 'asc' } });
    expect(rows.map((r) => [r.doorKey, r.decision, r.externalServerId, r.policyId])).to.deep.equal([['d1', 'grant', 'srv-1', null], ['d2', 'deny', 'srv-1', null]]);
  });
});
