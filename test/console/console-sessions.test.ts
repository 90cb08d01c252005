/**
 * Issue #31, sessions: a personal access token is exchanged for a server-side session (Redis) whose
 * cookie is `HttpOnly; SameSite=Strict; Path=/` (+ `Secure` over TLS); changes made with the cookie need
 * the session's CSRF token and a same-origin request (a cross-site form POST is refused); sign-out ends
 * the session; idle and absolute expiry; disabling or rotating ends sessions, a role change applies to
 * them at once; a tampered cookie is a 401 envelope.
 */
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { Registry } from 'prom-client';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { moderator, moderatorStore } from '../support/moderators.js';
import { createConsoleApp } from '../../src/adapters/console/console-app.js';
import { createConsoleAuth, SESSION_COOKIE, type ConsoleAuth } from '../../src/adapters/console/console-auth.js';
import { createConsoleServices, type ConsoleServices } from '../../src/adapters/console/console-services.js';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { ABSOLUTE_MS, ConsoleSessions, IDLE_MS } from '../../src/auth/moderators/console-sessions.js';
import { rotateModeratorToken, setModeratorDisabled, setModeratorRole, type IssuedModerator } from '../../src/auth/moderators/moderator-accounts.js';

const OPERATOR = 'sessions-test-operator-token-0123456789';
const API = '/console/api';

