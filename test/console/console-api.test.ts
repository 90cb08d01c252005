/**
 * The console listener's API (issue #7), against the real Redis and Postgres: operator token, live
 * servers and roster, moderator actions through the commands service, doors and lockdown, bans, ingest
 * health, charts, the OpenAPI document, and /metrics. The browser test (console-e2e.test.ts) drives the
 * page itself.
 */
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { Harness, heartbeatBody, event, type TestGame } from '../support/harness.js';
import { createApp } from '../../src/app.js';
import { createConsoleApp } from '../../src/adapters/console/console-app.js';
import { createConsoleServices, type ConsoleServices } from '../../src/adapters/console/console-services.js';
import { ApiMetrics } from '../../src/adapters/metrics/api-metrics.js';
import { registerScrapeMetrics } from '../../src/adapters/metrics/scrape-metrics.js';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { createDoor } from '../../src/doors/door-admin-service.js';
import { THROTTLING_WARNING } from '../../src/limits/ingest-health.js';
import { DeadLetters } from '../../src/store/dead-letters.js';
import { quotaCounterField } from '../support/quota-counters.js';

const TOKEN = 'test-operator-token-0123456789abcdef';
const API = '/console/api';

describe('console API', () => {
  const h = new Harness();
  let services: ConsoleServices;
  let consoleApp: Express;
  let metrics: ApiMetrics;
  let closeScrape: () => Promise<void>;
  let g: TestGame;

  const get = (path: string) => request(consoleApp).get(path).set('Authorization', `Bearer ${TOKEN}`);
  const post = (path: string, body?: object, moderator: string | null = 'alice') => {
    const req = request(consoleApp).post(path).set('Authorization', `Bearer ${TOKEN}`);
    if (moderator) req.set('X-Moderator', moderator);
    return body === undefined ? req : req.send(body);
  };

  before(async () => {
    services = createConsoleServices({ db: h.db, redis: h.redis, keySpace: h.keySpace });
    metrics = new ApiMetrics({ defaultMetrics: false });
    closeScrape = registerScrapeMetrics(metrics.registry, { db: h.db, redis: h.redis, keySpace: h.keySpace, queueNames: ['{flush-events}'] });
    consoleApp = createConsoleApp({ services, token: TOKEN, metrics: metrics.registry, openapi: buildOpenApiDocument() });
    g = await h.game();
  });
  after(async () => {
    await services.close();
    await closeScrape();
    await h.close();
  });

  describe('operator token', () => {
    it('refuses the API and /metrics without the token or with a wrong one (401 envelope)', async () => {
      for (const res of [
        await request(consoleApp).get(`${API}/games`),
        await request(consoleApp).get(`${API}/games`).set('Authorization', 'Bearer wrong-token'),
        await request(consoleApp).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`),
      ]) {
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('console_unauthorized');
        expect(res.body.error.requestId).to.be.a('string');
        expect(res.body.serverTime).to.be.a('string');
      }
    });

    it('serves the page, its modules and the OpenAPI document without the token, under a strict CSP', async () => {
      const page = await request(consoleApp).get('/');
      expect(page.status).to.equal(200);
      expect(page.text).to.include('<script type="importmap">');
      expect(page.headers['content-security-policy']).to.match(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
      expect(page.headers['x-frame-options']).to.equal('DENY');
      expect((await request(consoleApp).get('/assets/app.js')).status).to.equal(200);
      expect((await request(consoleApp).get('/vendor/preact.mjs')).status).to.equal(200);
      expect((await request(consoleApp).get('/vendor/chart.js/chunks/index.js')).status).to.equal(200);
      expect((await request(consoleApp).get('/vendor/package.json')).status).to.equal(404);
      const doc = await request(consoleApp).get('/openapi.json');
      expect(doc.body).to.deep.equal(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    });
  });

  describe('live view and moderator actions', () => {
    it('lists the game, its live servers (stale sdk flagged) and a roster with session lengths', async () => {
      await h.heartbeat(g, heartbeatBody(['p1', 'p2'], { externalServerId: 'srv-new', sdkVersion: '2.0.0', region: 'us-east' }));
      await h.heartbeat(g, heartbeatBody(['p3'], { externalServerId: 'srv-old', sdkVersion: '1.9.9' }));
      const games = await get(`${API}/games`);
      expect(games.body.games.map((x: { id: string }) => x.id)).to.include(g.gameId);
      const live = await get(`${API}/games/${g.gameId}/live?server=srv-new`);
      expect(live.status).to.equal(200);
      const byId = Object.fromEntries(live.body.servers.map((s: { externalServerId: string }) => [s.externalServerId, s]));
      expect(byId['srv-new']).to.include({ region: 'us-east', playerCount: 2, sdkVersion: '2.0.0', stale: false });
      expect(byId['srv-old']).to.include({ sdkVersion: '1.9.9', stale: true });
      expect(byId['srv-new'].uptimeSeconds).to.be.a('number');
      expect(byId['srv-new'].secondsSinceLastHeartbeat).to.be.a('number');
      expect(live.body.roster.players.map((p: { externalId: string }) => p.externalId)).to.have.members(['p1', 'p2']);
      expect(live.body.roster.players[0].sessionSeconds).to.be.a('number');
    });

    it('kicks through the commands service and shows the command move pending → dispatched → acked', async () => {
      const issued = await post(`${API}/games/${g.gameId}/commands`, { type: 'kick', target: { externalId: 'p2' }, payload: { reason: 'spam' } });
      expect(issued.status).to.equal(201);
      expect(issued.body.command).to.include({ status: 'pending', routedTo: 'srv-new', type: 'kick' });
      const id: string = issued.body.command.id;
      const status = async () => (await get(`${API}/games/${g.gameId}/live`)).body.commands.find((c: { id: string }) => c.id === id);
      expect((await status()).issuedBy).to.equal('operator');
      expect((await status()).status).to.equal('pending');
      const hb = await h.heartbeat(g, heartbeatBody(['p1', 'p2'], { externalServerId: 'srv-new' }));
      expect(hb.body.commands.map((c: { id: string }) => c.id)).to.deep.equal([id]);
      expect((await status()).status).to.equal('dispatched');
      await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'srv-new', acks: [id] }));
      expect((await status()).status).to.equal('acked');
    });

    it('issues mute, freeze, teleport and message with their payloads', async () => {
      const bodies = [
        { type: 'mute', target: { externalId: 'p1' }, payload: { durationSeconds: 60 } },
        { type: 'freeze', target: { externalId: 'p1' }, payload: {} },
        { type: 'teleport', target: { externalId: 'p1' }, payload: { place: 'jail' } },
        { type: 'message', target: { externalServerId: 'srv-new' }, payload: { text: 'behave' } },
      ];
      for (const b of bodies) expect((await post(`${API}/games/${g.gameId}/commands`, b)).status, b.type).to.equal(201);
    });

    it('refuses bad actions with the service status and envelope, never a 500', async () => {
      const cases: [object | undefined, string | null, string, number, string][] = [
        [{ type: 'kick', target: { externalId: 'p1' }, payload: {} }, 'alice', g.gameId, 400, 'invalid_payload'],
        [{ type: 'explode', target: { externalId: 'p1' } }, 'alice', g.gameId, 400, 'invalid_command_type'],
        [{ type: 'kick', target: {}, payload: { reason: 'x' } }, 'alice', g.gameId, 400, 'invalid_target'],
        [{ type: 'kick', target: { externalId: 'p1' }, payload: { reason: 'x' }, extra: 1 }, 'alice', g.gameId, 400, 'invalid_request'],
        [{ type: 'message', target: { externalServerId: 'gone' }, payload: { text: 'x' } }, 'alice', g.gameId, 404, 'server_not_live'],
        [{ type: 'kick', target: { externalId: 'p1' }, payload: { reason: 'x' } }, 'alice', '00000000-0000-4000-8000-000000000000', 404, 'unknown_game'],
        [{ type: 'kick', target: { externalId: 'p1' }, payload: { reason: 'x' } }, 'alice', 'not-a-uuid', 404, 'unknown_game'],
        [undefined, 'alice', g.gameId, 400, 'invalid_request'],
      ];
      for (const [body, moderator, gameId, status, code] of cases) {
        const res = await post(`${API}/games/${gameId}/commands`, body, moderator);
        expect(res.status, code).to.equal(status);
        expect(res.body.error.code).to.equal(code);
      }
      const broken = await request(consoleApp).post(`${API}/games/${g.gameId}/commands`).set('Authorization', `Bearer ${TOKEN}`).set('X-Moderator', 'alice').set('Content-Type', 'application/json').send('{"type":');
      expect(broken.status).to.equal(400);
    });
  });

  describe('doors, bans, health and charts', () => {
    it('forces a door and switches a lockdown on and off', async () => {
      const deps = { db: h.db, redis: h.redis, keySpace: h.keySpace };
      await createDoor(deps, { gameId: g.gameId, key: 'gate', name: 'Gate' }, 'test');
      await createDoor(deps, { gameId: g.gameId, key: 'armory', name: 'Armory' }, 'test');
      const forced = await post(`${API}/games/${g.gameId}/doors/gate/state`, { state: 'unlocked' });
      expect(forced.status).to.equal(200);
      expect(forced.body.result.forcedState).to.equal('unlocked');
      expect(forced.body.result.commands.map((c: { externalServerId: string }) => c.externalServerId)).to.include('srv-new');
      const on = await post(`${API}/games/${g.gameId}/lockdown`, { locked: true });
      expect(on.body.results).to.have.length(2);
      let doors = await get(`${API}/games/${g.gameId}/doors`);
      expect(doors.body.lockdown).to.equal(true);
      expect(doors.body.doors.map((d: { forcedState: string }) => d.forcedState)).to.deep.equal(['locked', 'locked']);
      await post(`${API}/games/${g.gameId}/lockdown`, { locked: false });
      doors = await get(`${API}/games/${g.gameId}/doors`);
      expect(doors.body.lockdown).to.equal(false);
      expect(doors.body.doors.map((d: { forcedState: string }) => d.forcedState)).to.deep.equal(['auto', 'auto']);
      const audit = await h.db.auditLog.count({ where: { gameId: g.gameId, action: 'door.force', actor: 'operator' } });
      expect(audit).to.equal(5);
      expect((await post(`${API}/games/${g.gameId}/doors/nope/state`, { state: 'locked' })).body.error.code).to.equal('unknown_door');
      expect((await post(`${API}/games/${g.gameId}/doors/gate/state`, { state: 'open' })).status).to.equal(400);
    });

    it('creates a ban (kicking the online user), lists it and lifts it', async () => {
      const created = await post(`${API}/games/${g.gameId}/bans`, { externalId: 'p1', scope: 'game', reason: 'cheating', expiresInSeconds: 3600 });
      expect(created.status).to.equal(201);
      expect(created.body.ban).to.include({ externalId: 'p1', scope: 'game', gameId: g.gameId, issuedBy: 'operator', status: 'active' });
      expect(created.body.kicks.map((k: { externalServerId: string }) => k.externalServerId)).to.deep.equal(['srv-new']);
      const listed = await get(`${API}/games/${g.gameId}/bans`);
      expect(listed.body.bans.map((b: { id: string }) => b.id)).to.include(created.body.ban.id);
      const check = await h.signed(g, 'post', '/api/v1/game/bans/check', { externalId: 'p1', externalServerId: 'srv-new' });
      expect(check.body.banned).to.equal(true);
      const lifted = await post(`${API}/bans/${created.body.ban.id}/lift`);
      expect(lifted.status).to.equal(200);
      expect(lifted.body.ban).to.include({ status: 'lifted', liftedBy: 'operator' });
      expect((await get(`${API}/games/${g.gameId}/bans`)).body.bans).to.deep.equal([]);
      expect((await post(`${API}/bans/00000000-0000-4000-8000-000000000000/lift`)).status).to.equal(404);
      expect((await post(`${API}/games/${g.gameId}/bans`, { externalId: 'p1', scope: 'galaxy', reason: 'x' })).status).to.equal(400);
    });

    it('shows open ingest health warnings and the flush backlog', async () => {
      const at = new Date();
      await h.db.ingestHealthWarning.create({ data: { gameId: g.gameId, kind: THROTTLING_WARNING, message: '99 requests answered 429', firstAt: at, lastAt: at } });
      const health = await get(`${API}/games/${g.gameId}/health`);
      expect(health.status).to.equal(200);
      expect(health.body.warnings[0]).to.include({ kind: THROTTLING_WARNING, resolvedAt: null });
      expect(health.body.throttling).to.have.length(10);
      expect(Object.keys(health.body.streams).sort()).to.deep.equal(['access_log', 'command_log', 'events', 'sessions']);
      expect(health.body.deadLetters).to.deep.include({ total: 0, kept: 0, latest: [] });
    });

    it('shows the dead letters of the game: counts per stream and the newest with their reasons', async () => {
      await new DeadLetters(h.redis, h.keySpace).add(g.gameId, 'events', [{ entryId: '1-0', reason: '23514: refused for the test', row: { e: 'ev-1' } }]);
      const health = await get(`${API}/games/${g.gameId}/health`);
      expect(health.body.deadLetters.bySource).to.deep.equal({ events: 1, sessions: 0, command_log: 0, access_log: 0 });
      expect(health.body.deadLetters.latest[0]).to.include({ source: 'events', entryId: '1-0', reason: '23514: refused for the test', row: '{"e":"ev-1"}' });
      expect((await get('/metrics')).text).to.match(/^gis_dead_letters_total\{stream="events"\} [1-9]\d*$/m);
    });

    it('charts concurrent players and events per type over the last hour', async () => {
      await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'srv-new', events: [event('death'), event('death'), event('quest_done')] }));
      await h.flush(g.gameId);
      const charts = await get(`${API}/games/${g.gameId}/charts`);
      expect(charts.status).to.equal(200);
      expect(charts.body.eventsByType.slice(0, 2)).to.deep.equal([{ type: 'death', count: 2 }, { type: 'quest_done', count: 1 }]);
      const now = charts.body.concurrency.at(-1);
      expect(now.servers).to.equal(2);
      expect(now.players).to.equal(2);
    });
  });

  describe('/metrics', () => {
    it('counts requests, heartbeats, events and door decisions in-process and reads queues, streams and commands at scrape time', async () => {
      const game: Express = createApp({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, verifier: h.verifier, metrics });
      const signedTo = (app: Express) => Object.assign(Object.create(h) as Harness, { app });
      const hh = signedTo(game);
      await hh.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'srv-metrics', events: [event('spawn'), event('spawn')] }));
      await hh.signed(g, 'post', '/api/v1/game/doors/bulk', { externalId: 'p1', n: 1 });
      await hh.signed(g, 'post', '/api/v1/game/nowhere', {});
      // a server over its quota in this window and the next (whenever the request lands): one 429
      const keyId = (await h.db.apiKey.findUniqueOrThrow({ where: { prefix: g.keyPrefix } })).id;
      const window = Math.floor(Date.now() / 60_000);
      for (const w of [window, window + 1]) await h.redis.hset(h.keySpace.game(g.gameId).rateWindow('hb', w, keyId), quotaCounterField('srv-loop'), '100000');
      expect((await hh.heartbeat(g, heartbeatBody([], { externalServerId: 'srv-loop' }))).status).to.equal(429);
      const text = (await get('/metrics')).text;
      expect(text).to.match(/gis_http_requests_total\{route="\/api\/v1\/game\/heartbeat",method="POST",code="200"\} 1/);
      expect(text).to.match(/gis_http_requests_total\{route="unmatched",method="POST",code="404"\} 1/);
      expect(text).to.match(/gis_http_request_duration_seconds_bucket\{le="[0-9.]+",route="\/api\/v1\/game\/heartbeat"/);
      expect(text).to.match(/^gis_heartbeats_total 1$/m);
      expect(text).to.match(/^gis_events_accepted_total 2$/m);
      expect(text).to.match(/gis_door_decisions_total\{endpoint="bulk",decision="deny"\} 2/);
      expect(text).to.include('gis_rate_limited_total{kind="heartbeat"} 1');
      expect(text).to.match(/gis_queue_jobs\{queue="\{flush-events\}",state="waiting"\} \d+/);
      expect(text).to.match(/gis_stream_backlog_entries\{stream="events"\} \d+/);
      expect(text).to.match(/gis_flush_lag_seconds\{stream="events"\} [\d.e+-]+/);
      expect(text).to.match(/gis_commands\{status="acked"\} [1-9]\d*/);
      expect(text).to.match(/gis_events_flushed_total \d+/);
      expect(text).to.match(/^gis_dead_letters_total\{stream="sessions"\} \d+$/m);
      expect(text).to.not.include('gis_scrape_errors_total{');
    });
  });
});
