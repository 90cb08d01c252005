/**
 * The moderator console end to end in a real browser (issues #7 and #21): a real stack (API + console
 * listener + workers as child processes), a small simulated fleet of reference clients, and Debian's
 * headless Chromium driven by playwright-core. A moderator signs in and sees servers appear; the live
 * views arrive by push (no polling request while the feed is up), so a kick issued from the CLI shows up
 * without a reload; a kick from the page reaches acked and the game removes the player; at 1280 and 1440
 * px every action button is inside the viewport and clickable; lockdown asks first, naming the game and
 * its number of doors; a denial in the access log links to the policy that decided it; an empty chart says
 * "no data yet". Screenshots land in test-artifacts/ (git-ignored).
 *
 * Needs `/usr/bin/chromium` (`apt-get install -y chromium`); without it the test fails, on purpose: CI
 * installs it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createDb, type Db } from '../../src/store/prisma.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { createGame, createWorkspace } from '../../src/games/game-service.js';
import { createKey } from '../../src/auth/key-service.js';
import { SCOPES } from '../../src/auth/scopes.js';
import { sign } from '../../src/auth/signature.js';
import { addPolicy, createDoor } from '../../src/doors/door-admin-service.js';
import { GameClient, type CommandEntry, type CommandOutcome } from '@gis/client';
import { okJson, runAdmin } from '../admin/harness.js';
import { ROOT, Stack } from '../support/stack.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const WIDTHS = [1280, 1440];

/** Page script (a string: these tests have no DOM types) picking the game whose id sessionStorage holds under `e2e:pick-on-render` the moment the picker renders. */
const PICK_ON_RENDER = `(() => {
  let id = null;
  try { id = sessionStorage.getItem('e2e:pick-on-render'); sessionStorage.removeItem('e2e:pick-on-render'); } catch { return; }
  if (!id) return;
  new MutationObserver((_, observer) => {
    const picker = document.querySelector('[data-test=game-picker]');
    if (!picker) return;
    observer.disconnect();
    picker.value = id;
    picker.dispatchEvent(new Event('change', { bubbles: true }));
  }).observe(document, { childList: true, subtree: true });
})();`;

/** One simulated game server: a reference client whose game executes kicks by removing the player. */
function simServer(url: string, key: string, id: string, players: string[]): GameClient {
  const client: GameClient = new GameClient({
    baseUrl: url,
    apiKey: key,
    externalServerId: id,
    externalScopeId: 'map-1',
    region: 'eu-west',
    maxPlayers: 20,
    sdkVersion: id.endsWith('old') ? '0.9.0' : '1.2.0',
    bootJitterSeconds: 0,
    onCommand: async (cmd: CommandEntry): Promise<CommandOutcome> => {
      const user = cmd.target.externalId;
      if (cmd.type === 'kick' && user && client.roster.remove(user)) {
        client.track({ type: 'leave', externalId: user, payload: { reason: 'kicked' } });
        return { ok: true };
      }
      return { ok: false, reason: `cannot ${cmd.type} here` };
    },
  });
  for (const p of players) {
    client.roster.add({ externalId: p, username: `user_${p}`, team: 'red', joinedAt: new Date().toISOString() });
    client.track({ type: 'join', externalId: p });
  }
  return client;
}

/**
 * Every visible action button of the page: scrolled into view, it lies inside the viewport's width and
 * inside its panel, and it is the element found at its own centre (not covered, not clipped). Also: the
 * page itself never scrolls sideways. Returns the problems found.
 */
/**
 * {@link actionsOutOfView} once the layout has settled after a viewport change: elements sized by script
 * (the charts' canvases follow a ResizeObserver) keep the previous width for a few frames, longer on a
 * busy machine, so the check is repeated for up to 10 s and the last answer is returned.
 */
async function settledProblems(page: Page): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  let problems = await actionsOutOfView(page);
  while (problems.length && Date.now() < deadline) {
    await page.waitForTimeout(250);
    problems = await actionsOutOfView(page);
  }
  return problems;
}

