/**
 * User locations (src/store/lua/lib/user-location.ts; issue #32 item 4): where each user on a roster is,
 * read to route a user-target command (spec: Command lifecycle) and to kick on a ban, in listpack-sized
 * shards whose count follows the game's population, not its churn; and the rolling upgrade from the one
 * hash per game of the layout before 2026-11-29 (`LEGACY_LAYOUT_WRITES`, docs/running.md "Upgrading"):
 * a harness with the flag writes exactly what an old process writes. A location names its server by the
 * server's ordinal (`\n<n>`); builds before 2026-11-30 wrote the externalServerId, which is still read.
 */
import { expect } from 'chai';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { HeartbeatService } from '../../src/presence/heartbeat-service.js';
import { issueCommand } from '../../src/commands/command-service.js';
import { scanKeys } from '../support/redis-keys.js';
import { sweepGame } from '../../src/presence/liveness-sweep.js';

describe('user locations in shards', () => {
  const h = new Harness();
  const old = new Harness({ LEGACY_LAYOUT_WRITES: 'true' });
  after(async () => {
    await h.close();
    await old.close();
  });

  async function hb(via: Harness, g: TestGame, sid: string, players: string[]): Promise<void> {
    const res = await via.heartbeat(g, heartbeatBody(players, { externalServerId: sid }));
    expect(res.status).to.equal(200);
  }

  /** The shards' state: [level, split pointer, users counted]. */
  async function state(g: TestGame): Promise<number[]> {
    const raw = await h.redis.hget(h.keySpace.game(g.gameId).userLocations(), '');
    return (raw ?? '').split(' ').map(Number);
  }

  /** Every shard key of the game's user locations, the head included (on every master of a Cluster). */
  async function shardKeys(g: TestGame): Promise<string[]> {
    const head = h.keySpace.game(g.gameId).userLocations();
    return [head, ...(await scanKeys(h.redis, `${head.replace(/[[\]*?\\]/g, '\\$&')}:*`))];
  }

  // half decimal ids (their own hash), half not (hashed by SHA-1)
  const population = (round: number, server: number, n: number) =>
    Array.from({ length: n }, (_, i) => (i % 2 ? `${round}${String(server * 1000 + i).padStart(8, '0')}` : `r${round}-s${server}-p${i}`));

  it('locates 2,000 users of 40 servers in listpack shards, counts those present, and needs no new shard after churn', async () => {
    const g = await h.game();
    const servers = 40;
    for (let s = 0; s < servers; s++) await hb(h, g, `srv-${s}`, population(1, s, 50));
    const [level, split, n] = await state(g);
    expect(n).to.equal(2000);
    const keys = await shardKeys(g);
    expect(keys.length).to.equal(2 ** level! + split!);
    expect(keys.length).to.be.greaterThan(2000 / 128);
    let fields = 0;
    for (const key of keys) {
      expect(await h.redis.object('ENCODING', key)).to.equal('listpack', key);
      fields += await h.redis.hlen(key);
    }
    expect(fields).to.equal(2000 + 1); // the head's state field
    for (const s of [0, 17, 39]) for (const u of population(1, s, 50)) expect(await h.locate(g.gameId, u)).to.equal(`srv-${s}`);

    // everyone leaves, a new population of the same size arrives: the count follows, the shards stay
    for (let s = 0; s < servers; s++) await hb(h, g, `srv-${s}`, []);
    expect(await state(g)).to.deep.equal([level, split, 0]);
    expect(await h.locate(g.gameId, population(1, 3, 50)[7]!)).to.equal('');
    for (let s = 0; s < servers; s++) await hb(h, g, `srv-${s}`, population(2, s, 50));
    expect(await state(g)).to.deep.equal([level, split, 2000]);
    for (const u of population(2, 21, 50)) expect(await h.locate(g.gameId, u)).to.equal('srv-21');
  });

  it('a user on two servers is located at the one that listed them last, and released only by that one', async () => {
    const g = await h.game();
    await hb(h, g, 'srv-a', ['1001', 'x']);
    await hb(h, g, 'srv-b', ['1001']); // moved: listed by srv-b before srv-a reports the leave
    expect(await h.locate(g.gameId, '1001')).to.equal('srv-b');
    await hb(h, g, 'srv-a', ['x']);
    expect(await h.locate(g.gameId, '1001')).to.equal('srv-b');
    expect((await state(g))[2]).to.equal(2);
    await hb(h, g, 'srv-b', []);
    expect(await h.locate(g.gameId, '1001')).to.equal('');
    expect((await state(g))[2]).to.equal(1);
  });

  it('an unchanged roster is not re-located until five minutes after the last time; then a lost location heals and the user\'s waiting command is delivered', async () => {
    const g = await h.game();
    const keyId = (await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } })).id;
    const service = new HeartbeatService(h.redis, h.keySpace);
    let seq = 0;
    const beat = (nowMs: number) =>
      service.record({ gameId: g.gameId, keyId, signature: `heal-${++seq}`, heartbeatIntervalSeconds: 15, deliverCommands: true, body: heartbeatBody(['4242', 'ann'], { externalServerId: 'srv-h' }), nowMs });
    const t0 = Date.now();
    await beat(t0);
    expect(await h.locate(g.gameId, '4242')).to.equal('srv-h');
    // the location is lost (as in a Redis failover that dropped the write), the roster stays the same
    const head = h.keySpace.game(g.gameId).userLocations();
    await h.redis.hdel(head, '4242');
    await beat(t0 + 15_000);
    expect(await h.locate(g.gameId, '4242')).to.equal('');
    // a command for the user, who is located nowhere now, waits in the user's queue
    const c = await issueCommand({ db: h.db, redis: h.redis, keySpace: h.keySpace }, { issuedBy: 'test:moderator', gameId: g.gameId, type: 'kick', target: { externalId: '4242' }, payload: { reason: 'x' }, expiresInSeconds: 3600 });
    expect(c.routedTo).to.equal(null);
    const healed = await beat(t0 + 300_000);
    expect(await h.locate(g.gameId, '4242')).to.equal('srv-h');
    expect(healed.commands.map((e) => (JSON.parse(e) as { id: string }).id)).to.deep.equal([c.id]);
    expect(await h.locate(g.gameId, 'ann')).to.equal('srv-h');
  });

  /** The raw location value of `user` (read from the shard the head's state puts them in: one shard here). */
  async function rawLocation(g: TestGame, user: string): Promise<string | null> {
    for (const key of await shardKeys(g)) {
      const v = await h.redis.hget(key, user);
      if (v !== null) return v;
    }
    return null;
  }

  /** The server ordinal of `sid` (its hash's field `o`) and what the ordinals' hash maps it to. */
  async function ordinal(g: TestGame, sid: string): Promise<{ n: string | null; mapped: string | null }> {
    const keys = h.keySpace.game(g.gameId);
    const n = await h.redis.hget(keys.server(sid), 'o');
    return { n, mapped: n === null ? null : await h.redis.hget(keys.serverOrdinals(Math.floor(Number(n) / 100)), n) };
  }

  it('names a server by its ordinal: a few bytes per user, the previous server too, and none once the server is swept', async () => {
    const g = await h.game();
    await hb(h, g, 'server-with-a-long-platform-guid-a', ['m1', 'm2']);
    await hb(h, g, 'server-with-a-long-platform-guid-b', ['m2']); // m2 moves: claimed from a, which still lists them
    const a = await ordinal(g, 'server-with-a-long-platform-guid-a');
    const b = await ordinal(g, 'server-with-a-long-platform-guid-b');
    expect(a.mapped).to.equal('server-with-a-long-platform-guid-a');
    expect(b.mapped).to.equal('server-with-a-long-platform-guid-b');
    expect(Number(b.n)).to.equal(Number(a.n) + 1);
    expect(await rawLocation(g, 'm1')).to.equal(`\n${a.n}`);
    expect(await rawLocation(g, 'm2')).to.equal(`\n${b.n}\n${a.n}`);
    expect(await h.locate(g.gameId, 'm2')).to.equal('server-with-a-long-platform-guid-b');
    // b lets m2 go: back to a, whose roster still holds them
    await hb(h, g, 'server-with-a-long-platform-guid-b', []);
    expect(await rawLocation(g, 'm2')).to.equal(`\n${a.n}`);
    expect(await h.locate(g.gameId, 'm2')).to.equal('server-with-a-long-platform-guid-a');

    // a goes silent and is swept: its users are released and its ordinal is forgotten
    await h.redis.hset(h.keySpace.game(g.gameId).userLocations(), 'stale-user', `\n${a.n}`); // a location that escaped the release
    // a value of neither form (never written) names no server
    await h.redis.hset(h.keySpace.game(g.gameId).userLocations(), 'odd-user', '\nnot-an-ordinal');
    expect(await h.locate(g.gameId, 'odd-user')).to.equal('');
    expect(await h.locate(g.gameId, 'stale-user')).to.equal('server-with-a-long-platform-guid-a');
    await sweepGame(h.redis, h.db, h.keySpace, g.gameId, h.config.goneAfterMissedIntervals, Date.now() + 3_600_000);
    expect(await h.redis.hget(h.keySpace.game(g.gameId).serverOrdinals(Math.floor(Number(a.n) / 100)), a.n!)).to.equal(null);
    expect(await h.locate(g.gameId, 'm1')).to.equal('');
    expect(await h.locate(g.gameId, 'stale-user')).to.equal('');
    // back after the sweep: a new ordinal, never the old one
    await hb(h, g, 'server-with-a-long-platform-guid-a', ['m1']);
    expect(Number((await ordinal(g, 'server-with-a-long-platform-guid-a')).n)).to.be.greaterThan(Number(b.n));
    expect(await h.locate(g.gameId, 'm1')).to.equal('server-with-a-long-platform-guid-a');
  });

  it('upgrade from the externalServerIds of builds before 2026-11-30: read, released, and rewritten as ordinals by the five-minute re-locate', async () => {
    const g = await h.game();
    const keyId = (await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } })).id;
    const service = new HeartbeatService(h.redis, h.keySpace);
    let seq = 0;
    const beat = (players: string[], nowMs: number) =>
      service.record({ gameId: g.gameId, keyId, signature: `ord-${++seq}`, heartbeatIntervalSeconds: 15, deliverCommands: true, body: heartbeatBody(players, { externalServerId: 'srv-o' }), nowMs });
    const t0 = Date.now();
    await beat(['o1', 'o2', 'o3'], t0);
    const head = h.keySpace.game(g.gameId).userLocations();
    // what a build before 2026-11-30 wrote: the externalServerId itself, with a previous server for o3
    await hb(h, g, 'srv-p', ['o3']);
    await h.redis.hset(head, 'o1', 'srv-o', 'o2', 'srv-o', 'o3', 'srv-o\nsrv-p');
    expect(await h.locate(g.gameId, 'o1')).to.equal('srv-o');
    // o3 leaves srv-o: released to srv-p, which still lists them, in the ordinal form
    await beat(['o1', 'o2'], t0 + 15_000);
    expect(await rawLocation(g, 'o3')).to.equal(`\n${(await ordinal(g, 'srv-p')).n}`);
    expect(await rawLocation(g, 'o1')).to.equal('srv-o');
    // the five-minute re-locate rewrites the rest
    await beat(['o1', 'o2'], t0 + 300_000);
    const n = (await ordinal(g, 'srv-o')).n;
    expect(await rawLocation(g, 'o1')).to.equal(`\n${n}`);
    expect(await rawLocation(g, 'o2')).to.equal(`\n${n}`);
    expect(await h.locate(g.gameId, 'o2')).to.equal('srv-o');
    expect((await state(g))[2]).to.equal(3);
  });

  it('upgrade: old processes write the one hash; the new layout reads it and moves each user it writes or releases out of it', async () => {
    const g = await h.game();
    const keys = h.keySpace.game(g.gameId);
    await hb(old, g, 'srv-1', ['a', 'b', 'c']);
    expect(await h.redis.hgetall(keys.where())).to.deep.equal({ a: 'srv-1', b: 'srv-1', c: 'srv-1' });
    // and the roster's open times in decimal ms, which old processes read (src/store/lua/lib/roster-open-time.lua)
    expect((await h.redis.hget(keys.roster('srv-1'), 'a'))!.split('\n')[0]).to.match(/^\d{13}$/);
    expect(await h.redis.exists(keys.userLocations())).to.equal(0);
    // what an old process wrote, a new one finds
    expect(await h.locate(g.gameId, 'b')).to.equal('srv-1');

    // a new process: 'a' moves to srv-2 (into the shards, out of the hash), which the old ones still see
    // as located at srv-1 until their own next heartbeat of srv-1 (as two old processes would disagree)
    await hb(h, g, 'srv-2', ['a']);
    expect(await h.redis.hget(keys.where(), 'a')).to.equal(null);
    expect(await h.locate(g.gameId, 'a')).to.equal('srv-2');
    expect(await old.locate(g.gameId, 'b')).to.equal('srv-1');

    // srv-1's next heartbeat through a new process: 'b' and 'c' move into the shards, the hash is gone
    await hb(h, g, 'srv-1', ['b', 'c']);
    expect(await h.redis.exists(keys.where())).to.equal(0);
    expect(await h.locate(g.gameId, 'c')).to.equal('srv-1');
    expect((await state(g))[2]).to.equal(3);

    // step 2, while processes of step 1 still run: they find users in the shards, and what they write
    // goes to the old hash and leaves the shards, so the two layouts never disagree about a user ('d'
    // joins: a changed roster re-locates the whole roster while the old layout is written)
    expect(await old.locate(g.gameId, 'a')).to.equal('srv-2');
    await hb(old, g, 'srv-1', ['b', 'c', 'd']);
    expect(await h.redis.hgetall(keys.where())).to.deep.equal({ b: 'srv-1', c: 'srv-1', d: 'srv-1' });
    expect((await state(g))[2]).to.equal(1);
    await hb(old, g, 'srv-1', ['b', 'a']); // 'a' moves back to srv-1, 'c' and 'd' leave
    expect(await h.redis.hgetall(keys.where())).to.deep.equal({ a: 'srv-1', b: 'srv-1' });
    expect((await state(g))[2]).to.equal(0);
    expect(await h.locate(g.gameId, 'a')).to.equal('srv-1');
    expect(await h.locate(g.gameId, 'c')).to.equal('');
    await hb(h, g, 'srv-2', []); // srv-2 no longer lists 'a': its release must not touch srv-1's claim
    expect(await h.locate(g.gameId, 'a')).to.equal('srv-1');
  });

  it('a release finds a user still in the old hash and removes them there', async () => {
    const g = await h.game();
    const keys = h.keySpace.game(g.gameId);
    await hb(old, g, 'srv-1', ['p', 'q']);
    await hb(h, g, 'srv-1', ['q']); // p left: released from the hash; q moved into the shards
    expect(await h.redis.hgetall(keys.where())).to.deep.equal({});
    expect(await h.locate(g.gameId, 'p')).to.equal('');
    expect(await h.locate(g.gameId, 'q')).to.equal('srv-1');
  });
});
