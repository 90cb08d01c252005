import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { Db } from '../../src/store/prisma.js';
import { GameKeys } from '../../src/store/keys.js';
import { compareSdkVersions, getRoster, listLiveServers, newestSdkVersion, parseRosterValue } from '../../src/presence/server-view.js';
import { createTestDb, createTestRedis, createWorkspaceAndGame, deleteRedisPrefix, deleteWorkspaces, okJson, randomPrefix, runAdmin } from './harness.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';

interface SeedServer {
  sid: string;
  lastMs: number;
  firstMs: number;
  scope?: string;
  region?: string;
  pc: number;
  mp: number;
  sdk: string;
  up: number;
  iv: number;
  /** [externalId, openedAtMs, username, team] */
  roster?: [string, number, string, string | null][];
}

/** Writes a server the way heartbeat.lua does (hash fields as strings, zset score = last ms). */
async function seedServer(redis: Redis, keys: GameKeys, s: SeedServer): Promise<void> {
  await redis.hset(keys.server(s.sid), {
    last: String(s.lastMs),
    first: String(s.firstMs),
    scope: s.scope ?? '',
    region: s.region ?? '',
    pc: String(s.pc),
    mp: String(s.mp),
    sdk: s.sdk,
    up: String(s.up),
    iv: String(s.iv),
  });
  await redis.zadd(keys.servers(), s.lastMs, s.sid);
  for (const [uid, opened, username, team] of s.roster ?? []) {
    await redis.hset(keys.roster(s.sid), uid, `${opened}\n${JSON.stringify([username, team])}`);
  }
}

describe('server view (src/presence/server-view.ts)', function () {
  it('compareSdkVersions orders dot-separated parts numerically, falling back to strings', function () {
    const ordered = ['0.9', '1.2', '1.2.1', '1.9.2', '1.10.0-beta', '1.10.0', '1.10.1', '2.0.0', 'v3'];
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        expect(Math.sign(compareSdkVersions(ordered[i]!, ordered[j]!)), `${ordered[i]} vs ${ordered[j]}`).to.equal(Math.sign(i - j));
      }
    }
    expect(compareSdkVersions('1.02.0', '1.2.0')).to.equal(0);
    expect(compareSdkVersions('12345678901234567890.1', '12345678901234567891.0')).to.be.lessThan(0);
    expect(compareSdkVersions('abc', 'abd')).to.be.lessThan(0);
    expect(newestSdkVersion(['1.9.9', '1.10.0', '1.2'])).to.equal('1.10.0');
    expect(newestSdkVersion([])).to.equal(undefined);
  });

  it('parseRosterValue reads `<openedAtMs>\\n<username>`, `<openedAtMs>\\n<team>\\n<username>` and `<openedAtMs>\\n<json [username, team]>`', function () {
    expect(parseRosterValue('1700000000000\ndave')).to.deep.equal({ openedAtMs: 1700000000000, username: 'dave', team: null });
    expect(parseRosterValue('1700000000000\nred\nerin')).to.deep.equal({ openedAtMs: 1700000000000, username: 'erin', team: 'red' });
    // the name is everything after the team's line, whatever it holds
    expect(parseRosterValue('1700000000000\n\n[frank]\nx')).to.deep.equal({ openedAtMs: 1700000000000, username: '[frank]\nx', team: '' });
    expect(parseRosterValue('1700000000000\n')).to.deep.equal({ openedAtMs: 1700000000000, username: '', team: null });
    expect(parseRosterValue('1700000000000\n["alice","red"]')).to.deep.equal({ openedAtMs: 1700000000000, username: 'alice', team: 'red' });
    expect(parseRosterValue('1700000000000\n["bob",null]')).to.deep.equal({ openedAtMs: 1700000000000, username: 'bob', team: null });
    expect(parseRosterValue('1700000000000\n{"u":"carol","t":"blue"}')).to.deep.equal({ openedAtMs: 1700000000000, username: 'carol', team: 'blue' });
    expect(parseRosterValue('1700000000000\n[not json')).to.deep.equal({ openedAtMs: 1700000000000, username: null, team: null });
    expect(parseRosterValue('garbage\n["x",null]')).to.equal(null);
    // the base-36 open time heartbeat.lua writes since 2026-11-30 (8 characters until 2059)
    expect(parseRosterValue(`${(1700000000000).toString(36)}\nred\nerin`)).to.deep.equal({ openedAtMs: 1700000000000, username: 'erin', team: 'red' });
    expect(parseRosterValue('GARBAGE!\nerin')).to.equal(null);
  });
});

