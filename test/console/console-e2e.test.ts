/**
 * The moderator console end to end in a real browser (issue #7): a real stack (API + console listener +
 * workers as child processes), a small simulated fleet of reference clients, and Debian's headless
 * Chromium driven by playwright-core. A moderator signs in, sees a server appear, opens its roster,
 * kicks a player and sees the command go to `acked`; the game really removed the player. A screenshot
 * lands in test-artifacts/ (git-ignored).
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
import { createGame, createWorkspace } from '../../src/games/game-service.js';
import { createKey } from '../../src/auth/key-service.js';
import { SCOPES } from '../../src/auth/scopes.js';
import { GameClient, type CommandEntry, type CommandOutcome } from '@gis/client';
import { ROOT, Stack } from '../support/stack.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ARTIFACTS = path.join(ROOT, 'test-artifacts');

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

describe('moderator console in a browser (end to end)', function () {
  this.timeout(180_000);
  let stack: Stack;
  let db: Db;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let workspaceId: string;
  let gameId: string;
  const fleet: GameClient[] = [];
  const runTag = Math.random().toString(36).slice(2, 8);
  const serverId = `e2e-${runTag}-a`;

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get update && apt-get install -y chromium); CI installs it`);
    }
    db = createDb(process.env.DATABASE_URL!, 2);
    const ws = await createWorkspace(db, `console e2e ${runTag}`);
    workspaceId = ws.id;
    const game = await createGame(db, { workspaceId, name: `console e2e ${runTag}`, heartbeatIntervalSeconds: 15 });
    gameId = game.id;
    const { key } = await createKey(db, gameId, [...SCOPES], 'test');
    stack = await Stack.start();
    fleet.push(simServer(stack.url, key, serverId, ['alice', 'bob', 'carol']), simServer(stack.url, key, `e2e-${runTag}-old`, ['dave']));
    for (const c of fleet) c.start();

    userDataDir = mkdtempSync(path.join(tmpdir(), 'gis-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1400, height: 1100 } });
    page = context.pages()[0] ?? (await context.newPage());
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
      await db.auditLog.deleteMany({ where: { workspaceId } });
      await db.workspace.deleteMany({ where: { id: workspaceId } });
    }
    await db?.$disconnect();
  });

  it('shows a live server, kicks a player and shows the command reach acked', async () => {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    // The token travels in the fragment, as the boot log prints it; the page keeps it in sessionStorage.
    await page.goto(`${stack.consoleUrl}/#token=${stack.consoleToken}`);
    expect(page.url()).to.not.include(stack.consoleToken);
    await page.fill('[data-test=moderator]', 'mod-e2e');
    await page.click('[data-test=sign-in]');
    await page.selectOption('[data-test=game-picker]', gameId);

    // A server appears, with its stale sibling flagged.
    const row = page.locator(`[data-test=server-row][data-server="${serverId}"]`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.innerText()).to.include('eu-west').and.include('1.2.0');
    await page.locator(`[data-test=server-row][data-server="e2e-${runTag}-old"] .badge.stale`).waitFor({ timeout: 30_000 });

    // Its roster, with session lengths; kick bob.
    await row.click();
    const bob = page.locator('[data-test=player-row][data-player="bob"]');
    await bob.waitFor({ timeout: 10_000 });
    await bob.locator('[data-test=action-kick]').click();
    await page.fill('[data-test=action-form] [data-test=reason]', 'griefing (e2e)');
    await page.click('[data-test=action-form] [data-test=send]');

    // The command moves through its states, live, to acked (delivery and ack ride the 15 s heartbeats).
    const command = page.locator('[data-test=command-row][data-type=kick]');
    await command.first().waitFor({ timeout: 10_000 });
    await page.locator('[data-test=command-row][data-type=kick][data-status=acked]').waitFor({ timeout: 90_000 });
    await page.locator('[data-test=player-row][data-player="bob"]').waitFor({ state: 'detached', timeout: 40_000 });
    expect(fleet[0]!.roster.has('bob')).to.equal(false);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'console-e2e.png'), fullPage: true });

    const issued = await db.command.findFirst({ where: { gameId, type: 'kick' } });
    expect(issued?.issuedBy).to.equal('console:mod-e2e');
    expect(issued?.externalId).to.equal('bob');
    expect(pageErrors).to.deep.equal([]);
  });
});
