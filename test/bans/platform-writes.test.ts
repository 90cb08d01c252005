/**
 * Issue #6, enforcement on platforms that ban natively: queued and debounced writes (ten toggles in a
 * second → one write with the final state), both rate limits, retries on 429/5xx honouring Retry-After,
 * an idempotency key per write, states visible in `bans list`, and reconcile. The platform is a local
 * imitation (test/support/platform-imitation.ts) with its own limits; a real BullMQ worker runs the
 * `platform-bans` role. The per-user window is scaled from 60 s to 3 s so the suite stays short.
 */
import { expect } from 'chai';
import { Worker, type Queue } from 'bullmq';
import { Harness, type TestGame } from '../support/harness.js';
import { PlatformImitation } from '../support/platform-imitation.js';
import { listBans, type BanService } from '../../src/bans/ban-service.js';
import { PLATFORM_BANS_QUEUE, PlatformWriteQueue, type PlatformBanJob } from '../../src/bans/platform-write-queue.js';
import { reconcilePlatformBans } from '../../src/bans/platform-reconcile.js';
import { setPlatformSettings } from '../../src/games/platform-settings.js';
import { GameDirectory } from '../../src/store/game-directory.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { setLogLevel } from '../../src/log.js';
import { platformBansJob } from '../../workers/jobs/platform-bans.job.js';
import { banService, platformQueue, waitFor } from './support.js';

const API_KEY = 'cloud-key-not-for-logs';
const DEBOUNCE_MS = 1000;
/** The imitation's per-user window (the platform's 60 s, scaled down); the writer adds its margin. */
const USER_WINDOW_MS = 3000;

