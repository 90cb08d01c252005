/**
 * Spec: Events › Urgent nudge and Limits (messaging receive budget 40 + 80 × servers per topic per minute,
 * 1 KiB payload). The platform is a local imitation of its cloud messaging endpoint
 * (packages/simulator/src/cloud-messaging-imitation.ts); queue and worker are real BullMQ on the test Redis.
 */
import { expect } from 'chai';
import { Queue, Worker, type Job } from 'bullmq';
import { Harness, type TestGame } from '../support/harness.js';
import { CloudMessagingImitation } from '@gis/simulator';
import { CloudMessagingPublisher, retryAfterMs } from '../../src/commands/cloud-messaging-publisher.js';
import { MAX_NUDGE_BYTES, NUDGE_TOPIC, nudgeMessage } from '../../src/commands/nudge-publisher.js';
import { admitNudge, nudgeSpacingMs, nudgesPerMinute } from '../../src/commands/nudge-budget.js';
import { NudgeSender, NUDGE_MAX_AGE_MS } from '../../src/commands/nudge-sender.js';
import { NUDGE_QUEUE, NudgeQueue, type NudgeJobData } from '../../src/commands/nudge-queue.js';
import { publishNudgesJob } from '../../workers/jobs/publish-nudges.job.js';
import { GameDirectory } from '../../src/store/game-directory.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { setLogLevel } from '../../src/log.js';
import { beat, deleteCommands, issue } from './command-fixtures.js';