async function actionsOutOfView(page: Page): Promise<string[]> {
  const problems: string[] = [];
  const width = page.viewportSize()!.width;
  // Functions passed to evaluate run in the page; `globalThis` there is the window (no DOM types here).
  const pageWidth = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
  if (pageWidth > width) problems.push(`the page is ${pageWidth} px wide at a ${width} px viewport`);
  const buttons = page.locator('main button:visible');
  const n = await buttons.count();
  for (let i = 0; i < n; i++) {
    const b = buttons.nth(i);
    await b.scrollIntoViewIfNeeded();
    const found = await b.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const panel = el.closest('.panel')!.getBoundingClientRect();
      const doc = (globalThis as unknown as { document: { elementFromPoint(x: number, y: number): typeof el } }).document;
      const hit = doc.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return {
        label: `${el.getAttribute('data-test') ?? ''} "${(el.textContent ?? '').trim().slice(0, 30)}"`,
        left: r.left,
        right: r.right,
        inPanel: r.left >= panel.left - 0.5 && r.right <= panel.right + 0.5,
        onTop: !!hit && (hit === el || el.contains(hit)),
      };
    });
    if (found.left < 0 || found.right > width) problems.push(`${found.label} spans ${Math.round(found.left)}-${Math.round(found.right)} px of ${width}`);
    else if (!found.inPanel) problems.push(`${found.label} sticks out of its panel`);
    else if (!found.onTop) problems.push(`${found.label} is covered or clipped`);
  }
  if (n < 10) problems.push(`only ${n} action buttons visible: the page did not render its panels`);
  return problems;
}

