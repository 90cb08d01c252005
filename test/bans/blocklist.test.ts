/**
 * Issue #6: the Redis blocklist survives a Redis flush by rebuilding from Postgres (single-flight), and
 * concurrent writers converge on the newest state (tickets, src/store/lua/ban-sync.lua).
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { Blocklist } from '../../src/bans/blocklist.js';
import { BanService } from '../../src/bans/ban-service.js';
import { WorkspaceKeys } from '../../src/store/keys.js';
import { setLogLevel } from '../../src/log.js';
import { banService, check } from './support.js';
import { deleteKeys, scanKeys } from '../support/redis-keys.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';

describe('ban blocklist in Redis', () => {
  const h = new Harness();
  let bans: BanService;
  let g: TestGame;
  let keys: WorkspaceKeys;

  before(async () => {
    setLogLevel(h.config.logLevel);
    bans = banService(h);
    g = await h.game();
    keys = h.keySpace.workspace(g.workspaceId);
  });
  after(() => h.close());

  /** What FLUSHALL does to this suite: every key under its prefix is gone (other suites use other prefixes). */
  async function flushRedis(): Promise<void> {
    await deleteKeys(h.redis, h.keySpace.scanPattern());
  }

  async function banned(user: string, server = 'server-1'): Promise<boolean> {
    const res = await check(h, g, user, server);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.banned as boolean;
  }

  it('keeps its keys under the workspace hash tag, and the platform write keys under the game tag', async () => {
    const k = new KeySpace('p').workspace('W1');
    for (const name of [k.banList(), k.banMeta(), k.banRebuildLock()]) expect(name.startsWith('p:{w:W1}:')).to.equal(true, name);
    const gk = new KeySpace('p').game('G1');
    for (const name of [gk.banWriteSlots(), gk.banWriteUserSlots('u'), gk.banWritePause()]) expect(name.startsWith('p:{g:G1}:')).to.equal(true, name);
    await bans.create({ workspaceId: g.workspaceId, externalId: 'f-keys', scope: 'workspace', reason: 'r', issuedBy: 't' });
    await check(h, g, 'f-keys');
    const found = await scanKeys(h.redis, h.keySpace.scanPattern(`*${g.workspaceId}*`));
    expect(found.sort()).to.deep.equal([keys.banList(), keys.banMeta()].sort());
  });

  it('rebuilds from Postgres after a Redis flush: active bans apply again, lifted and expired ones do not', async () => {
    await bans.create({ workspaceId: g.workspaceId, externalId: 'f-perm', scope: 'workspace', reason: 'r', issuedBy: 't' });
    await bans.create({ workspaceId: g.workspaceId, externalId: 'f-srv', scope: 'server', gameId: g.gameId, externalServerId: 's-9', reason: 'r', issuedBy: 't' });
    const lifted = await bans.create({ workspaceId: g.workspaceId, externalId: 'f-lifted', scope: 'game', gameId: g.gameId, reason: 'r', issuedBy: 't' });
    await bans.lift(lifted.ban.id, 't');
    await bans.create({ workspaceId: g.workspaceId, externalId: 'f-expired', scope: 'game', gameId: g.gameId, expiresInSeconds: 5, reason: 'r', issuedBy: 't' }, Date.now() - 6000);
    expect(await banned('f-perm')).to.equal(true);

    await flushRedis();
    expect(await h.redis.exists(keys.banMeta(), keys.banList())).to.equal(0);

    expect(await banned('f-perm')).to.equal(true);
    expect(await banned('f-srv', 's-9')).to.equal(true);
    expect(await banned('f-srv', 's-1')).to.equal(false);
    expect(await banned('f-lifted')).to.equal(false);
    expect(await banned('f-expired')).to.equal(false);
    expect(await h.redis.hexists(keys.banMeta(), 'built')).to.equal(1);
    expect(await h.redis.hkeys(keys.banList())).to.have.members(['f-perm', 'f-srv', 'f-keys']);
  });

  it('rebuilds once (single flight) when many checks, in two processes, find it missing', async () => {
    await flushRedis();
    const processA = new Blocklist(h.redis, h.db, h.keySpace);
    const processB = new Blocklist(h.redis, h.db, h.keySpace);
    const lookups = Array.from({ length: 40 }, (_, i) => (i % 2 ? processA : processB).lookup(g.workspaceId, 'f-perm'));
    const results = await Promise.all(lookups);
    for (const entries of results) expect(entries.map((e) => e.scope)).to.deep.equal(['workspace']);
    // Each rebuild takes one ticket; the flush reset the counter, so one rebuild leaves seq at 1.
    expect(await h.redis.hget(keys.banMeta(), 'seq')).to.equal('1');
    // and the API still answers from it
    expect(await banned('f-perm')).to.equal(true);
  });

  it('rebuilds when only the built marker is missing, dropping entries Postgres no longer has', async () => {
    await h.redis.hset(keys.banList(), 'f-ghost', `0|${JSON.stringify([{ id: '00000000-0000-0000-0000-000000000000', scope: 'workspace', gameId: null, externalServerId: null, expiresAt: null, reason: 'stale' }])}`);
    expect(await banned('f-ghost')).to.equal(true);
    await h.redis.hdel(keys.banMeta(), 'built');
    expect(await banned('f-ghost')).to.equal(false);
    expect(await banned('f-perm')).to.equal(true);
  });

  it('after a failed sync the ban is still stored, and the blocklist is rebuilt on the next check', async () => {
    class FailingSync extends Blocklist {
      override async syncUser(): Promise<void> {
        throw new Error('connection lost');
      }
    }
    const flaky = new BanService({ db: h.db, redis: h.redis, keySpace: h.keySpace, blocklist: new FailingSync(h.redis, h.db, h.keySpace) });
    const err = await flaky.create({ workspaceId: g.workspaceId, externalId: 'f-flaky', scope: 'workspace', reason: 'r', issuedBy: 't' }).catch((e: Error) => e);
    expect((err as Error).message).to.match(/is stored/).and.match(/rebuilt from Postgres/);
    expect(await h.db.ban.count({ where: { workspaceId: g.workspaceId, externalId: 'f-flaky' } })).to.equal(1);
    expect(await banned('f-flaky')).to.equal(true);
  });

  it('keeps the newest state when a slower writer with an older ticket finishes last', async () => {
    const { ban } = await bans.create({ workspaceId: g.workspaceId, externalId: 'f-race', scope: 'game', gameId: g.gameId, reason: 'r', issuedBy: 't' });
    // A writer takes its ticket and reads "banned" from Postgres...
    const staleTicket = await h.redis.hincrby(keys.banMeta(), 'seq', 1);
    const staleState = (await h.redis.hget(keys.banList(), 'f-race'))!.split('|')[1]!;
    // ...meanwhile the ban is lifted and synced with a newer ticket...
    await bans.lift(ban.id, 't');
    expect(await banned('f-race')).to.equal(false);
    // ...then the slow writer's stale write arrives: it must not resurrect the ban.
    const written = await h.redis.runScript('banSync', [keys.banMeta(), keys.banList()], { t: String(staleTicket), m: false, e: ['f-race', staleState] });
    expect(written).to.equal(0);
    expect(await banned('f-race')).to.equal(false);
  });
});