describe('console sessions, cookies and CSRF (issue #31)', function () {
  this.timeout(60_000);
  const h = new Harness();
  let services: ConsoleServices;
  let auth: ConsoleAuth;
  let app: Express;
  let g: TestGame;

  /** Signs `m` in; resolves to the cookie header value, the Set-Cookie line and the CSRF token. */
  async function signIn(m: IssuedModerator, target: Express = app) {
    const res = await request(target).post(`${API}/session`).set('Origin', 'http://127.0.0.1').set('Host', '127.0.0.1').send({ token: m.token });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const setCookie = (res.headers['set-cookie'] as unknown as string[])[0]!;
    return { cookie: setCookie.split(';')[0]!, setCookie, csrf: res.body.csrfToken as string, body: res.body };
  }
  const kick = (cookie: string, headers: Record<string, string>) => {
    let req = request(app).post(`${API}/games/${g.gameId}/commands`).set('Cookie', cookie).set('Host', '127.0.0.1');
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return req.send({ type: 'kick', target: { externalId: 'p1' }, payload: { reason: 'r' } });
  };
  const live = (cookie: string) => request(app).get(`${API}/games/${g.gameId}/live`).set('Cookie', cookie);

  before(async () => {
    services = createConsoleServices({ db: h.db, redis: h.redis, keySpace: h.keySpace });
    auth = createConsoleAuth(OPERATOR, services);
    app = createConsoleApp({ services, token: OPERATOR, metrics: new Registry(), openapi: buildOpenApiDocument(), auth });
    g = await h.game();
    await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'srv-1' }));
  });
  after(async () => {
    await services.close();
    await h.close();
  });

  it('exchanges the token for a session cookie: HttpOnly, SameSite=Strict, Path=/, no Secure over plain HTTP; the session names the account', async () => {
    const m = await moderator(h, g.workspaceId, 'moderator', 'Ann');
    const s = await signIn(m);
    expect(s.setCookie).to.match(new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43};`));
    const attrs = s.setCookie.split(';').slice(1).map((a) => a.trim());
    expect(attrs).to.include.members(['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${ABSOLUTE_MS / 1000}`]);
    expect(attrs).to.not.include('Secure');
    expect(s.setCookie).to.not.include(m.token.split('.')[1]!);
    expect(s.body.caller).to.deep.include({ kind: 'moderator', via: 'token' });
    expect(s.body.caller.accounts[0]).to.deep.include({ id: m.id, name: 'Ann', role: 'moderator', workspaceId: g.workspaceId });
    expect(s.body.caller.accounts[0].permissions).to.include('commands.issue').and.not.include('doors.force');
    const me = await request(app).get(`${API}/session`).set('Cookie', s.cookie);
    expect(me.status).to.equal(200);
    expect(me.body.csrfToken).to.equal(s.csrf);
    // Held in Redis under the digest of the cookie value, with the idle expiry.
    const keys = await h.redis.keys(`${h.keySpace.global.consoleSession('*')}`);
    expect(keys.length).to.be.greaterThan(0);
    const ttl = await h.redis.pttl(keys[0]!);
    expect(ttl).to.be.greaterThan(0).and.at.most(IDLE_MS);
    expect(keys.some((k) => k.includes(s.cookie.split('=')[1]!))).to.equal(false);
  });

  it('marks the cookie Secure when the console is served over TLS', async () => {
    const tls = createConsoleApp({ services, token: OPERATOR, metrics: new Registry(), openapi: buildOpenApiDocument(), auth, secureCookies: true });
    const s = await signIn(await moderator(h, g.workspaceId, 'viewer'), tls);
    expect(s.setCookie.split(';').map((a) => a.trim())).to.include('Secure');
  });

  it('refuses a change by cookie without the CSRF token, from another site, or as a cross-site form POST; accepts it from the page', async () => {
    const m = await moderator(h, g.workspaceId, 'moderator');
    const s = await signIn(m);
    const cases: [Record<string, string>, string][] = [
      [{}, 'no CSRF token'],
      [{ 'X-CSRF-Token': 'x'.repeat(43) }, 'wrong CSRF token'],
      [{ 'X-CSRF-Token': s.csrf, 'Sec-Fetch-Site': 'cross-site' }, 'cross-site fetch'],
      [{ 'X-CSRF-Token': s.csrf, Origin: 'https://evil.example' }, 'foreign Origin'],
    ];
    for (const [headers, what] of cases) {
      const res = await kick(s.cookie, headers);
      expect(res.status, what).to.equal(403);
      expect(res.body.error.code, what).to.equal('csrf_refused');
    }
    // What a form on another site submits: urlencoded, its Origin, Sec-Fetch-Site cross-site, the cookie.
    const form = await request(app)
      .post(`${API}/games/${g.gameId}/bans`)
      .set('Cookie', s.cookie)
      .set('Origin', 'https://evil.example')
      .set('Sec-Fetch-Site', 'cross-site')
      .type('form')
      .send('externalId=p1&scope=workspace&reason=pwned');
    expect(form.status).to.equal(403);
    expect(form.body.error.code).to.equal('csrf_refused');
    expect(await h.db.ban.count({ where: { workspaceId: g.workspaceId, reason: 'pwned' } })).to.equal(0);
    // Signing a victim in from another site is refused too.
    const login = await request(app).post(`${API}/session`).set('Sec-Fetch-Site', 'cross-site').send({ token: m.token });
    expect([login.status, login.body.error.code]).to.deep.equal([403, 'csrf_refused']);
    const ok = await kick(s.cookie, { 'X-CSRF-Token': s.csrf, 'Sec-Fetch-Site': 'same-origin', Origin: 'http://127.0.0.1' });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    const shown = (await live(s.cookie)).body.commands.find((c: { id: string }) => c.id === ok.body.command.id);
    expect(shown.issuedBy).to.equal(`moderator:${m.id} (${m.name})`);
  });

  it('signs out: the session is gone from Redis and its cookie answers 401 session_expired', async () => {
    const s = await signIn(await moderator(h, g.workspaceId, 'viewer'));
    expect((await live(s.cookie)).status).to.equal(200);
    const refused = await request(app).delete(`${API}/session`).set('Cookie', s.cookie);
    expect(refused.status).to.equal(403);
    const out = await request(app).delete(`${API}/session`).set('Cookie', s.cookie).set('X-CSRF-Token', s.csrf);
    expect(out.status).to.equal(204);
    expect((out.headers['set-cookie'] as unknown as string[])[0]).to.match(new RegExp(`^${SESSION_COOKIE}=;.*Expires=Thu, 01 Jan 1970`));
    const after = await live(s.cookie);
    expect([after.status, after.body.error.code]).to.deep.equal([401, 'session_expired']);
  });

  it('answers a tampered, unknown or malformed cookie with 401 session_expired, never a 500', async () => {
    const s = await signIn(await moderator(h, g.workspaceId, 'viewer'));
    const value = s.cookie.split('=')[1]!;
    const tampered = `${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`;
    for (const cookie of [`${SESSION_COOKIE}=${tampered}`, `${SESSION_COOKIE}=x`, `${SESSION_COOKIE}=${'%'.repeat(50)}`]) {
      const res = await live(cookie);
      expect([res.status, res.body.error.code], cookie).to.deep.equal([401, 'session_expired']);
      expect(res.body.error.requestId).to.be.a('string');
    }
    const bad = await request(app).post(`${API}/session`).send({ token: 'gmod_nope' });
    expect([bad.status, bad.body.error.code]).to.deep.equal([401, 'malformed_token']);
    const empty = await request(app).post(`${API}/session`).send({});
    expect([empty.status, empty.body.error.code]).to.deep.equal([400, 'invalid_request']);
  });

  it('ends a session after its absolute lifetime whatever its use', async () => {
    const m = await moderator(h, g.workspaceId, 'viewer');
    const sessions = new ConsoleSessions(h.redis, h.keySpace);
    const { id } = await sessions.create({ via: 'token', accounts: [{ id: m.id, epoch: 0 }] }, Date.now() - ABSOLUTE_MS - 1);
    const res = await live(`${SESSION_COOKIE}=${id}`);
    expect([res.status, res.body.error.code]).to.deep.equal([401, 'session_expired']);
    const fresh = await sessions.create({ via: 'token', accounts: [{ id: m.id, epoch: 0 }] }, Date.now() - ABSOLUTE_MS + 60_000);
    expect((await live(`${SESSION_COOKIE}=${fresh.id}`)).status).to.equal(200);
  });

  it('ends the sessions of a disabled account and of a rotated token; a role change applies to an open session', async () => {
    const store = moderatorStore(h);
    const a = await moderator(h, g.workspaceId, 'moderator');
    const sa = await signIn(a);
    await setModeratorRole(store, a.id, 'viewer', 'test');
    auth.invalidate(`moderator:${a.id}`);
    const demoted = await kick(sa.cookie, { 'X-CSRF-Token': sa.csrf });
    expect([demoted.status, demoted.body.error.code]).to.deep.equal([403, 'forbidden']);
    await setModeratorDisabled(store, a.id, true, 'test');
    auth.invalidate(`moderator:${a.id}`);
    const disabled = await live(sa.cookie);
    expect([disabled.status, disabled.body.error.code]).to.deep.equal([401, 'session_revoked']);

    const b = await moderator(h, g.workspaceId, 'viewer');
    const sb = await signIn(b);
    const rotated = await rotateModeratorToken(store, b.id, 'test');
    auth.invalidate(`moderator:${b.id}`);
    expect((await live(sb.cookie)).body.error.code).to.equal('session_revoked');
    const old = await request(app).get(`${API}/games/${g.gameId}/live`).set('Authorization', `Bearer ${b.token}`);
    expect([old.status, old.body.error.code]).to.deep.equal([401, 'unknown_token']);
    expect((await request(app).get(`${API}/games/${g.gameId}/live`).set('Authorization', `Bearer ${rotated.token}`)).status).to.equal(200);
  });
});
