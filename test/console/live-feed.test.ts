/**
 * Issue #21 item 5, "Live by push": the console's live views arrive as Server-Sent Events fed from the
 * Redis streams the service already writes (sessions, cmdlog). The hub's periodic refresh is switched
 * off here, so every event after the first views can only have come from a stream entry. N open
 * consoles of a game share one build per change: they receive the same snapshot (same event id).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { openSse, type SseEvent, type SseStream } from '../support/sse.js';
import { createConsoleApp } from '../../src/adapters/console/console-app.js';
import { createConsoleServices, type ConsoleServices } from '../../src/adapters/console/console-services.js';
import { LiveHub } from '../../src/adapters/console/live/live-hub.js';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { issueCommand } from '../../src/commands/command-service.js';
import { createRedis } from '../../src/store/redis.js';

const TOKEN = 'live-feed-operator-token-0123456789';
type Cmd = { id: string; status: string; transitions: { toStatus: string }[] };

describe('console live feed (Server-Sent Events from the Redis streams)', function () {
  this.timeout(60_000);
  const h = new Harness();
  let services: ConsoleServices;
  let hub: LiveHub;
  let server: Server;
  let base: string;
  let g: TestGame;
  let readers = 0;
  const streams: SseStream[] = [];

  const open = async (query = ''): Promise<SseStream> => {
    const s = await openSse(`${base}/console/api/games/${g.gameId}/live/stream${query}`, { Authorization: `Bearer ${TOKEN}` });
    streams.push(s);
    return s;
  };
  const beat = async (sid: string, players: string[], extra: object = {}) => {
    const res = await h.heartbeat(g, heartbeatBody(players, { externalServerId: sid, ...extra }));
    expect(res.status).to.equal(200);
    return res.body as { commands: { id: string }[] };
  };
  const commandIn = (id: string, status: string) => (e: SseEvent) =>
    e.event === 'commands' && (e.data as { commands: Cmd[] }).commands.some((c) => c.id === id && c.status === status);

  before(async () => {
    services = createConsoleServices({ db: h.db, redis: h.redis, keySpace: h.keySpace });
    hub = new LiveHub({
      db: h.db,
      redis: h.redis,
      keySpace: h.keySpace,
      createReader: () => {
        readers += 1;
        return createRedis(h.config.redisUrl, { name: 'test-live', forWorker: true });
      },
      refreshMs: 3_600_000, // no periodic refresh: what arrives came from a stream entry
    });
    const app = createConsoleApp({ services, token: TOKEN, metrics: new Registry(), openapi: buildOpenApiDocument(), live: hub });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    g = await h.game();
  });
  after(async () => {
    for (const s of streams) s.close();
    await hub.close();
    await new Promise((r) => server.close(r));
    await services.close();
    await h.db.command.deleteMany({ where: { gameId: g.gameId } });
    await h.close();
  });

  it('needs the operator token', async () => {
    const s = await openSse(`${base}/console/api/games/${g.gameId}/live/stream`, {});
    expect(s.status).to.equal(401);
    s.close();
  });

  it('sends the current views at once, then a new server and its roster changes as they happen', async () => {
    const s = await open('?server=live-a');
    expect(s.status).to.equal(200);
    const hello = await s.waitFor((e) => e.event === 'hello', 'hello');
    expect(hello.data).to.deep.include({ gameId: g.gameId, server: 'live-a' });
    await s.waitFor((e) => e.event === 'servers', 'first servers view');
    await s.waitFor((e) => e.event === 'commands', 'first commands view');
    await s.waitFor((e) => e.event === 'health', 'first health view');

    await beat('live-a', ['p1', 'p2']);
    const servers = await s.waitFor((e) => e.event === 'servers' && (e.data as { servers: { externalServerId: string }[] }).servers.some((x) => x.externalServerId === 'live-a'), 'live-a in servers');
    expect((servers.data as { serverTime: string }).serverTime).to.be.a('string');
    await s.waitFor((e) => e.event === 'roster' && (e.data as { players: { externalId: string }[] }).players.map((p) => p.externalId).join() === 'p1,p2', 'roster p1,p2');
    await beat('live-a', ['p2']);
    await s.waitFor((e) => e.event === 'roster' && (e.data as { players: { externalId: string }[] }).players.map((p) => p.externalId).join() === 'p2', 'roster after p1 left');
  });

  it('shows a command from its issue to acked, every status with its transition', async () => {
    const s = await open();
    await beat('live-b', ['kim']);
    const c = await issueCommand({ db: h.db, redis: h.redis, keySpace: h.keySpace }, { gameId: g.gameId, type: 'kick', payload: { reason: 'live' }, target: { externalId: 'kim' }, issuedBy: 'test:mod' });
    await s.waitFor(commandIn(c.id, 'pending'), 'the issued command');
    await beat('live-b', ['kim']);
    await s.waitFor(commandIn(c.id, 'dispatched'), 'dispatched');
    await beat('live-b', ['kim'], { acks: [c.id] });
    const acked = await s.waitFor(commandIn(c.id, 'acked'), 'acked');
    const view = (acked.data as { commands: Cmd[] }).commands.find((x) => x.id === c.id)!;
    expect(view.transitions.map((t) => t.toStatus)).to.deep.equal(['pending', 'dispatched', 'acked']);
  });

  it('N open consoles cost one build per change: five streams receive the same snapshot', async () => {
    const five = await Promise.all([1, 2, 3, 4, 5].map(() => open()));
    await Promise.all(five.map((s) => s.waitFor((e) => e.event === 'commands', 'first commands view')));
    const before = hub.stats();
    expect(before.subscribers).to.be.at.least(5);

    const c = await issueCommand({ db: h.db, redis: h.redis, keySpace: h.keySpace }, { gameId: g.gameId, type: 'kick', payload: { reason: 'n' }, target: { externalId: 'nobody-online' }, issuedBy: 'test:mod' });
    const got = await Promise.all(five.map((s) => s.waitFor(commandIn(c.id, 'pending'), 'the new command')));
    expect(new Set(got.map((e) => e.id)).size, 'one snapshot for all').to.equal(1);
    const after = hub.stats();
    expect(after.builds.commands - before.builds.commands, 'commands view built once for the change').to.equal(1);
    expect(readers, 'one reader connection per process').to.equal(1);
  });

  it('two games in different Cluster slots watched at once: both receive pushed updates', async () => {
    // Each game's streams carry its hash tag, so on a Cluster two games are (almost always) two slots, and
    // one XREAD over both was refused (CROSSSLOT): neither console got a push, only the refresh (off here).
    const slotOf = (gameId: string) => calculateSlot(h.keySpace.game(gameId).sessionStream());
    let other = await h.game();
    while (slotOf(other.gameId) === slotOf(g.gameId)) other = await h.game();
    const a = await open();
    const b = await openSse(`${base}/console/api/games/${other.gameId}/live/stream`, { Authorization: `Bearer ${TOKEN}` });
    streams.push(b);
    await a.waitFor((e) => e.event === 'servers', 'first servers view of the first game');
    await b.waitFor((e) => e.event === 'servers', 'first servers view of the second game');
    const hasServer = (sid: string) => (e: SseEvent) => e.event === 'servers' && (e.data as { servers: { externalServerId: string }[] }).servers.some((x) => x.externalServerId === sid);
    for (const round of [1, 2]) {
      await beat(`slot-a-${round}`, ['p1']);
      const res = await h.heartbeat(other, heartbeatBody(['p2'], { externalServerId: `slot-b-${round}` }));
      expect(res.status).to.equal(200);
      await a.waitFor(hasServer(`slot-a-${round}`), `slot-a-${round} pushed to the first game's console`, 5_000);
      await b.waitFor(hasServer(`slot-b-${round}`), `slot-b-${round} pushed to the second game's console`, 5_000);
    }
    // On a Cluster each watched game has a reader of its own, stopped when its last console closes.
    const clustered = h.redis instanceof Cluster;
    expect(hub.stats().readers).to.equal(clustered ? 2 : 1);
    b.close();
    const until = Date.now() + 5_000;
    while (hub.stats().games > 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(hub.stats()).to.include({ games: 1, readers: 1 });
    await beat('slot-a-3', ['p1']);
    await a.waitFor(hasServer('slot-a-3'), 'the first game still pushed after the second closed', 5_000);
  });

  it('closing the hub ends every stream (graceful shutdown)', async () => {
    const s = await open();
    await s.waitFor((e) => e.event === 'servers', 'first view');
    const other = new LiveHub({ db: h.db, redis: h.redis, keySpace: h.keySpace, createReader: () => h.redis.duplicate() });
    let closed = false;
    other.subscribe(g.gameId, { server: null, send: () => undefined, close: () => (closed = true) });
    await other.close();
    expect(closed).to.equal(true);
  });
});
