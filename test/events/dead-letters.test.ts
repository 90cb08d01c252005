/**
 * Issue #16, dead letters: a row Postgres refuses is set aside with its reason and never blocks the rows
 * around it (README "Failure behaviour" › "Dead letters"). The refusal is forced for real: a CHECK
 * constraint added to the test database by the test (NOT VALID, so existing rows are not checked) and
 * dropped afterwards, refusing one marked value while every other row goes in. No mocks: the real API,
 * flushers, Redis and Postgres.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { runAdmin, okJson } from '../admin/harness.js';
import { StreamConsumer } from '../../src/store/streams.js';
import { flushEvents } from '../../src/events/event-flusher.js';
import { flushSessions } from '../../src/presence/session-flusher.js';
import { flushAccessLog } from '../../src/doors/access-log-flusher.js';
import { flushCommandLog } from '../../src/commands/command-log-flusher.js';
import { DeadLetters, type DeadLetterSummary } from '../../src/store/dead-letters.js';
import { DEAD_LETTER_MAXLEN, DEAD_LETTER_ROW_MAX_CHARS } from '../../src/store/keys.js';
import { createDb } from '../../src/store/prisma.js';
import { isDependencyUnavailable } from '../../src/store/dependency-errors.js';
import { beat, deleteCommands, issue, recorded } from '../commands/command-fixtures.js';

describe('dead letters (issue #16)', function () {
  this.timeout(60_000);
  const h = new Harness();
  const marker = `poison-${randomBytes(4).toString('hex')}`;
  const constraints: [table: string, name: string][] = [];
  let g: TestGame;
  let dead: DeadLetters;

  /** Adds a CHECK constraint refusing `marker` in `column` of `table`; dropped in after(). */
  async function refuse(table: string, column: string): Promise<void> {
    const name = `test_refuse_${column}_${marker.slice(7)}`.toLowerCase();
    await h.db.$executeRawUnsafe(`ALTER TABLE "${table}" ADD CONSTRAINT ${name} CHECK ("${column}" IS DISTINCT FROM '${marker}') NOT VALID`);
    constraints.push([table, name]);
  }

  const keys = () => h.keySpace.game(g.gameId);
  const summary = (): Promise<DeadLetterSummary> => dead.summary(g.gameId, 10, 100_000);

  before(async () => {
    g = await h.game();
    dead = new DeadLetters(h.redis, h.keySpace);
  });
  after(async () => {
    for (const [table, name] of constraints) await h.db.$executeRawUnsafe(`ALTER TABLE "${table}" DROP CONSTRAINT IF EXISTS ${name}`);
    await deleteCommands(h, [g]);
    await h.close();
  });

  it('a refused event is dead-lettered while the other servers\' 200-answered events of the same batch are stored exactly once', async () => {
    await refuse('PlayerEvent', 'type');
    const a = [event('join'), event(marker), event('leave')];
    const b = [event('spawn'), event('custom_b')];
    const c = [event('death')];
    for (const [server, events] of [['srv-a', a], ['srv-b', b], ['srv-c', c]] as const) {
      expect((await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: server, events }))).status).to.equal(200);
    }
    const consumer = new StreamConsumer(h.redis, 'flush-events', 'test');
    // One run takes the three heartbeats as one batch (one INSERT statement until the refusal).
    const run = await flushEvents(h.db, consumer, h.keySpace, g.gameId);
    expect(run.entries).to.equal(3);

    const good = [a[0]!, a[2]!, ...b, ...c].map((e) => e.eventId);
    const stored = await h.db.playerEvent.groupBy({ by: ['eventId'], where: { gameId: g.gameId }, _count: { _all: true } });
    expect(Object.fromEntries(stored.map((r) => [r.eventId, r._count._all]))).to.deep.equal(Object.fromEntries(good.map((id) => [id, 1])));
    expect(await h.redis.xlen(keys().eventStream())).to.equal(0); // acknowledged and deleted: nothing stuck

    const letters = await summary();
    expect(letters.bySource).to.deep.equal({ events: 1, sessions: 0, command_log: 0, access_log: 0 });
    expect(letters.latest[0]).to.include({ source: 'events', cut: false });
    expect(letters.latest[0]!.reason).to.match(/^23514: .*test_refuse_type/);
    expect(JSON.parse(letters.latest[0]!.row)).to.include({ e: a[1]!.eventId, t: marker, s: 'srv-a' });

    // The clients retry nothing (they got 200); a later heartbeat re-sending the same events changes nothing.
    expect((await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'srv-a', events: a }))).status).to.equal(200);
    await flushEvents(h.db, consumer, h.keySpace, g.gameId);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.equal(good.length);
    expect((await summary()).bySource.events).to.equal(2); // the poison again, set aside again
  });

  it('an entry written before validation tightened (year 0000) is dead-lettered by the flusher itself, its neighbours stored', async () => {
    const ok = event('fine');
    const bad = { ...event('old'), occurredAt: '0000-01-01T00:00:00Z' };
    const now = Date.now();
    // The heartbeat script's entry format (src/store/lua/heartbeat.lua): s server, r received ms, e events JSON.
    await h.redis.xadd(keys().eventStream(), '*', 's', 'srv-old', 'r', String(now), 'e', JSON.stringify([bad, ok]));
    await flushEvents(h.db, new StreamConsumer(h.redis, 'flush-events', 'test'), h.keySpace, g.gameId);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, eventId: { in: [ok.eventId, bad.eventId] } } })).to.equal(1);
    const [latest] = (await summary()).latest;
    expect(latest!.reason).to.match(/occurredAt "0000-01-01T00:00:00Z" is not a storable RFC 3339 date-time/);
    expect(await h.redis.xlen(keys().eventStream())).to.equal(0);
  });

  it('a Postgres outage is not a refusal: nothing is dead-lettered and the entries stay pending for the next run', async () => {
    const before = (await summary()).total;
    const e = event('during-outage');
    expect((await h.heartbeat(g, heartbeatBody([], { externalServerId: 'srv-outage', events: [e] }))).status).to.equal(200);
    const down = createDb('postgresql://postgres@127.0.0.1:1/unreachable', 1); // nothing listens on port 1
    try {
      const err = await flushEvents(down, new StreamConsumer(h.redis, 'flush-events', 'test'), h.keySpace, g.gameId).catch((x: unknown) => x);
      expect(isDependencyUnavailable(err), String(err)).to.equal(true);
    } finally {
      await down.$disconnect();
    }
    expect((await summary()).total).to.equal(before);
    expect(await h.redis.xlen(keys().eventStream())).to.equal(1);
    // The same consumer name claims its own pending entry at once (another would wait for XAUTOCLAIM's idle time).
    await flushEvents(h.db, new StreamConsumer(h.redis, 'flush-events', 'test', 0), h.keySpace, g.gameId);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, eventId: e.eventId } })).to.equal(1);
    expect(await h.redis.xlen(keys().eventStream())).to.equal(0);
  });

  it('sessions: a refused session open is set aside, the other players\' sessions open and close', async () => {
    await refuse('Session', 'externalId');
    expect((await h.heartbeat(g, heartbeatBody(['u1', marker, 'u2'], { externalServerId: 'srv-sessions' }))).status).to.equal(200);
    expect((await h.heartbeat(g, heartbeatBody(['u2'], { externalServerId: 'srv-sessions' }))).status).to.equal(200);
    const before = (await summary()).bySource.sessions;
    while ((await flushSessions(h.db, new StreamConsumer(h.redis, 'flush-sessions', 'test'), h.keySpace, g.gameId)).entries) { /* drain */ }
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId, externalServerId: 'srv-sessions' }, orderBy: { externalId: 'asc' } });
    // u1 left at the second heartbeat, u2 is still there; the refused player's open is set aside, and so is
    // its close (a close stores a session it does not find, and Postgres refuses that row too).
    expect(sessions.map((s) => [s.externalId, s.closedAt !== null])).to.deep.equal([['u1', true], ['u2', false]]);
    const after = await summary();
    expect(after.bySource.sessions - before).to.equal(2);
    expect(after.latest[0]).to.include({ source: 'sessions' });
    expect(after.latest[0]!.reason).to.match(/test_refuse_externalid/);
    expect(await h.redis.xlen(keys().sessionStream())).to.equal(0);
  });

  it('command log: a refused failure report is set aside, the ack beside it is recorded', async () => {
    await refuse('CommandTransition', 'reason');
    await beat(h, g, 'srv-cmd');
    const failing = await issue(h, g, { type: 'message', target: { externalServerId: 'srv-cmd' }, payload: { text: 'one' } });
    const acked = await issue(h, g, { type: 'message', target: { externalServerId: 'srv-cmd' }, payload: { text: 'two' } });
    expect((await beat(h, g, 'srv-cmd')).map((c) => c.id).sort()).to.deep.equal([failing.id, acked.id].sort());
    await beat(h, g, 'srv-cmd', [], { acks: [acked.id], failures: [{ id: failing.id, reason: marker }] });
    const before = (await summary()).bySource.command_log;
    while ((await flushCommandLog(h.db, new StreamConsumer(h.redis, 'flush-command-log', 'test'), h.keySpace, g.gameId)).entries) { /* drain */ }
    expect((await recorded(h, acked.id)).status).to.equal('acked');
    expect((await recorded(h, failing.id)).transitions.map((t) => t.toStatus)).to.deep.equal(['pending', 'dispatched']);
    const after = await summary();
    expect(after.bySource.command_log - before).to.equal(1);
    expect(after.latest[0]!.reason).to.match(/^23514: .*test_refuse_reason/);
  });

  it('access log: a refused decision row is set aside, the others are stored; an unreadable entry too', async () => {
    await refuse('AccessLog', 'doorKey');
    const at = String(Date.now());
    const decisions = (...doorKeys: string[]) => JSON.stringify(doorKeys.map((doorKey) => ({ doorKey, decision: 'allow', reason: 'default_allow', policyId: null })));
    await h.redis.xadd(keys().accessStream(), '*', 'u', 'p1', 's', 'srv', 'at', at, 'v', decisions('front', marker, 'back'));
    await h.redis.xadd(keys().accessStream(), '*', 'u', 'p1', 's', 'srv', 'at', at, 'v', '{not json');
    const before = (await summary()).bySource.access_log;
    await flushAccessLog(h.db, new StreamConsumer(h.redis, 'flush-access-log', 'test'), h.keySpace, g.gameId);
    expect((await h.db.accessLog.findMany({ where: { gameId: g.gameId }, orderBy: { doorKey: 'asc' } })).map((r) => r.doorKey)).to.deep.equal(['back', 'front']);
    expect((await summary()).bySource.access_log - before).to.equal(2);
    expect(await h.redis.xlen(keys().accessStream())).to.equal(0);
  });

  it('are bounded: the stream keeps about DEAD_LETTER_MAXLEN entries and cuts long rows; the counts keep everything', async () => {
    const other = await h.game();
    const many = Array.from({ length: DEAD_LETTER_MAXLEN + 300 }, (_, i) => ({ entryId: `0-${i + 1}`, reason: 'test', row: { i } }));
    for (let i = 0; i < many.length; i += 200) await dead.add(other.gameId, 'events', many.slice(i, i + 200));
    await dead.add(other.gameId, 'sessions', [{ entryId: '0-0', reason: 'long', row: 'x'.repeat(100_000) }]);
    const s = await dead.summary(other.gameId, 1, 1_000_000);
    expect(s.bySource).to.include({ events: many.length, sessions: 1 });
    expect(s.total).to.equal(many.length + 1);
    expect(s.kept).to.be.at.least(DEAD_LETTER_MAXLEN).and.below(many.length);
    expect(s.latest[0]).to.include({ source: 'sessions', cut: true });
    expect(s.latest[0]!.row).to.have.length(DEAD_LETTER_ROW_MAX_CHARS);
    expect((await dead.totals()).events).to.be.at.least(many.length);
  });

  it('shows in `admin health --game G` (text and --json)', async () => {
    const json = okJson<{ deadLetters: DeadLetterSummary }>(await runAdmin(['health', '--game', g.gameId, '--json'], h.config.redisPrefix));
    expect(json.deadLetters.bySource.events).to.be.at.least(3);
    expect(json.deadLetters.latest.length).to.be.greaterThan(0);
    expect(json.deadLetters.latest[0]!.reason).to.be.a('string').and.not.equal('');
    const text = await runAdmin(['health', '--game', g.gameId], h.config.redisPrefix);
    expect(text.code).to.equal(0);
    expect(text.stdout).to.match(/\d+ row\(s\) refused by Postgres and set aside/).and.include('23514');
  });
});
