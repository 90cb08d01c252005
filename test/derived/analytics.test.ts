/**
 * Issue #4 analytics on a known fixture (src/derived/analytics.ts) and the per-minute concurrency sampler
 * fed by live rosters (src/derived/concurrency-sampler.ts). Spec: Event type values (custom types stored
 * and queryable as given).
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { gameAnalytics } from '../../src/derived/analytics.js';
import { sampleConcurrency } from '../../src/derived/concurrency-sampler.js';
import { ValidationError } from '../../src/errors.js';
import { forgetGames, heartbeatAt, insertSession, rejection } from './fixtures.js';

const at = (hhmmss: string) => new Date(`2026-04-01T${hhmmss}Z`);

describe('analytics', () => {
  const h = new Harness();
  const games: string[] = [];
  after(async () => {
    await forgetGames(h, games);
    await h.close();
  });

  it('reports concurrency, events per type per hour, session lengths and top custom types on a known fixture', async () => {
    const g = await h.game();
    games.push(g.gameId);
    const s = (externalId: string, openedAt: string, closedAt: string | null) => insertSession(h, g.gameId, { externalId, openedAt: at(openedAt).getTime(), closedAt: closedAt && at(closedAt).getTime() });
    await s('u1', '09:50:00', '10:02:30'); // opened before the period
    await s('u2', '10:00:00', '10:00:00'); // seen in one heartbeat only
    await s('u3', '10:01:10', '10:31:10');
    await s('u4', '10:05:00', null);
    await s('u5', '11:00:00', '13:30:00');
    await s('u6', '09:00:00', '09:30:00'); // outside
    await h.db.concurrencySample.create({ data: { gameId: g.gameId, minute: at('10:10:00'), players: 7, servers: 2 } });
    let n = 0;
    const events = (type: string, time: string, count: number) =>
      h.db.playerEvent.createMany({
        data: Array.from({ length: count }, () => ({ gameId: g.gameId, eventId: `e${++n}`, type, externalId: 'u1', occurredAt: at(time), externalServerId: 'srv-1', receivedAt: at(time) })),
      });
    await events('join', '10:15:00', 3);
    await events('leave', '10:20:00', 1);
    await events('Boss_Kill', '10:30:00', 2);
    await events('boss_kill', '10:45:00', 1);
    await events('death', '11:05:00', 2);
    await events('Join', '11:10:00', 1);
    await events('emote 🎉', '11:20:00', 3);
    await events('join', '12:00:00', 1); // at `to`: outside
    await events('spawn', '09:59:59', 1); // before `from`: outside

    const a = await gameAnalytics(h.db, g.gameId, at('10:00:00'), at('12:00:00'));
    const points = new Map(a.concurrency.points.map((p) => [p.minute.toISOString().slice(11, 16), p]));
    expect(a.concurrency.points).to.have.length(120);
    const players = (hhmm: string) => points.get(hhmm)!.players;
    expect(['10:00', '10:01', '10:02', '10:03', '10:05', '10:31', '10:32', '11:00', '11:59'].map(players)).to.deep.equal([2, 1, 2, 1, 2, 2, 1, 2, 2]);
    expect(points.get('10:10')).to.deep.include({ players: 7, servers: 2, source: 'sample' });
    expect(points.get('10:11')).to.deep.include({ players: 2, servers: null, source: 'sessions' });
    expect(a.concurrency.peakPlayers).to.equal(7);
    expect(a.concurrency.peakMinute?.toISOString()).to.equal('2026-04-01T10:10:00.000Z');

    expect(a.eventsPerHour.types).to.deep.equal(['join', 'leave', 'team_change', 'death', 'spawn', 'emote 🎉', 'Boss_Kill', 'Join', 'boss_kill']);
    expect(a.eventsPerHour.rows.map((r) => [r.hour.toISOString(), r.counts])).to.deep.equal([
      ['2026-04-01T10:00:00.000Z', [3, 1, 0, 0, 0, 0, 2, 0, 1]],
      ['2026-04-01T11:00:00.000Z', [0, 0, 0, 2, 0, 3, 0, 1, 0]],
    ]);
    expect(a.eventTotals.filter((t) => t.custom).map((t) => [t.type, t.count])).to.deep.equal([['emote 🎉', 3], ['Boss_Kill', 2], ['Join', 1], ['boss_kill', 1]]);
    expect(a.topCustomTypes).to.deep.equal([{ type: 'emote 🎉', count: 3 }, { type: 'Boss_Kill', count: 2 }, { type: 'Join', count: 1 }, { type: 'boss_kill', count: 1 }]);

    expect(a.sessionLengths).to.deep.include({ closed: 3, open: 1, meanSeconds: 3600, medianSeconds: 1800, p90Seconds: 9000 });
    expect(a.sessionLengths.buckets.filter((b) => b.count).map((b) => [b.label, b.count])).to.deep.equal([['<1m', 1], ['30-60m', 1], ['2-4h', 1]]);
    expect(a.sessionLengths.buckets.at(-1)).to.deep.equal({ label: '>=4h', minSeconds: 14400, maxSeconds: null, count: 0 });
  });

  it('refuses an empty, reversed or too long period', async () => {
    const g = await h.game();
    games.push(g.gameId);
    await rejection(gameAnalytics(h.db, g.gameId, at('10:00:00'), at('10:00:00')), ValidationError, /after/);
    await rejection(gameAnalytics(h.db, g.gameId, new Date('2026-01-01T00:00:00Z'), new Date('2026-03-01T00:00:00Z')), ValidationError, /31 days/);
  });

  it('samples concurrent players per minute from the live rosters', async () => {
    const g = await h.game();
    games.push(g.gameId);
    await heartbeatAt(h, g, ['a', 'b', 'c'], 'srv-a');
    await heartbeatAt(h, g, ['d', 'e'], 'srv-b');
    const nowMs = Date.now();
    const minute = new Date(Math.floor(nowMs / 60_000) * 60_000);
    expect(await sampleConcurrency(h.redis, h.db, h.keySpace, [g.gameId], nowMs)).to.deep.equal({ minute, games: 1 });
    expect(await h.db.concurrencySample.findUnique({ where: { gameId_minute: { gameId: g.gameId, minute } } })).to.include({ players: 5, servers: 2 });
    // sampled again within the same minute: the newer view replaces the row
    await heartbeatAt(h, g, ['d', 'e', 'f', 'g'], 'srv-b');
    await sampleConcurrency(h.redis, h.db, h.keySpace, [g.gameId], nowMs);
    expect(await h.db.concurrencySample.findUnique({ where: { gameId_minute: { gameId: g.gameId, minute } } })).to.include({ players: 7, servers: 2 });
    const empty = await h.game();
    games.push(empty.gameId);
    expect((await sampleConcurrency(h.redis, h.db, h.keySpace, [empty.gameId], nowMs)).games).to.equal(0);
    const a = await gameAnalytics(h.db, g.gameId, minute, new Date(minute.getTime() + 60_000));
    expect(a.concurrency.points).to.deep.equal([{ minute, players: 7, servers: 2, source: 'sample' }]);
  });
});