const API_KEY = 'cloud-key-for-tests';
const UNIVERSE = '4242';

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('urgent nudges', () => {
  const h = new Harness();
  const platform = new CloudMessagingImitation({ apiKey: API_KEY });
  const games: TestGame[] = [];
  let bull: AppRedis;
  let nudges: NudgeQueue;
  let queue: Queue<NudgeJobData>;
  let worker: Worker<NudgeJobData>;

  /** A game whose platform settings point at the imitation; `live` servers heartbeat once. */
  async function pushGame(opts: { live?: number; enabled?: boolean; universe?: string | null } = {}): Promise<TestGame> {
    const g = await h.game();
    games.push(g);
    await h.db.game.update({
      where: { id: g.gameId },
      data: { nudgesEnabled: opts.enabled ?? true, universeId: opts.universe === undefined ? UNIVERSE : opts.universe, cloudApiBaseUrl: platform.baseUrl, cloudApiKey: API_KEY },
    });
    for (let i = 0; i < (opts.live ?? 1); i++) await beat(h, g, `srv-${i}`, [`u${i}`]);
    return g;
  }

  async function drained(): Promise<boolean> {
    const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    return Object.values(counts).every((n) => n === 0);
  }

  before(async () => {
    setLogLevel(h.config.logLevel);
    await platform.start();
    bull = createRedis(h.config.redisUrl, { name: 'test-bull', forWorker: true });
    const prefix = h.keySpace.global.bullPrefix();
    nudges = new NudgeQueue(h.redis, h.keySpace);
    queue = new Queue<NudgeJobData>(NUDGE_QUEUE, { connection: bull, prefix });
    const run = publishNudgesJob({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, games: new GameDirectory(h.redis, h.db, h.keySpace), consumerName: 'test' });
    worker = new Worker<NudgeJobData>(NUDGE_QUEUE, (job: Job<NudgeJobData>, token?: string) => run(job, token), { connection: bull, prefix, concurrency: 4 });
  });
  after(async () => {
    await worker.close();
    await queue.close();
    await nudges.close();
    await bull.quit();
    await platform.stop();
    await deleteCommands(h, games);
    await h.close();
  });

  describe('cloud messaging publisher', () => {
    it('POSTs {message} to the universe topic with the API key, at most 1 KiB and without command data', async () => {
      const publisher = new CloudMessagingPublisher({ universeId: UNIVERSE, apiKey: API_KEY, baseUrl: platform.baseUrl });
      const before = platform.publishes.length;
      expect(await publisher.publish(nudgeMessage(Date.now()))).to.deep.equal({ kind: 'sent' });
      const p = platform.publishes[before]!;
      expect(p).to.include({ universeId: UNIVERSE, topic: NUDGE_TOPIC, apiKeyValid: true, status: 200 });
      expect(Object.keys(JSON.parse(p.raw) as object)).to.deep.equal(['message']);
      expect(Buffer.byteLength(p.message!)).to.be.at.most(MAX_NUDGE_BYTES);
      expect(Object.keys(JSON.parse(p.message!) as object).sort()).to.deep.equal(['at', 'kind', 'v']);
    });

    it('maps the platform answers: 429 with Retry-After, 5xx, network errors, refusals', async () => {
      const publisher = new CloudMessagingPublisher({ universeId: UNIVERSE, apiKey: API_KEY, baseUrl: platform.baseUrl });
      platform.enqueue({ status: 429, headers: { 'retry-after': '7' } });
      expect(await publisher.publish('{}')).to.deep.equal({ kind: 'rate_limited', retryAfterMs: 7000 });
      platform.enqueue({ status: 429 });
      expect(await publisher.publish('{}')).to.deep.equal({ kind: 'rate_limited', retryAfterMs: 5000 });
      platform.enqueue({ status: 503 });
      expect(await publisher.publish('{}')).to.deep.include({ kind: 'unavailable' });
      const wrongKey = new CloudMessagingPublisher({ universeId: UNIVERSE, apiKey: 'wrong', baseUrl: platform.baseUrl });
      const refused = await wrongKey.publish('{}');
      expect(refused).to.deep.include({ kind: 'rejected', status: 401 });
      expect(JSON.stringify(refused)).to.not.contain('wrong');
      const nowhere = new CloudMessagingPublisher({ universeId: UNIVERSE, apiKey: API_KEY, baseUrl: 'http://127.0.0.1:1' });
      expect(await nowhere.publish('{}')).to.deep.include({ kind: 'unavailable' });
      let thrown: unknown;
      await publisher.publish('x'.repeat(MAX_NUDGE_BYTES + 1)).catch((e: unknown) => (thrown = e));
      expect(thrown).to.be.instanceOf(RangeError);
      expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).to.equal(6_000);
    });
  });

  describe('budget', () => {
    it('admits floor(0.9 × (40 + 80 × S) / S) publishes per minute per topic, paced evenly, and says when there is room', async () => {
      const g = await pushGame({ live: 3 });
      const perMinute = nudgesPerMinute(3);
      const spacing = nudgeSpacingMs(3);
      expect([perMinute, spacing]).to.deep.equal([84, 715]);
      const admit = (at: number) => admitNudge(h.redis, h.keySpace, g.gameId, at);
      const t = Date.now();
      expect((await admit(t)).kind).to.equal('admitted');
      // a second nudge right away waits for the spacing
      expect(await admit(t + 100)).to.deep.equal({ kind: 'wait', retryAfterMs: spacing - 100, servers: 3 });
      for (let i = 1; i < perMinute; i++) expect((await admit(t + i * spacing)).kind, `publish ${i}`).to.equal('admitted');
      // ten more servers come live: the budget per minute drops to 74, and the window already holds more
      for (let i = 3; i < 13; i++) await beat(h, g, `srv-${i}`);
      const now = t + (perMinute - 1) * spacing + nudgeSpacingMs(13);
      const inWindow = Array.from({ length: perMinute }, (_, i) => t + i * spacing).filter((x) => x > now - 60_000);
      const retryAfterMs = inWindow[inWindow.length - nudgesPerMinute(13)]! + 60_000 - now;
      expect(await admit(now)).to.deep.equal({ kind: 'wait', retryAfterMs, servers: 13 });
      expect((await admit(now + retryAfterMs)).kind).to.equal('admitted');
      expect([nudgesPerMinute(1), nudgesPerMinute(10), nudgesPerMinute(1000)]).to.deep.equal([108, 75, 72]);
    });

    it('keeps every publish within the platform receive budget (the imitation enforces it and never answers 429)', async () => {
      let clock = Date.now();
      const strict = new CloudMessagingImitation({ apiKey: API_KEY, enforceReceiveBudget: true, serverCount: () => 3, now: () => clock });
      await strict.start();
      try {
        const g = await pushGame({ live: 3 });
        await h.db.game.update({ where: { id: g.gameId }, data: { cloudApiBaseUrl: strict.baseUrl } });
        const sender = new NudgeSender({ db: h.db, redis: h.redis, keySpace: h.keySpace });
        // two minutes of a nudge request every 200 ms, on one clock shared by the service and the platform
        const step = 200;
        let sent = 0;
        for (let i = 0; i < 600; i++, clock += step) if ((await sender.send(g.gameId, clock, clock)).kind === 'sent') sent++;
        // paced: one publish per spacing (rounded up to the request step), never more than the budget in any minute
        expect(sent).to.equal(Math.floor((599 * step) / (Math.ceil(nudgeSpacingMs(3) / step) * step)) + 1);
        const times = strict.publishes.map((p) => p.at);
        for (const at of times) expect(times.filter((x) => x > at - 60_000 && x <= at).length).to.be.at.most(nudgesPerMinute(3));
        expect(strict.publishes.filter((p) => p.status === 429)).to.deep.equal([]);
      } finally {
        await strict.stop();
      }
    });
  });

  describe('sender', () => {
    it('sends nothing for games without push, without live servers, or for stale requests', async () => {
      const sender = new NudgeSender({ db: h.db, redis: h.redis, keySpace: h.keySpace });
      const now = Date.now();
      const disabled = await pushGame({ enabled: false });
      const noUniverse = await pushGame({ universe: null });
      const empty = await pushGame({ live: 0 });
      const ok = await pushGame();
      const before = platform.publishes.length;
      expect(await sender.send(disabled.gameId, now, now)).to.deep.equal({ kind: 'skipped', reason: 'no_push' });
      expect(await sender.send(noUniverse.gameId, now, now)).to.deep.equal({ kind: 'skipped', reason: 'no_push' });
      expect(await sender.send(empty.gameId, now, now)).to.deep.equal({ kind: 'skipped', reason: 'no_live_servers' });
      expect(await sender.send(ok.gameId, now, now - NUDGE_MAX_AGE_MS - 1)).to.deep.equal({ kind: 'skipped', reason: 'stale' });
      expect(platform.publishes.length).to.equal(before);
      // issuing in a game without push requests no nudge at all
      const c = await issue(h, disabled, { type: 'kick', target: { externalId: 'u0' }, payload: { reason: 'r' } }, nudges);
      expect(c).to.include({ routedTo: 'srv-0', nudgeRequested: false });
    });

    it('turns a platform 429 into a retry after its Retry-After', async () => {
      const g = await pushGame();
      const sender = new NudgeSender({ db: h.db, redis: h.redis, keySpace: h.keySpace });
      platform.enqueue({ status: 429, headers: { 'retry-after': '3' } });
      const now = Date.now();
      expect(await sender.send(g.gameId, now, now)).to.deep.equal({ kind: 'retry', afterMs: 3000, reason: 'rate_limited' });
    });
  });

  describe('end to end (issue → queue → worker → platform → subscribed servers)', () => {
    it('coalesces a burst of commands into one nudge on the game topic, received by every subscribed server', async () => {
      const g = await pushGame({ live: 3 });
      const received: string[] = [];
      const unsubscribe = ['srv-0', 'srv-1', 'srv-2'].map((s) => platform.subscribe(UNIVERSE, NUDGE_TOPIC, () => received.push(s)));
      const before = platform.accepted.length;
      // a burst: 20 commands issued at once (as a lockdown script would), inside the coalescing window
      // (widened here so a slow test machine cannot stretch the burst past it)
      const wide = new NudgeQueue(h.redis, h.keySpace, { coalesceMs: 3000 });
      const issued = await Promise.all(
        Array.from({ length: 20 }, (_, i) => issue(h, g, { type: 'message', target: { externalServerId: `srv-${i % 3}` }, payload: { text: `m${i}` } }, wide)),
      );
      await wide.close();
      expect(issued.every((c) => c.nudgeRequested)).to.equal(true);
      await until(async () => platform.accepted.length > before && (await drained()), 'the nudge to be published');
      expect(platform.accepted.length - before).to.equal(1);
      const sent = platform.accepted.at(-1)!;
      for (const c of issued) expect(sent.raw).to.not.contain(c.id);
      expect(sent.raw).to.not.contain('m1');
      await until(() => received.length === 3, 'delivery to the three subscribers');
      expect(received.sort()).to.deep.equal(['srv-0', 'srv-1', 'srv-2']);
      unsubscribe.forEach((u) => u());

      // a command issued after that nudge went out gets a nudge of its own
      await issue(h, g, { type: 'refresh_permissions', target: { externalServerId: 'srv-0' } }, nudges);
      await until(async () => platform.accepted.length === before + 2 && (await drained()), 'the second nudge');
    });

    it('does not nudge for a command that waits for an offline user', async () => {
      const g = await pushGame();
      const c = await issue(h, g, { type: 'kick', target: { externalId: 'offline' }, payload: { reason: 'r' } }, nudges);
      expect(c).to.include({ routedTo: null, nudgeRequested: false });
    });

    it('after a platform 429 the coalesced nudge is published once the Retry-After has passed', async () => {
      const g = await pushGame();
      const before = platform.publishes.length;
      platform.enqueue({ status: 429, headers: { 'retry-after': '1' } });
      await issue(h, g, { type: 'message', target: { externalServerId: 'srv-0' }, payload: { text: 'a' } }, nudges);
      await until(() => platform.publishes.length === before + 1, 'the refused publish');
      // requests arriving while the job waits out the Retry-After join it
      await issue(h, g, { type: 'message', target: { externalServerId: 'srv-0' }, payload: { text: 'b' } }, nudges);
      await until(async () => platform.publishes.length === before + 2 && (await drained()), 'the retried publish');
      expect(platform.publishes.slice(before).map((p) => p.status)).to.deep.equal([429, 200]);
      const [refused, retried] = platform.publishes.slice(before);
      expect(retried!.at - refused!.at).to.be.at.least(1000);
    });
  });
});
