/**
 * The maximum envelope size (spec: Limits, "Maximum envelope size: not shown"; Errors 413): a body of
 * exactly MAX_ENVELOPE_BYTES is read, one byte more is 413 `envelope_too_large` before parsing, and the
 * reference client, against the real service, splits its events across heartbeats until all are stored.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { expect } from 'chai';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { GameClient } from '@gis/client';

const LIMIT = 16 * 1024;

describe('maximum envelope size', () => {
  const h = new Harness({ MAX_ENVELOPE_BYTES: String(LIMIT) });
  let g: TestGame;
  let server: Server;
  before(async () => {
    g = await h.game();
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await h.close();
  });

  /** A heartbeat body padded with whitespace to exactly `bytes` bytes. */
  function bodyOf(bytes: number): string {
    const json = JSON.stringify(heartbeatBody(['p1'], { externalServerId: `env-${bytes}` }));
    return json.slice(0, -1) + ' '.repeat(bytes - json.length) + '}';
  }

  it('reads a body of exactly the limit and refuses one byte more with 413 before parsing', async () => {
    const at = bodyOf(LIMIT);
    expect(Buffer.byteLength(at)).to.equal(LIMIT);
    expect((await h.signed(g, 'post', '/api/v1/game/heartbeat', undefined, { raw: at })).status).to.equal(200);
    const over = await h.signed(g, 'post', '/api/v1/game/heartbeat', undefined, { raw: bodyOf(LIMIT + 1) });
    expect(over.status).to.equal(413);
    expect(over.body.error.code).to.equal('envelope_too_large');
    expect(over.body.error.message).to.include(String(LIMIT));
  });

  it('the reference client splits events on 413 and every event reaches Postgres', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new GameClient({ baseUrl: url, apiKey: g.key, externalServerId: 'splitter', maxPlayers: 10 });
    const padding = 'x'.repeat(400);
    for (let i = 0; i < 120; i++) client.track({ type: 'note', externalId: 'p1', payload: { i, padding } });
    client.start();
    await client.stop({ flush: true, timeoutMs: 30_000 });
    const stats = client.stats();
    expect(stats.splits413).to.be.greaterThan(0);
    expect(stats.eventsQueued).to.equal(0);
    expect(stats.eventsAcked).to.equal(120);
    await h.flush(g.gameId);
    expect(await h.db.playerEvent.count({ where: { gameId: g.gameId, externalServerId: 'splitter' } })).to.equal(120);
  });
});
