/**
 * Spec: What the service does item 2 (sessions from the roster; an orphaned session closes at the last
 * heartbeat in which it appeared), Heartbeat (full roster, lost heartbeats self-correct), States.
 */
import { expect } from 'chai';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import type { HeartbeatRequest } from '../../src/schemas/heartbeat.js';
import { sweepGame } from '../../src/presence/liveness-sweep.js';
import { getRoster } from '../../src/presence/server-view.js';
import { MAX_ROSTER } from '../../src/schemas/heartbeat.js';

async function hbAt(h: Harness, g: TestGame, players: string[], sid = 'srv-a') {
  const res = await h.heartbeat(g, heartbeatBody(players, { externalServerId: sid }));
  expect(res.status).to.equal(200);
  return Date.parse(res.body.serverTime);
}

describe('roster reconciliation and sessions', () => {
  const h = new Harness();
  after(() => h.close());

  it('registers the server on its first heartbeat and refreshes it later', async () => {
    const g = await h.game();
    const keys = h.keySpace.game(g.gameId);
    const t1 = await hbAt(h, g, ['a']);
    expect(await h.redis.hget(keys.server('srv-a'), 'first')).to.equal(String(t1));
    await new Promise((r) => setTimeout(r, 5));
    const t2 = await hbAt(h, g, ['a']);
    expect(await h.redis.hget(keys.server('srv-a'), 'first')).to.equal(String(t1));
    expect(Number(await h.redis.zscore(keys.servers(), 'srv-a'))).to.equal(t2);
    await h.flush(g.gameId);
    const row = await h.db.gameServer.findUniqueOrThrow({ where: { gameId_externalServerId: { gameId: g.gameId, externalServerId: 'srv-a' } } });
    expect(row).to.include({ externalScopeId: 'place-1', region: 'eu-west', sdkVersion: '1.0.0', maxPlayers: 50, goneAt: null });
    expect(row.firstSeenAt.getTime()).to.equal(t1);
  });

  it('opens a session at first appearance and closes it at the last heartbeat the user appeared in', async () => {
    const g = await h.game();
    const t1 = await hbAt(h, g, ['a', 'b']);
    const t2 = await hbAt(h, g, ['a', 'b']);
    const t3 = await hbAt(h, g, ['a', 'c']); // b left: closes at t2, not t3; c opens at t3
    await h.flush(g.gameId);
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { externalId: 'asc' } });
    expect(sessions.map((s) => [s.externalId, s.openedAt.getTime(), s.closedAt?.getTime() ?? null, s.closeReason])).to.deep.equal([
      ['a', t1, null, null],
      ['b', t1, t2, 'left'],
      ['c', t3, null, null],
    ]);
    expect(sessions[0]).to.include({ username: 'user_a', externalServerId: 'srv-a', externalScopeId: 'place-1' });
  });

  it('a heartbeat that waited past a later one (earlier uptime and signed time) does not roll the roster back; its events are stored (issue #32 item 3)', async () => {
    const g = await h.game();
    const sid = 'srv-late';
    const now = Math.floor(Date.now() / 1000);
    const send = async (players: string[], uptimeSeconds: number, timestamp: number, events: HeartbeatRequest['events'] = []) => {
      const res = await h.heartbeat(g, heartbeatBody(players, { externalServerId: sid, uptimeSeconds, events }), { timestamp });
      expect(res.status).to.equal(200);
    };
    await send(['a', 'b'], 100, now - 20);
    await send(['a', 'c'], 120, now); // b left, c joined
    // the heartbeat sent between them arrives last (it sat in the accept queue past its client's timeout)
    const late = { eventId: 'ev-late-1', type: 'spawn', externalId: 'a', occurredAt: new Date((now - 10) * 1000).toISOString() };
    await send(['a', 'b'], 110, now - 10, [late]);
    const keys = h.keySpace.game(g.gameId);
    expect((await h.redis.hkeys(keys.roster(sid))).sort()).to.deep.equal(['a', 'c']);
    expect(await h.redis.hget(keys.server(sid), 'up')).to.equal('120');
    await h.flush(g.gameId);
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { externalId: 'asc' } });
    expect(sessions.map((x) => [x.externalId, x.closedAt === null])).to.deep.equal([['a', true], ['b', false], ['c', true]]);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, eventId: 'ev-late-1' } })).to.equal(1);

    // the same instance id restarted (uptime from 0, signed later): applied
    await send(['d'], 5, now + 1);
    expect(await h.redis.hkeys(keys.roster(sid))).to.deep.equal(['d']);
    // a corrected clock signs earlier while the uptime grows: applied
    await send(['d', 'e'], 20, now - 30);
    expect((await h.redis.hkeys(keys.roster(sid))).sort()).to.deep.equal(['d', 'e']);
  });

  it('self-corrects after a lost heartbeat (presence by state, not delta)', async () => {
    const g = await h.game();
    await hbAt(h, g, ['a']);
    // the heartbeat that said "b joined" is lost; the next one already has b and not a
    const t2 = await hbAt(h, g, ['b']);
    await h.flush(g.gameId);
    const byUser = Object.fromEntries((await h.db.session.findMany({ where: { gameId: g.gameId } })).map((s) => [s.externalId, s]));
    expect(byUser.a!.closedAt).to.not.equal(null);
    expect(byUser.b!.openedAt.getTime()).to.equal(t2);
    expect(byUser.b!.closedAt).to.equal(null);
  });

  it('keeps the user-location map in step for command routing, across servers', async () => {
    const g = await h.game();
    await hbAt(h, g, ['m'], 'srv-1');
    expect(await h.locate(g.gameId, 'm')).to.equal('srv-1');
    await hbAt(h, g, ['m'], 'srv-2'); // moved: appears on srv-2 before srv-1 reports the leave
    expect(await h.locate(g.gameId, 'm')).to.equal('srv-2');
    await hbAt(h, g, [], 'srv-1');
    expect(await h.locate(g.gameId, 'm')).to.equal('srv-2');
    await hbAt(h, g, [], 'srv-2');
    expect(await h.locate(g.gameId, 'm')).to.equal('');
    // a user another server claimed and released goes back to the server whose roster still holds them,
    // without a heartbeat of that server
    await hbAt(h, g, ['n'], 'srv-1');
    await hbAt(h, g, ['n'], 'srv-2');
    expect(await h.locate(g.gameId, 'n')).to.equal('srv-2');
    await hbAt(h, g, [], 'srv-2');
    expect(await h.locate(g.gameId, 'n')).to.equal('srv-1');
    await hbAt(h, g, [], 'srv-1');
    expect(await h.locate(g.gameId, 'n')).to.equal('');
  });

  it('stores a player without JSON where the name and team allow it, and reads every name and team back as sent', async () => {
    const g = await h.game();
    const keys = h.keySpace.game(g.gameId);
    const players = [
      { externalId: 'plain', username: 'alice' },
      { externalId: 'teamed', username: 'bob', team: 'red' },
      { externalId: 'bracket', username: '[clan] carol' },
      { externalId: 'brace', username: '{dave}' },
      { externalId: 'empty', username: '' },
      { externalId: 'newline', username: 'e\nve' },
      { externalId: 'teamed-newline', username: 'f\nay', team: 'blue' },
      { externalId: 'teamed-bracket', username: '[x] gus', team: '' },
      { externalId: 'bracket-team', username: 'hal', team: '[red]' },
      { externalId: 'newline-team', username: 'ivy', team: 're\nd' },
    ];
    expect((await h.heartbeat(g, heartbeatBody([], { externalServerId: 'srv-a', players }))).status).to.equal(200);
    const nowMs = Date.now();
    const byId = async () => new Map((await getRoster(h.redis, h.keySpace, g.gameId, 'srv-a', nowMs)).map((e) => [e.externalId, [e.username, e.team]]));
    expect(Object.fromEntries(await byId())).to.deep.equal({
      plain: ['alice', null], teamed: ['bob', 'red'], bracket: ['[clan] carol', null], brace: ['{dave}', null], empty: ['', null], newline: ['e\nve', null],
      'teamed-newline': ['f\nay', 'blue'], 'teamed-bracket': ['[x] gus', ''], 'bracket-team': ['hal', '[red]'], 'newline-team': ['ivy', 're\nd'],
    });
    const value = (uid: string) => h.redis.hget(keys.roster('srv-a'), uid);
    const opened = (await value('plain'))!.split('\n')[0];
    expect(await value('plain')).to.equal(`${opened}\nalice`);
    // a team on one line that starts with neither `[` nor `{` goes before the name, without JSON
    expect(await value('teamed')).to.equal(`${opened}\nred\nbob`);
    expect(await value('teamed-newline')).to.equal(`${opened}\nblue\nf\nay`);
    expect(await value('bracket-team')).to.equal(`${opened}\n["hal","[red]"]`);
    expect(await value('newline')).to.equal(`${opened}\n["e\\nve",null]`);
    // a name or team change rewrites the value, the session stays open (same open time)
    expect((await h.heartbeat(g, heartbeatBody([], { externalServerId: 'srv-a', players: [{ externalId: 'plain', username: 'alice', team: 'blue' }, { externalId: 'teamed', username: 'bobby' }] }))).status).to.equal(200);
    expect(Object.fromEntries(await byId())).to.deep.equal({ plain: ['alice', 'blue'], teamed: ['bobby', null] });
    expect(await value('plain')).to.equal(`${opened}\nblue\nalice`);
  });

  it('keeps a session\'s open time in base 36 (8 characters, not 13 digits); sessions open and close at the decimal ms, from either form', async () => {
    const g = await h.game();
    const keys = h.keySpace.game(g.gameId);
    const before = Date.now();
    expect((await h.heartbeat(g, heartbeatBody(['t1', 't2'], { externalServerId: 'srv-t' }))).status).to.equal(200);
    const opened = (await h.redis.hget(keys.roster('srv-t'), 't1'))!.split('\n')[0]!;
    expect(opened).to.match(/^[0-9a-z]{8}$/);
    const openedAtMs = parseInt(opened, 36);
    expect(openedAtMs).to.be.within(before - 5_000, Date.now() + 5_000);
    expect((await getRoster(h.redis, h.keySpace, g.gameId, 'srv-t', Date.now())).map((e) => e.openedAt.getTime())).to.deep.equal([openedAtMs, openedAtMs]);
    // t2's value as a build before 2026-11-30 wrote it: the decimal ms
    await h.redis.hset(keys.roster('srv-t'), 't2', `${openedAtMs}\nplayert2`);
    expect((await h.heartbeat(g, heartbeatBody(['t3'], { externalServerId: 'srv-t' }))).status).to.equal(200);
    await h.flush(g.gameId);
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { externalId: 'asc' } });
    expect(sessions.map((s) => [s.externalId, s.openedAt.getTime(), s.closedAt !== null])).to.deep.equal([
      ['t1', openedAtMs, true],
      ['t2', openedAtMs, true],
      ['t3', sessions[2]!.openedAt.getTime(), false],
    ]);
  });

  it('ignores a duplicated externalId inside one roster', async () => {
    const g = await h.game();
    await h.heartbeat(g, heartbeatBody([], { players: [{ externalId: 'd', username: 'one' }, { externalId: 'd', username: 'two' }] }));
    await h.flush(g.gameId);
    expect(await h.db.session.count({ where: { gameId: g.gameId } })).to.equal(1);
  });

  it(`reconciles a full roster of ${MAX_ROSTER} players; a user another server claims goes back when it releases them`, async () => {
    const g = await h.game();
    const keys = h.keySpace.game(g.gameId);
    const players = Array.from({ length: MAX_ROSTER }, (_, i) => `full-${i}`);
    await hbAt(h, g, players);
    expect(await h.redis.hlen(keys.roster('srv-a'))).to.equal(MAX_ROSTER);
    for (const p of players) expect(await h.locate(g.gameId, p)).to.equal('srv-a');
    // Another server claims one user; the unchanged roster (not decoded again) leaves the claim alone, and
    // gets the user back when the other server releases them.
    await hbAt(h, g, ['full-7'], 'srv-b');
    expect(await h.locate(g.gameId, 'full-7')).to.equal('srv-b');
    await hbAt(h, g, players);
    expect(await h.locate(g.gameId, 'full-7')).to.equal('srv-b');
    await hbAt(h, g, [], 'srv-b');
    expect(await h.locate(g.gameId, 'full-7')).to.equal('srv-a');
    await h.flush(g.gameId);
    expect(await h.db.session.count({ where: { gameId: g.gameId, externalServerId: 'srv-a' } })).to.equal(MAX_ROSTER);
  });

  it('declares a silent server gone after the documented missed intervals and closes its sessions at its last heartbeat', async () => {
    const g = await h.game(undefined, 20);
    const keys = h.keySpace.game(g.gameId);
    await hbAt(h, g, ['x', 'y'], 'crashy');
    const last = await hbAt(h, g, ['x', 'y'], 'crashy');
    await hbAt(h, g, ['z'], 'healthy');
    const missed = h.config.goneAfterMissedIntervals;
    // not yet: just under the threshold
    let r = await sweepGame(h.redis, h.db, h.keySpace, g.gameId, missed, last + missed * 20_000 - 1);
    expect(r.gone).to.deep.equal([]);
    // noticed much later than the threshold: closing time is still the last heartbeat
    r = await sweepGame(h.redis, h.db, h.keySpace, g.gameId, missed, last + 10 * 60_000);
    expect(r.gone.sort()).to.deep.equal(['crashy', 'healthy']);
    await h.flush(g.gameId);
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId, externalServerId: 'crashy' } });
    expect(sessions).to.have.length(2);
    for (const s of sessions) {
      expect(s.closedAt!.getTime()).to.equal(last);
      expect(s.closeReason).to.equal('server_gone');
    }
    const server = await h.db.gameServer.findFirstOrThrow({ where: { gameId: g.gameId, externalServerId: 'crashy' } });
    expect(server.goneAt!.getTime()).to.equal(last);
    expect(await h.redis.exists(keys.server('crashy'), keys.roster('crashy'))).to.equal(0);
    expect(await h.locate(g.gameId, 'x')).to.equal('');
    // a second sweep changes nothing
    r = await sweepGame(h.redis, h.db, h.keySpace, g.gameId, missed, last + 20 * 60_000);
    expect(r.gone).to.deep.equal([]);
  });

  it('lets a server that comes back register again with fresh sessions', async () => {
    const g = await h.game();
    const t1 = await hbAt(h, g, ['x'], 'phoenix');
    await sweepGame(h.redis, h.db, h.keySpace, g.gameId, 3, t1 + 3_600_000);
    const t2 = await hbAt(h, g, ['x'], 'phoenix');
    await h.flush(g.gameId);
    const sessions = await h.db.session.findMany({ where: { gameId: g.gameId }, orderBy: { openedAt: 'asc' } });
    expect(sessions.map((s) => [s.openedAt.getTime(), s.closedAt?.getTime() ?? null])).to.deep.equal([[t1, t1], [t2, null]]);
    const server = await h.db.gameServer.findFirstOrThrow({ where: { gameId: g.gameId, externalServerId: 'phoenix' } });
    expect(server.goneAt).to.equal(null);
  });

  it('copies the last use of a key to Postgres during the sweep', async () => {
    const g = await h.game();
    const t = await hbAt(h, g, []);
    await sweepGame(h.redis, h.db, h.keySpace, g.gameId, 3, t + 1000);
    const key = await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } });
    expect(key.lastUsedAt!.getTime()).to.equal(t);
  });
});