describe('platform ban writes (native-ban games)', function () {
  this.timeout(60_000);
  const h = new Harness();
  let platform: PlatformImitation;
  let queue: Queue<PlatformBanJob>;
  let workerConnection: AppRedis;
  let worker: Worker;
  let bans: BanService;
  let universeSeq = 0;

  before(async () => {
    setLogLevel(h.config.logLevel);
    platform = await PlatformImitation.start({ apiKey: API_KEY, universeMax: 10, universeWindowMs: 1000, userMax: 2, userWindowMs: USER_WINDOW_MS });
    queue = platformQueue(h);
    bans = banService(h, { queue, debounceMs: DEBOUNCE_MS });
    workerConnection = createRedis(h.config.redisUrl, { forWorker: true });
    const ctx = { config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, games: new GameDirectory(h.redis, h.db, h.keySpace), consumerName: 'test' };
    const run = platformBansJob(ctx, { options: { debounceMs: DEBOUNCE_MS, userWindowMs: USER_WINDOW_MS + 300, maxAttempts: 4, backoffBaseMs: 200 } });
    worker = new Worker(PLATFORM_BANS_QUEUE, run, { connection: workerConnection, prefix: h.keySpace.global.bullPrefix(), concurrency: 16 });
  });
  after(async () => {
    await worker.close();
    await queue.close();
    await workerConnection.quit();
    await platform.close();
    await h.close();
  });

  /** A fresh game that bans natively through the imitation, in its own universe. */
  async function nativeGame(): Promise<TestGame & { universeId: string }> {
    const g = await h.game();
    universeSeq += 1;
    const universeId = `${Date.now()}${universeSeq}`;
    await setPlatformSettings(h.db, g.gameId, { platform: 'roblox', universeId, cloudApiBaseUrl: platform.baseUrl, cloudApiKey: API_KEY, nativeBans: true }, 'test');
    return { ...g, universeId };
  }

  /** Waits until the game has no queued write and no job left on the queue. */
  async function settled(gameId: string): Promise<void> {
    await waitFor(`platform writes of ${gameId} to settle`, async () => {
      if (await h.db.platformBanWrite.count({ where: { gameId, state: 'queued' } })) return false;
      const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized']);
      return !jobs.some((j) => j?.data.gameId === gameId);
    }, 45_000);
  }

  function rows(gameId: string, externalId: string) {
    return h.db.platformBanWrite.findMany({ where: { gameId, externalId }, orderBy: { queuedAt: 'asc' } });
  }

  it('writes a ban and its lift as PATCHes of the user restriction (active, duration, reasons, idempotency key, API key)', async () => {
    const g = await nativeGame();
    const { ban, platformWrites } = await bans.create({ workspaceId: g.workspaceId, externalId: '1001', scope: 'game', gameId: g.gameId, expiresInSeconds: 3600, reason: 'exploiting', issuedBy: 'mod-x' });
    expect(platformWrites.map((w) => [w.gameId, w.state, w.active])).to.deep.equal([[g.gameId, 'queued', true]]);
    await settled(g.gameId);
    const [first] = platform.forUser('1001');
    expect(platform.forUser('1001')).to.have.length(1);
    expect(first).to.include({ universeId: g.universeId, apiKey: API_KEY, status: 200 });
    const restriction = first!.body!.gameJoinRestriction!;
    expect(restriction).to.include({ active: true, displayReason: 'exploiting' });
    expect(restriction.privateReason).to.contain(ban.id).and.contain('mod-x');
    const seconds = Number(/^(\d+)s$/.exec(restriction.duration ?? '')?.[1]);
    expect(seconds).to.be.within(3590, 3600);
    const [written] = await rows(g.gameId, '1001');
    expect(written).to.include({ state: 'written', attempts: 1, active: true, durationSeconds: seconds, idempotencyKey: first!.idempotencyKey, lastError: null });
    expect(written!.writtenAt).to.be.instanceOf(Date);

    await bans.lift(ban.id, 'mod-y');
    await settled(g.gameId);
    const second = platform.forUser('1001')[1]!;
    expect(second.body!.gameJoinRestriction).to.include({ active: false });
    expect(second.body!.gameJoinRestriction).not.to.have.property('duration');
    expect(second.idempotencyKey).not.to.equal(first!.idempotencyKey);
    expect(platform.restrictions.get(`${g.universeId}/1001`)).to.include({ active: false });

    const [listed] = await listBans(h.db, { workspaceId: g.workspaceId, externalId: '1001' });
    expect(listed!.platformWrites.map((w) => [w.active, w.state])).to.deep.equal([[false, 'written'], [true, 'written']]);
  });

  it('debounces: ten toggles in a second give one write, with the final state', async () => {
    const g = await nativeGame();
    let banId = '';
    for (let i = 0; i < 10; i++) {
      if (i % 2 === 0) banId = (await bans.create({ workspaceId: g.workspaceId, externalId: '2002', scope: 'workspace', reason: `toggle ${i}`, issuedBy: 'mod' })).ban.id;
      else await bans.lift(banId, 'mod');
    }
    await settled(g.gameId);
    const sent = platform.forUser('2002');
    expect(sent).to.have.length(1);
    expect(sent[0]!.body!.gameJoinRestriction).to.include({ active: false });
    const states = (await rows(g.gameId, '2002')).map((r) => r.state);
    expect(states).to.deep.equal([...Array(9).fill('superseded'), 'written']);
    expect(platform.restrictions.get(`${g.universeId}/2002`)).to.include({ active: false });
  });

  it('stays within 10 writes per second per universe', async () => {
    const g = await nativeGame();
    const users = Array.from({ length: 25 }, (_, i) => String(3000 + i));
    await Promise.all(users.map((u) => bans.create({ workspaceId: g.workspaceId, externalId: u, scope: 'game', gameId: g.gameId, reason: 'wave', issuedBy: 'mod' })));
    await settled(g.gameId);
    const sent = platform.requests.filter((r) => r.universeId === g.universeId);
    expect(sent.map((r) => r.userId).sort()).to.deep.equal(users);
    expect(platform.violations.filter((r) => r.universeId === g.universeId)).to.deep.equal([]);
    expect(platform.maxInWindow(g.universeId, 1000)).to.be.at.most(10);
    expect(await h.db.platformBanWrite.count({ where: { gameId: g.gameId, state: 'written' } })).to.equal(25);
  });

  it('stays within 2 writes per window per user; the third change is written once the window allows it', async () => {
    const g = await nativeGame();
    const first = await bans.create({ workspaceId: g.workspaceId, externalId: '4004', scope: 'game', gameId: g.gameId, reason: 'one', issuedBy: 'mod' });
    await settled(g.gameId);
    await bans.lift(first.ban.id, 'mod');
    await settled(g.gameId);
    await bans.create({ workspaceId: g.workspaceId, externalId: '4004', scope: 'game', gameId: g.gameId, reason: 'three', issuedBy: 'mod' });
    await settled(g.gameId);
    const sent = platform.forUser('4004');
    expect(sent.map((r) => [r.status, r.body!.gameJoinRestriction!.active])).to.deep.equal([[200, true], [200, false], [200, true]]);
    expect(platform.violations.filter((r) => r.userId === '4004')).to.deep.equal([]);
    expect(sent[2]!.at - sent[0]!.at).to.be.at.least(USER_WINDOW_MS);
  });

  it('retries 5xx and 429 with backoff, honouring Retry-After, with the same idempotency key and body', async () => {
    const g = await nativeGame();
    platform.failNext('5005', 2, { status: 503 });
    platform.failNext('5005', 1, { status: 429, headers: { 'retry-after': '1' } });
    await bans.create({ workspaceId: g.workspaceId, externalId: '5005', scope: 'game', gameId: g.gameId, reason: 'retry me', issuedBy: 'mod' });
    await settled(g.gameId);
    const sent = platform.forUser('5005');
    expect(sent.map((r) => r.status)).to.deep.equal([503, 503, 429, 200]);
    expect(new Set(sent.map((r) => r.idempotencyKey)).size).to.equal(1);
    expect(new Set(sent.map((r) => r.firstSent)).size).to.equal(1);
    expect(new Set(sent.map((r) => JSON.stringify(r.body))).size).to.equal(1);
    expect(sent[3]!.at - sent[2]!.at, 'Retry-After: 1').to.be.at.least(1000);
    const [row] = await rows(g.gameId, '5005');
    expect(row).to.include({ state: 'written', attempts: 4, lastError: null });
  });

  it('records a write the platform refuses, or that keeps failing, as failed with the reason (visible in bans list)', async () => {
    const g = await nativeGame();
    platform.failNext('6006', 1, { status: 403, body: '{"message":"api key lacks user-restriction:write"}' });
    platform.failNext('6007', 4, { status: 500 });
    await bans.create({ workspaceId: g.workspaceId, externalId: '6006', scope: 'game', gameId: g.gameId, reason: 'r', issuedBy: 'mod' });
    await bans.create({ workspaceId: g.workspaceId, externalId: '6007', scope: 'game', gameId: g.gameId, reason: 'r', issuedBy: 'mod' });
    await settled(g.gameId);
    const [refused] = await listBans(h.db, { workspaceId: g.workspaceId, externalId: '6006' });
    expect(refused!.platformWrites[0]).to.include({ state: 'failed', attempts: 1 });
    expect(refused!.platformWrites[0]!.lastError).to.match(/403/).and.match(/user-restriction:write/);
    const [gaveUp] = await listBans(h.db, { workspaceId: g.workspaceId, externalId: '6007' });
    expect(gaveUp!.platformWrites[0]).to.include({ state: 'failed', attempts: 4 });
    expect(gaveUp!.platformWrites[0]!.lastError).to.match(/500/);
    expect(JSON.stringify(await listBans(h.db, { workspaceId: g.workspaceId }))).not.to.contain(API_KEY);
  });

  it('writes nothing for server bans or for games that do not ban natively', async () => {
    const g = await nativeGame();
    const plain = await h.game();
    const s = await bans.create({ workspaceId: g.workspaceId, externalId: '7007', scope: 'server', gameId: g.gameId, externalServerId: 'srv', reason: 'r', issuedBy: 'mod' });
    const p = await bans.create({ workspaceId: plain.workspaceId, externalId: '7007', scope: 'workspace', reason: 'r', issuedBy: 'mod' });
    expect(s.platformWrites).to.deep.equal([]);
    expect(p.platformWrites).to.deep.equal([]);
    expect(await h.db.platformBanWrite.count({ where: { gameId: { in: [g.gameId, plain.gameId] } } })).to.equal(0);
  });

  it('reconcile re-queues drift (missed, failed and lost writes) and then finds none', async () => {
    const g = await nativeGame();
    const writes = new PlatformWriteQueue(queue, h.db, DEBOUNCE_MS);
    // in sync: written normally
    await bans.create({ workspaceId: g.workspaceId, externalId: '8001', scope: 'game', gameId: g.gameId, reason: 'ok', issuedBy: 'mod' });
    // failed for good
    platform.failNext('8002', 1, { status: 400 });
    await bans.create({ workspaceId: g.workspaceId, externalId: '8002', scope: 'game', gameId: g.gameId, reason: 'failed once', issuedBy: 'mod' });
    await settled(g.gameId);
    // missed: banned while the game did not ban natively
    await setPlatformSettings(h.db, g.gameId, { nativeBans: false });
    await bans.create({ workspaceId: g.workspaceId, externalId: '8003', scope: 'workspace', reason: 'missed', issuedBy: 'mod' });
    await setPlatformSettings(h.db, g.gameId, { nativeBans: true });
    // lost: a queued row whose job vanished (e.g. with a Redis flush)
    await h.db.ban.create({ data: { workspaceId: g.workspaceId, externalId: '8004', scope: 'game', gameId: g.gameId, reason: 'lost', issuedBy: 'mod', issuedAt: new Date() } });
    await h.db.platformBanWrite.create({ data: { gameId: g.gameId, externalId: '8004', active: true, state: 'queued', idempotencyKey: `lost-${g.gameId}`, queuedAt: new Date(Date.now() - 5000) } });

    const result = await reconcilePlatformBans(h.db, writes, g.gameId);
    expect(result.drift.map((d) => d.externalId)).to.deep.equal(['8002', '8003']);
    expect(result.drift.map((d) => d.desired.active)).to.deep.equal([true, true]);
    expect(result.drift.map((d) => d.lastWritten)).to.deep.equal([null, null]);
    expect(result.rescheduled).to.deep.equal(['8004']);
    expect(result.checked).to.equal(4);
    await settled(g.gameId);
    for (const user of ['8001', '8002', '8003', '8004']) expect(platform.restrictions.get(`${g.universeId}/${user}`), user).to.include({ active: true });

    const again = await reconcilePlatformBans(h.db, writes, g.gameId);
    expect(again.drift).to.deep.equal([]);
    expect(again.rescheduled).to.deep.equal([]);

    // a lift written nowhere (nativeBans off meanwhile) is drift too: the platform still restricts
    await setPlatformSettings(h.db, g.gameId, { nativeBans: false });
    const [ban8001] = await listBans(h.db, { workspaceId: g.workspaceId, externalId: '8001' });
    await bans.lift(ban8001!.id, 'mod');
    await setPlatformSettings(h.db, g.gameId, { nativeBans: true });
    const lifted = await reconcilePlatformBans(h.db, writes, g.gameId);
    expect(lifted.drift.map((d) => [d.externalId, d.desired.active, d.lastWritten?.active])).to.deep.equal([['8001', false, true]]);
    await settled(g.gameId);
    expect(platform.restrictions.get(`${g.universeId}/8001`)).to.include({ active: false });
  });

  it('refuses to reconcile a game that does not ban natively', async () => {
    const plain = await h.game();
    const err = await reconcilePlatformBans(h.db, new PlatformWriteQueue(queue, h.db), plain.gameId).catch((e: unknown) => e);
    expect(err).to.have.property('kind', 'invalid');
  });
});
