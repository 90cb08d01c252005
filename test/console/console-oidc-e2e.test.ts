/**
 * Issue #31, sign-in with OpenID Connect end to end in Chromium: a local OpenID provider (the
 * `oidc-provider` package, started here, no network), a real API process whose console is configured with
 * OIDC_ISSUER / OIDC_CLIENT_ID / OIDC_CLIENT_SECRET, and Debian's headless Chromium (playwright-core).
 * A person invited with a one-time code signs in at the provider and lands in the console as their
 * moderator account (the identity is linked, the session cookie is HttpOnly and SameSite=Strict, the page
 * names them and their role and shows an admin the workspace's moderators); the
 * linked identity signs in again without a code; an unlinked identity, a reused code and a forged state
 * land on the sign-in page with the reason, and no session.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import Provider from 'oidc-provider';
import { freePort } from '../../scripts/support/free-port.js';
import { startNodeScript, type ManagedChild } from '../../scripts/support/child-process.js';
import { Harness, type TestGame } from '../support/harness.js';
import { moderator } from '../support/moderators.js';
import { createInvitation } from '../../src/auth/moderators/moderator-invitations.js';
import { SESSION_COOKIE } from '../../src/adapters/console/console-auth.js';
import type { IssuedModerator } from '../../src/auth/moderators/moderator-accounts.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const CLIENT = { id: 'gis-console', secret: 'test-client-secret-0123456789abcdef' };

describe('console sign-in with OpenID Connect in a browser (issue #31)', function () {
  this.timeout(240_000);
  let h: Harness;
  let g: TestGame;
  let api: ManagedChild;
  let idp: Server;
  let issuer: string;
  let consoleUrl: string;
  let browser: Browser;
  let userDataDir: string;
  let ola: IssuedModerator;
  let kai: IssuedModerator;
  let code: string;

  /** Signs in at the provider as `login` from a fresh browser context, starting at `start`; returns the page where it ends. */
  async function signIn(login: string, start: string): Promise<Page> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${consoleUrl}${start}`);
    await page.fill('input[name=login]', login);
    await page.fill('input[name=password]', 'any (the development login takes any)');
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    // The provider asks for consent on a first sign-in of this browser.
    if (!page.url().startsWith(consoleUrl)) {
      await page.locator('input[name=prompt][value=consent]').waitFor({ state: 'attached', timeout: 30_000 });
      await Promise.all([page.waitForURL((u) => u.href.startsWith(consoleUrl), { timeout: 30_000 }), page.click('button[type=submit]')]);
    }
    return page;
  }
  const whoAmI = (page: Page) => page.evaluate(async () => {
    const res = await fetch('/console/api/session');
    return { status: res.status, body: (await res.json()) as { caller: { kind: string; via: string; accounts: { id: string; role: string }[] } } };
  });

  before(async function () {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
    h = new Harness();
    g = await h.game();
    ola = await moderator(h, g.workspaceId, 'admin', 'Ola');
    code = (await createInvitation(h.db, ola.id, 'test')).code;
    kai = await moderator(h, g.workspaceId, 'moderator', 'Kai');
    const [idpPort, port, consolePort] = [await freePort(), await freePort(), await freePort()];
    issuer = `http://127.0.0.1:${idpPort}`;
    consoleUrl = `http://127.0.0.1:${consolePort}`;
    const provider = new Provider(issuer, {
      clients: [{ client_id: CLIENT.id, client_secret: CLIENT.secret, redirect_uris: [`${consoleUrl}/console/auth/oidc/callback`], token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], response_types: ['code'] }],
      features: { devInteractions: { enabled: true } },
    });
    idp = provider.listen(idpPort);
    api = startNodeScript('api-oidc', 'src/server.ts', {
      env: {
        LOG_LEVEL: 'warn',
        DB_POOL_SIZE: '3',
        HOST: '127.0.0.1',
        PORT: String(port),
        CONSOLE_PORT: String(consolePort),
        CONSOLE_TOKEN: 'oidc-e2e-operator-token-0123456789',
        CONSOLE_PUBLIC_URL: consoleUrl,
        OIDC_ISSUER: issuer,
        OIDC_CLIENT_ID: CLIENT.id,
        OIDC_CLIENT_SECRET: CLIENT.secret,
      },
      echo: 'none',
    });
    await api.waitForUrl(`${consoleUrl}/healthz`, 90_000);
    userDataDir = mkdtempSync(path.join(tmpdir(), 'gis-chromium-oidc-'));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close().catch(() => undefined);
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await api?.stop();
    await new Promise((r) => (idp ? idp.close(r) : r(undefined)));
    await h?.close();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(api?.output());
  });

  it('an invited person signs in at the provider and lands in the console as their account; the identity is linked', async () => {
    expect(await (await fetch(`${consoleUrl}/console/auth/providers`)).json()).to.deep.include({ oidc: true });
    const page = await signIn('roblox-user-42', `/console/auth/oidc/start?invite=${code}`);
    expect(new URL(page.url()).search).to.equal('');
    const me = await whoAmI(page);
    expect(me.status).to.equal(200);
    expect(me.body.caller).to.deep.include({ kind: 'moderator', via: 'oidc' });
    expect(me.body.caller.accounts.map((a) => [a.id, a.role])).to.deep.equal([[ola.id, 'admin']]);
    const cookie = (await page.context().cookies()).find((c) => c.name === SESSION_COOKIE)!;
    expect(cookie).to.deep.include({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false });
    const identities = await h.db.moderatorIdentity.findMany({ where: { moderatorId: ola.id } });
    expect(identities.map((i) => [i.issuer, i.subject])).to.deep.equal([[`${issuer}`, 'roblox-user-42']]);
    expect((await h.db.moderatorInvitation.findFirstOrThrow({ where: { moderatorId: ola.id } })).usedAt).to.not.equal(null);
    // The page says who is signed in and, to a workspace admin, shows the workspace's moderators.
    expect(await page.locator('[data-test=me]').innerText({ timeout: 15_000 })).to.include('Ola — admin');
    await page.locator(`[data-test=moderator-row][data-moderator="${ola.id}"]`).waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-test=game-view]').getAttribute('data-role')).to.equal('admin');
    await page.context().close();
  });

  it('the linked identity signs in again without a code', async () => {
    const page = await signIn('roblox-user-42', '/console/auth/oidc/start');
    expect((await whoAmI(page)).body.caller.accounts.map((a) => a.id)).to.deep.equal([ola.id]);
    await page.context().close();
  });

  it('the admin changes the heartbeat interval, rotates a moderator\'s token and invites them from the page; the new token works, the old is refused, the invitation signs them in', async () => {
    const page = await signIn('roblox-user-42', '/console/auth/oidc/start');
    const row = page.locator(`[data-test=moderator-row][data-moderator="${kai.id}"]`);
    await row.waitFor({ timeout: 15_000 });
    page.once('dialog', (d) => void d.accept());
    await row.locator('[data-test=rotate-token]').click();
    const issued = await page.locator('[data-test=issued-token]').innerText({ timeout: 15_000 });
    expect(issued).to.include('Token for Kai (shown once)');
    const token = /gmod_[a-z0-9]{12}\.[A-Za-z0-9_-]+/.exec(issued)?.[0];
    expect(token).to.be.a('string').and.not.equal(kai.token);
    const asKai = async (bearer: string) => (await fetch(`${consoleUrl}/console/api/session`, { headers: { Authorization: `Bearer ${bearer}` } })).status;
    expect(await asKai(token!)).to.equal(200);
    expect(await asKai(kai.token)).to.equal(401);
    expect(await h.db.auditLog.count({ where: { action: 'moderator.rotate-token', actor: `moderator:${ola.id} (Ola)` } })).to.equal(1);

    // Game settings: the admin changes the heartbeat interval, recorded as Ola.
    await page.fill('[data-test=heartbeat-interval]', '30');
    await page.click('[data-test=save-settings]');
    expect(await page.locator('[data-test=settings-result]').innerText({ timeout: 15_000 })).to.include('30 s');
    expect((await h.db.game.findUniqueOrThrow({ where: { id: g.gameId } })).heartbeatIntervalSeconds).to.equal(30);
    expect(await h.db.auditLog.count({ where: { gameId: g.gameId, action: 'game.set-interval', actor: `moderator:${ola.id} (Ola)` } })).to.equal(1);

    await row.locator('[data-test=invite]').click();
    const invite = await page.locator('[data-test=invitation-code]').innerText({ timeout: 15_000 });
    expect(await h.db.moderatorInvitation.count({ where: { moderatorId: kai.id, usedAt: null } })).to.equal(1);
    await page.context().close();
    const kaiPage = await signIn('roblox-user-77', `/console/auth/oidc/start?invite=${invite}`);
    expect((await whoAmI(kaiPage)).body.caller.accounts.map((a) => [a.id, a.role])).to.deep.equal([[kai.id, 'moderator']]);
    await kaiPage.context().close();
  });

  it('an unlinked identity, a reused invitation and a forged state end on the sign-in page with the reason, without a session', async () => {
    for (const [login, start] of [['stranger', '/console/auth/oidc/start'], ['someone-else', `/console/auth/oidc/start?invite=${code}`]]) {
      const page = await signIn(login!, start!);
      expect(new URL(page.url()).searchParams.get('signin_error'), login).to.equal('identity_not_linked');
      expect((await whoAmI(page)).status).to.equal(401);
      expect((await page.context().cookies()).some((c) => c.name === SESSION_COOKIE)).to.equal(false);
      await page.context().close();
    }
    const forged = await fetch(`${consoleUrl}/console/auth/oidc/callback?code=abc&state=forged-state`, { redirect: 'manual' });
    expect(forged.status).to.equal(302);
    expect(forged.headers.get('location')).to.equal('/?signin_error=invalid_state');
    expect(forged.headers.get('set-cookie')).to.equal(null);
    expect(await h.db.moderatorIdentity.count({ where: { subject: { in: ['stranger', 'someone-else'] } } })).to.equal(0);
  });
});
