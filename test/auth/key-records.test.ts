/**
 * Issue 29 item 1: the Redis records of keys and games (src/auth/key-records.ts) are written through by
 * every change, hold the argon2id hash and never the secret, keep a revocation against a stale writer,
 * are copied whole by the boot reconcile, and let a cold verifier authenticate while Postgres is down
 * (the outage itself: test/faults/dependency-outage.test.ts and test/faults/outages.fault.ts).
 */
import { expect } from 'chai';
import { Harness } from '../support/harness.js';
import { KeyRecords, reconcileKeyRecords, RECORD_FORMAT } from '../../src/auth/key-records.js';
import { createKey, revokeKey } from '../../src/auth/key-service.js';
import { setHeartbeatInterval } from '../../src/games/game-service.js';
import { setPlatformSettings } from '../../src/games/platform-settings.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import calculateSlot from 'cluster-key-slot';

describe('key and game records in Redis', () => {
  const h = new Harness();
  const records = new KeyRecords(h.redis, h.keySpace);
  after(() => h.close());

  it('key names: the key record under its own {k:<prefix>} tag, the game record under the game tag', () => {
    const ks = new KeySpace('p');
    expect(ks.global.serverKeyRecord('abc123def456')).to.equal('p:{k:abc123def456}:record');
    expect(ks.game('G1').gameRecord()).to.equal('p:{g:G1}:game');
    expect(calculateSlot(ks.game('G1').gameRecord())).to.equal(calculateSlot(ks.game('G1').servers()));
  });

  it('a created key has records with the argon2id hash, scopes and game; never the secret', async () => {
    const g = await h.game(['heartbeat', 'events'], 25);
    const raw = await h.redis.hgetall(h.keySpace.global.serverKeyRecord(g.keyPrefix));
    const row = await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } });
    expect(raw).to.deep.equal({ f: RECORD_FORMAT, id: row.id, game: g.gameId, hash: row.secretHash, scopes: 'heartbeat,events' });
    expect(raw.hash).to.match(/^\$argon2id\$/);
    expect(JSON.stringify(raw)).to.not.include(g.secret);
    expect(await records.load(g.keyPrefix)).to.deep.equal({
      id: row.id, gameId: g.gameId, secretHash: row.secretHash, scopes: ['heartbeat', 'events'], revokedAt: null,
      game: { workspaceId: g.workspaceId, heartbeatIntervalSeconds: 25 },
    });
  });

  it('interval and platform changes write through; the cloud API key is never copied', async () => {
    const g = await h.game();
    await setHeartbeatInterval(h.db, h.redis, h.keySpace, g.gameId, 40);
    await setPlatformSettings(h.db, g.gameId, { platform: 'roblox', universeId: '42', cloudApiBaseUrl: 'http://127.0.0.1:1', cloudApiKey: 'secret-cloud-key-0123456789' }, 'test', records);
    const game = await h.redis.hgetall(h.keySpace.game(g.gameId).gameRecord());
    expect(game).to.include({ interval: '40', platform: 'roblox', universe: '42', nativeBans: '0', ws: g.workspaceId });
    expect(JSON.stringify(game)).to.not.include('secret-cloud-key');
    expect((await records.load(g.keyPrefix))!.game.heartbeatIntervalSeconds).to.equal(40);
  });

  it('a revoke marks the record; a later write of the unrevoked row (a reconcile that read it before) keeps it revoked', async () => {
    const g = await h.game();
    const row = await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } });
    const { revokedAt } = await revokeKey(h.db, h.redis, h.keySpace, g.keyPrefix);
    await records.putKey(g.keyPrefix, row);
    expect((await records.load(g.keyPrefix))!.revokedAt!.getTime()).to.equal(revokedAt.getTime());
  });

  it('the boot reconcile writes the records of keys created without them, raises doors versions and stamps the sync', async () => {
    const g = await h.game();
    const bare = await createKey(h.db, g.gameId, ['heartbeat']);
    await h.db.game.update({ where: { id: g.gameId }, data: { doorsVersion: 7 } });
    expect(await records.load(bare.prefix)).to.equal(null);
    const before = Date.now();
    const n = await reconcileKeyRecords(h.db, h.redis, h.keySpace);
    expect(n.keys).to.be.at.least(2);
    expect(n.games).to.be.at.least(1);
    expect(await records.load(bare.prefix)).to.deep.include({ gameId: g.gameId, scopes: ['heartbeat'], revokedAt: null });
    expect(await h.redis.get(h.keySpace.game(g.gameId).doorsVersion())).to.equal('7');
    expect(Date.parse((await records.syncedAt())!)).to.be.at.least(before - 1000);
  });

  it('a record of another format or missing its game record is not used', async () => {
    const g = await h.game();
    await h.redis.hset(h.keySpace.global.serverKeyRecord(g.keyPrefix), 'f', '0');
    expect(await records.load(g.keyPrefix)).to.equal(null);
    await h.redis.hset(h.keySpace.global.serverKeyRecord(g.keyPrefix), 'f', RECORD_FORMAT);
    await h.redis.del(h.keySpace.game(g.gameId).gameRecord());
    expect(await records.load(g.keyPrefix)).to.equal(null);
  });
});