describe('moderator console in a browser (end to end)', function () {
  this.timeout(300_000);
  let stack: Stack;
  let db: Db;
  let redis: AppRedis;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let workspaceId: string;
  let gameId: string;
  let emptyGameId: string;
  let denyDave: string;
  let key: string;
  const gameName = `console e2e ${Math.random().toString(36).slice(2, 8)}`;
  const fleet: GameClient[] = [];
  const runTag = Math.random().toString(36).slice(2, 8);
  const serverId = `e2e-${runTag}-a`;
  const liveRequests: string[] = [];
  const pageErrors: string[] = [];
  const prefix = process.env.REDIS_PREFIX!;

  /** POST doors/check signed with the game key, against the stack's game listener. */
  async function doorCheck(doorKey: string, externalId: string): Promise<{ decision: string; reason: string }> {
    const body = JSON.stringify({ doorKey, externalId, externalServerId: serverId, n: Math.random() });
    const ts = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${stack.url}/api/v1/game/doors/check`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'X-Service-Timestamp': ts, 'X-Service-Signature': sign(key.split('.')[1]!, ts, body), 'Content-Type': 'application/json' },
      body,
    });
    expect(res.status).to.equal(200);
    return (await res.json()) as { decision: string; reason: string };
  }

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get update && apt-get install -y chromium); CI installs it`);
    }
    db = createDb(process.env.DATABASE_URL!, 2);
    redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { name: 'e2e-test' });
    const ws = await createWorkspace(db, `console e2e ${runTag}`);
    workspaceId = ws.id;
    const game = await createGame(db, { workspaceId, name: gameName, heartbeatIntervalSeconds: 15 });
    gameId = game.id;
    emptyGameId = (await createGame(db, { workspaceId, name: `${gameName} (empty)`, heartbeatIntervalSeconds: 15 })).id;
    key = (await createKey(db, gameId, [...SCOPES], 'test')).key;
    const doorDeps = { db, redis, keySpace: new KeySpace(prefix) };
    await createDoor(doorDeps, { gameId, key: 'armory', name: 'Armory', kind: 'locker' }, 'test');
    await addPolicy(doorDeps, { gameId, doorKey: 'armory', effect: 'allow', subjectType: 'everyone' }, 'test');
    denyDave = (await addPolicy(doorDeps, { gameId, doorKey: 'armory', effect: 'deny', subjectType: 'users', subjectIds: ['dave'] }, 'test')).id;
    await createDoor(doorDeps, { gameId, key: 'gate', name: 'Front gate', defaultEffect: 'allow' }, 'test');

    stack = await Stack.start();
    fleet.push(simServer(stack.url, key, serverId, ['alice', 'bob', 'carol']), simServer(stack.url, key, `e2e-${runTag}-old`, ['dave']));
    for (const c of fleet) c.start();

    userDataDir = mkdtempSync(path.join(tmpdir(), 'gis-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1440, height: 1000 } });
    page = context.pages()[0] ?? (await context.newPage());
    // For the "picked the moment the list shows" test: a pick made in the same turn the game picker
    // renders, before the page's effects run (a MutationObserver fires before them), as a quick user or a
    // test driver can. Off unless the test leaves the game id in sessionStorage.
    await page.addInitScript({ content: PICK_ON_RENDER });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (r) => {
      if (/\/console\/api\/games\/[^/]+\/live(\?|$)/.test(r.url())) liveRequests.push(r.url());
    });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(stack?.logs());
  });

  after(async () => {
    await Promise.allSettled(fleet.map((c) => c.stop({ flush: false })));
    await context?.close().catch(() => undefined);
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await stack?.stop();
    if (workspaceId) {
      await db.command.deleteMany({ where: { gameId } });
      await db.auditLog.deleteMany({ where: { workspaceId } });
      await db.auditChainHead.deleteMany({ where: { workspaceId } });
      await db.workspace.deleteMany({ where: { id: workspaceId } });
    }
    await redis?.quit();
    await db?.$disconnect();
  });

  it('shows live servers by push; a kick issued from the CLI appears without a reload; a kick from the page reaches acked', async () => {
    // The token travels in the fragment, as the boot log prints it; the page keeps it in sessionStorage.
    await page.goto(`${stack.consoleUrl}/#token=${stack.consoleToken}`);
    expect(page.url()).to.not.include(stack.consoleToken);
    await page.click('[data-test=sign-in]');
    await page.selectOption('[data-test=game-picker]', gameId);

    // A server appears, with its stale sibling flagged; the views come over the live feed.
    const row = page.locator(`[data-test=server-row][data-server="${serverId}"]`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.innerText()).to.include('eu-west').and.include('1.2.0');
    await page.locator(`[data-test=server-row][data-server="e2e-${runTag}-old"] .badge.stale`).waitFor({ timeout: 30_000 });
    await page.locator('[data-test=live-mode][data-mode=push]').waitFor({ timeout: 10_000 });
    await row.click();
    await page.locator('[data-test=player-row][data-player="carol"]').waitFor({ timeout: 10_000 });
    const pollsBefore = liveRequests.length;

    // A kick from the CLI, in another process: the open console shows it, no reload, no polling.
    const issued = okJson<{ id: string }>(await runAdmin(['commands', 'issue', '--game', gameId, '--type', 'kick', '--user', 'carol', '--payload', '{"reason":"cli kick (e2e)"}', '--json'], prefix));
    const cliRow = page.locator(`[data-test=command-row][data-command="${issued.id}"]`);
    await cliRow.waitFor({ timeout: 10_000 });
    expect(await cliRow.getAttribute('data-transitions')).to.include('pending');
    await page.locator(`[data-test=command-row][data-command="${issued.id}"][data-status=acked]`).waitFor({ timeout: 90_000 });
    expect(await page.locator(`[data-test=command-row][data-command="${issued.id}"]`).getAttribute('data-transitions')).to.equal('pending,dispatched,acked');
    await page.locator('[data-test=player-row][data-player="carol"]').waitFor({ state: 'detached', timeout: 40_000 });
    expect(liveRequests.slice(pollsBefore), 'no polling while the live feed is up').to.deep.equal([]);
    expect(await page.locator('[data-test=live-mode]').getAttribute('data-mode')).to.equal('push');

    // A kick from the page, as before.
    const bob = page.locator('[data-test=player-row][data-player="bob"]');
    await bob.locator('[data-test=action-kick]').click();
    await page.fill('[data-test=action-form] [data-test=reason]', 'griefing (e2e)');
    await page.click('[data-test=action-form] [data-test=send]');
    await page.locator('[data-test=command-row][data-type=kick][data-status=acked]').nth(1).waitFor({ timeout: 90_000 });
    await page.locator('[data-test=player-row][data-player="bob"]').waitFor({ state: 'detached', timeout: 40_000 });
    expect(fleet[0]!.roster.has('bob')).to.equal(false);
    const fromPage = await db.command.findFirst({ where: { gameId, type: 'kick', externalId: 'bob' } });
    // Signed in with the operator's break-glass token: recorded as the operator (issue #31).
    expect(fromPage?.issuedBy).to.equal('operator');
    // The health panel renders the dead letters (none here: every row was stored).
    expect(await page.locator('[data-test=dead-letters]').innerText({ timeout: 10_000 })).to.include('No dead letters');
    expect(pageErrors).to.deep.equal([]);
  });

  it('a denial in the access log links to the policy that decided it', async () => {
    expect(await doorCheck('armory', 'dave')).to.include({ decision: 'deny', reason: `policy_deny:${denyDave}` });
    expect(await doorCheck('armory', 'alice')).to.include({ decision: 'allow' });
    const log = page.locator('[data-test=access-log]');
    await log.locator('[data-test=filter-decision]').selectOption('deny');
    await log.locator('[data-test=filter-user]').fill('dave');
    // The workers flush the access log about a second after the check: ask until it is there.
    const daveRow = log.locator('[data-test=access-row][data-user=dave][data-decision=deny]');
    for (let i = 0; i < 30 && !(await daveRow.count()); i++) {
      await log.locator('[data-test=filter-apply]').click();
      await page.waitForTimeout(500);
    }
    expect(await daveRow.locator('[data-test=access-reason]').innerText()).to.equal(`policy_deny:${denyDave}`);
    expect(await log.locator('[data-test=access-row][data-user=alice]').count()).to.equal(0);
    await daveRow.locator('[data-test=policy-link]').click();
    const card = page.locator(`[data-test=policy-card][data-policy="${denyDave}"]`);
    await card.locator('[data-test=policy-effect]').waitFor({ timeout: 10_000 });
    expect(await card.locator('[data-test=policy-effect]').innerText()).to.equal('deny');
    expect(await card.innerText()).to.include('dave');
  });

  it('lockdown asks first, naming the game and the number of doors; cancel changes nothing', async () => {
    const doors = page.locator('[data-test=doors]');
    await doors.locator('[data-test=lockdown]').click();
    const question = await page.locator('[data-test=lockdown-question]').innerText();
    expect(question).to.include(gameName).and.include('all 2 doors locked');
    await page.click('[data-test=lockdown-no]');
    expect(await page.locator('[data-test=lockdown-confirm]').count()).to.equal(0);
    expect(await page.locator('[data-test=door-row][data-state=locked]').count()).to.equal(0);

    await doors.locator('[data-test=lockdown]').click();
    await page.click('[data-test=lockdown-yes]');
    await page.locator('[data-test=doors][data-lockdown=true]').waitFor({ timeout: 10_000 });
    expect(await page.locator('[data-test=door-row][data-state=locked]').count()).to.equal(2);
    expect(await doorCheck('gate', 'alice')).to.include({ decision: 'deny', reason: 'forced_locked' });

    await doors.locator('[data-test=lockdown]').click();
    expect(await page.locator('[data-test=lockdown-question]').innerText()).to.include(gameName).and.include('all 2 doors to auto');
    await page.click('[data-test=lockdown-yes]');
    await page.locator('[data-test=doors][data-lockdown=false]').waitFor({ timeout: 10_000 });
    expect(await page.locator('[data-test=door-row][data-state=auto]').count()).to.equal(2);
  });

  it('every panel fits at 1280 and 1440 px: every action button lies inside the viewport and its panel', async () => {
    // A ban gives the bans table its lift button; the roster of the first server is open.
    okJson(await runAdmin(['bans', 'create', '--workspace', workspaceId, '--user', 'zed-with-a-rather-long-external-id-0123456789', '--scope', 'game', '--game', gameId, '--reason', 'a long reason that should wrap inside its cell rather than widen the table', '--json'], prefix));
    await page.locator('[data-test=ban-row]').first().waitFor({ timeout: 15_000 });
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.locator('[data-test=player-row]').first().waitFor({ timeout: 10_000 });
      await page.locator('[data-test=door-row]').first().waitFor({ timeout: 10_000 });
      expect(await settledProblems(page), `at ${width} px`).to.deep.equal([]);
      // The command status column too.
      for (const status of await page.locator('[data-test=command-status]').all()) {
        await status.scrollIntoViewIfNeeded();
        const box = (await status.boundingBox())!;
        expect(box.x + box.width, `status at ${width} px`).to.be.at.most(width);
      }
      await page.screenshot({ path: path.join(ARTIFACTS, `console-e2e-${width}.png`), fullPage: true });
    }
  });

  it('a game picked the moment the list of games shows stays picked: the first-game default does not replace it', async () => {
    // The list is newest first, so the default would be the empty game created after this one.
    await page.evaluate(`sessionStorage.setItem('e2e:pick-on-render', ${JSON.stringify(gameId)})`);
    await page.reload();
    await page.locator(`[data-test=server-row][data-server="${serverId}"]`).waitFor({ timeout: 15_000 });
    // The live view showed the picked game's server; the picker and the view still show it a moment later.
    await page.waitForTimeout(1000);
    expect(await page.locator('[data-test=game-picker]').inputValue()).to.equal(gameId);
    expect(await page.locator(`[data-test=server-row][data-server="${serverId}"]`).count()).to.equal(1);
  });

  it('falls back to polling while the live feed is down, and back to push when it returns', async () => {
    await page.route('**/live/stream*', (route) => route.abort());
    await page.reload();
    await page.selectOption('[data-test=game-picker]', gameId);
    await page.locator('[data-test=live-mode][data-mode=polling]').waitFor({ timeout: 15_000 });
    const polled = liveRequests.length;
    await page.locator(`[data-test=server-row][data-server="${serverId}"]`).waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-test=live-mode]').innerText()).to.include('polling');

    await page.unroute('**/live/stream*');
    await page.locator('[data-test=live-mode][data-mode=push]').waitFor({ timeout: 30_000 });
    expect(liveRequests.length, 'it polled while the feed was down').to.be.greaterThan(polled);
    const pollsAtPush = liveRequests.length;
    const issued = okJson<{ id: string }>(await runAdmin(['commands', 'issue', '--game', gameId, '--type', 'message', '--server', serverId, '--payload', '{"text":"back by push"}', '--json'], prefix));
    await page.locator(`[data-test=command-row][data-command="${issued.id}"]`).waitFor({ timeout: 10_000 });
    expect(liveRequests.length, 'polling stopped once the feed was back').to.equal(pollsAtPush);
  });

  it('an empty chart says "no data yet"', async () => {
    await page.selectOption('[data-test=game-picker]', emptyGameId);
    await page.locator('[data-test=chart-players-empty]').waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-test=chart-players-empty]').innerText()).to.equal('no data yet');
    expect(await page.locator('[data-test=chart-events-empty]').innerText()).to.equal('no data yet');
    expect(await page.locator('canvas').count()).to.equal(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'console-e2e-empty.png'), fullPage: true });
    expect(pageErrors).to.deep.equal([]);
  });
});