describe('admin CLI: servers', function () {
  // Each CLI run is its own process (tsx compiles the CLI): seconds apiece on a busy machine.
  this.timeout(90_000);
  const prefix = randomPrefix();
  const keySpace = new KeySpace(prefix);
  const workspaceIds: string[] = [];
  let db: Db;
  let redis: Redis;
  let gameId: string;
  let emptyGameId: string;
  let keys: GameKeys;
  let now: number;

  before(async function () {
    db = createTestDb();
    redis = createTestRedis();
    const a = await createWorkspaceAndGame(db, 'admin servers test');
    const b = await createWorkspaceAndGame(db, 'admin servers empty');
    workspaceIds.push(a.workspaceId, b.workspaceId);
    gameId = a.gameId;
    emptyGameId = b.gameId;
    keys = keySpace.game(gameId);
    now = Date.now();
    await seedServer(redis, keys, {
      sid: 'srv-a', lastMs: now - 5_000, firstMs: now - 3_600_000, scope: 'place-1', region: 'eu-west', pc: 2, mp: 20, sdk: '1.10.0', up: 3_700, iv: 20,
      roster: [
        ['u-2', now - 60_000, 'bob', null],
        ['u-1', now - 600_000, 'alice', 'red'],
      ],
    });
    await seedServer(redis, keys, { sid: 'srv-b', lastMs: now - 12_000, firstMs: now - 120_000, pc: 0, mp: 10, sdk: '1.9.2', up: 130, iv: 30 });
    await seedServer(redis, keys, { sid: 'srv-c', lastMs: now - 1_000, firstMs: now - 40_000, scope: 'place-2', pc: 1, mp: 10, sdk: '1.10.0', up: 45, iv: 20, roster: [['u-3', now - 30_000, 'carol', 'blue']] });
    // A zset member whose hash expired is not a live server.
    await redis.zadd(keys.servers(), now - 2_000, 'srv-expired');
    // Durable record: one server gone for an hour, one gone but live again in Redis, one never gone.
    const at = (ms: number) => new Date(ms);
    await db.gameServer.createMany({
      data: [
        { gameId, externalServerId: 'srv-old', externalScopeId: 'place-1', region: 'us-east', sdkVersion: '1.8.0', maxPlayers: 30, firstSeenAt: at(now - 7_200_000), lastSeenAt: at(now - 3_600_000), goneAt: at(now - 3_600_000) },
        { gameId, externalServerId: 'srv-a', sdkVersion: '1.10.0', maxPlayers: 20, firstSeenAt: at(now - 9_000_000), lastSeenAt: at(now - 8_000_000), goneAt: at(now - 8_000_000) },
        { gameId, externalServerId: 'srv-c', sdkVersion: '1.10.0', maxPlayers: 10, firstSeenAt: at(now - 40_000), lastSeenAt: at(now - 1_000) },
      ],
    });
  });

  after(async function () {
    await deleteWorkspaces(db, workspaceIds);
    await deleteRedisPrefix(redis, prefix);
    await db.$disconnect();
    redis.disconnect();
  });

  it('listLiveServers returns typed rows with roster size and the stale flag', async function () {
    const rows = await listLiveServers(redis, keySpace, gameId, now);
    expect(rows.map((r) => r.externalServerId)).to.deep.equal(['srv-a', 'srv-b', 'srv-c']);
    expect(rows[0]).to.deep.equal({
      externalServerId: 'srv-a',
      externalScopeId: 'place-1',
      region: 'eu-west',
      playerCount: 2,
      maxPlayers: 20,
      sdkVersion: '1.10.0',
      stale: false,
      uptimeSeconds: 3_700,
      heartbeatIntervalSeconds: 20,
      firstHeartbeatAt: new Date(now - 3_600_000),
      lastHeartbeatAt: new Date(now - 5_000),
      secondsSinceLastHeartbeat: 5,
      rosterSize: 2,
    });
    expect(rows[1]).to.include({ externalScopeId: null, region: null, stale: true, rosterSize: 0, secondsSinceLastHeartbeat: 12, heartbeatIntervalSeconds: 30 });
    expect(rows[2]).to.include({ stale: false, rosterSize: 1 });
    expect(await listLiveServers(redis, keySpace, emptyGameId, now)).to.deep.equal([]);
  });

  it('getRoster returns users with session length, oldest session first', async function () {
    expect(await getRoster(redis, keySpace, gameId, 'srv-a', now)).to.deep.equal([
      { externalId: 'u-1', username: 'alice', team: 'red', openedAt: new Date(now - 600_000), sessionSeconds: 600 },
      { externalId: 'u-2', username: 'bob', team: null, openedAt: new Date(now - 60_000), sessionSeconds: 60 },
    ]);
    expect(await getRoster(redis, keySpace, gameId, 'srv-unknown', now)).to.deep.equal([]);
  });

  it('servers list prints the live view, --all adds gone servers, and servers roster a roster', async function () {
    const [live, all, empty, table, roster] = await Promise.all([
      runAdmin(['servers', 'list', '--game', gameId, '--json'], prefix),
      runAdmin(['servers', 'list', '--game', gameId, '--all', '--json'], prefix),
      runAdmin(['servers', 'list', '--game', emptyGameId, '--json'], prefix),
      runAdmin(['servers', 'list', '--game', gameId, '--all'], prefix),
      runAdmin(['servers', 'roster', '--game', gameId, '--server', 'srv-a', '--json'], prefix),
    ]);
    // The CLI reads the clock itself, some time after `now` (its start-up takes seconds, more on a busy
    // machine): ages are bounded by the time that has passed since, not by a fixed allowance.
    const sinceNowS = Math.ceil((Date.now() - now) / 1000);
    type Row = Record<string, unknown> & { externalServerId: string; secondsSinceLastHeartbeat: number };
    const liveRows = okJson<{ servers: Row[] }>(live).servers;
    expect(liveRows.map((r) => [r.externalServerId, r.state, r.sdkVersion, r.stale])).to.deep.equal([
      ['srv-a', 'live', '1.10.0', false],
      ['srv-b', 'live', '1.9.2', true],
      ['srv-c', 'live', '1.10.0', false],
    ]);
    const a = liveRows[0]!;
    expect(a).to.include({ externalScopeId: 'place-1', region: 'eu-west', playerCount: 2, maxPlayers: 20, uptimeSeconds: 3_700, rosterSize: 2, goneAt: null });
    expect(a.lastHeartbeatAt).to.equal(new Date(now - 5_000).toISOString());
    expect(a.secondsSinceLastHeartbeat).to.be.within(5, 5 + sinceNowS);
    expect(liveRows[1]).to.include({ externalScopeId: null, region: null, playerCount: 0, maxPlayers: 10, rosterSize: 0 });

    const allRows = okJson<{ servers: Row[] }>(all).servers;
    expect(allRows.map((r) => [r.externalServerId, r.state])).to.deep.equal([
      ['srv-a', 'live'],
      ['srv-b', 'live'],
      ['srv-c', 'live'],
      ['srv-old', 'gone'],
    ]);
    const old = allRows[3]!;
    expect(old).to.include({ externalScopeId: 'place-1', region: 'us-east', playerCount: null, maxPlayers: 30, sdkVersion: '1.8.0', stale: true, uptimeSeconds: null, rosterSize: null });
    expect(old.goneAt).to.equal(new Date(now - 3_600_000).toISOString());
    expect(old.secondsSinceLastHeartbeat).to.be.within(3_600, 3_600 + sinceNowS);

    expect(okJson(empty)).to.deep.equal({ servers: [] });

    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.match(/^SERVER\s+SCOPE\s+REGION\s+PLAYERS\s+SDK\s+UPTIME\s+LAST HEARTBEAT\s+STATE\n/);
    expect(table.stdout).to.match(/srv-b\s+-\s+-\s+0\/10\s+1\.9\.2 \(stale\)\s+2m10s/);
    expect(table.stdout).to.match(/srv-old\s+place-1\s+us-east\s+-\/30\s+1\.8\.0 \(stale\)\s+-\s+1h00m ago\s+gone/);

    const r = okJson<{ externalServerId: string; players: { externalId: string; username: string; team: string | null; sessionSeconds: number }[] }>(roster);
    expect(r.externalServerId).to.equal('srv-a');
    expect(r.players.map((p) => [p.externalId, p.username, p.team])).to.deep.equal([
      ['u-1', 'alice', 'red'],
      ['u-2', 'bob', null],
    ]);
    expect(r.players[0]!.sessionSeconds).to.be.within(600, 620);
  });
});
