/**
 * Routing (src/commands/command-service.ts): a user command goes to the server whose roster holds the
 * user, waits while the user is offline, and follows the user; a server command goes to that live server;
 * a command never reaches a server of another game. Queue caps refuse instead of growing.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { sweepGame } from '../../src/presence/liveness-sweep.js';
import { DomainError } from '../../src/errors.js';
import { SERVER_QUEUE_CAP, USER_QUEUE_CAP } from '../../src/commands/command-service.js';
import { beat, deleteCommands, issue, recorded } from './command-fixtures.js';

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('command routing', () => {
  const h = new Harness();
  const games: TestGame[] = [];
  const game = async () => {
    const g = await h.game();
    games.push(g);
    return g;
  };
  after(async () => {
    await deleteCommands(h, games);
    await h.close();
  });

  it('routes a user command to the server that has the user in its roster, and only there', async () => {
    const g = await game();
    await beat(h, g, 'srv-a', ['u1']);
    await beat(h, g, 'srv-b', ['u2']);
    const c = await issue(h, g, { type: 'kick', target: { externalId: 'u2' }, payload: { reason: 'x' } });
    expect(c.routedTo).to.equal('srv-b');
    expect(await beat(h, g, 'srv-a', ['u1'])).to.deep.equal([]);
    const [entry] = await beat(h, g, 'srv-b', ['u2']);
    expect(entry).to.deep.include({ id: c.id, target: { externalServerId: 'srv-b', externalId: 'u2' } });
  });

  it('keeps a command for an offline user pending until the user joins a server of the game', async () => {
    const g = await game();
    await beat(h, g, 'srv-a', ['u1']);
    const c = await issue(h, g, { type: 'mute', target: { externalId: 'late' }, payload: { durationSeconds: 60 } });
    expect(c.routedTo).to.equal(null);
    expect(await beat(h, g, 'srv-a', ['u1'])).to.deep.equal([]);
    await h.flush(g.gameId);
    expect((await recorded(h, c.id)).status).to.equal('pending');
    // the user appears on srv-c: this very heartbeat delivers it
    const [entry] = await beat(h, g, 'srv-c', ['late']);
    expect(entry).to.deep.include({ id: c.id, target: { externalServerId: 'srv-c', externalId: 'late' } });
    expect(await beat(h, g, 'srv-a', ['u1', 'x'])).to.deep.equal([]);
  });

  it('a user command follows the user who left before it was delivered', async () => {
    const g = await game();
    await beat(h, g, 'srv-a', ['u1']);
    const c = await issue(h, g, { type: 'freeze', target: { externalId: 'u1' } });
    expect(c.routedTo).to.equal('srv-a');
    // u1 leaves srv-a in the heartbeat that would have delivered it, then shows up on srv-b
    expect(await beat(h, g, 'srv-a', [])).to.deep.equal([]);
    const keys = h.keySpace.game(g.gameId);
    expect(await h.redis.lrange(keys.userCommands('u1'), 0, -1)).to.deep.equal([c.id]);
    expect((await beat(h, g, 'srv-b', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
  });

  it('a user command whose server went away before acking is delivered again on the user\'s next server', async () => {
    const g = await game();
    const start = Date.now();
    await beat(h, g, 'srv-a', ['u1']);
    const c = await issue(h, g, { type: 'kick', target: { externalId: 'u1' }, payload: { reason: 'x' } });
    expect((await beat(h, g, 'srv-a', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
    // srv-a stops heartbeating and is declared gone (3 missed 20 s intervals)
    const swept = await sweepGame(h.redis, h.db, h.keySpace, g.gameId, 3, start + 5 * 60_000);
    expect(swept.gone).to.deep.equal(['srv-a']);
    const [entry] = await beat(h, g, 'srv-b', ['u1']);
    expect(entry).to.deep.include({ id: c.id, target: { externalServerId: 'srv-b', externalId: 'u1' } });
    await beat(h, g, 'srv-b', ['u1'], { acks: [c.id] });
    await h.flush(g.gameId);
    const r = await recorded(h, c.id);
    expect(r.status).to.equal('acked');
    expect(r.transitions.at(-1)).to.include({ toStatus: 'acked', externalServerId: 'srv-b' });
  });

  it('refuses a server command for a server that is not live (404), storing nothing', async () => {
    const g = await game();
    await beat(h, g, 'srv-a');
    const err = await rejection(issue(h, g, { type: 'shutdown', target: { externalServerId: 'srv-nope' } }));
    expect([err.kind, err.code]).to.deep.equal(['not_found', 'server_not_live']);
    expect(await h.db.command.count({ where: { gameId: g.gameId } })).to.equal(0);
  });

  it('refuses an unknown game (404)', async () => {
    const g = await game();
    const err = await rejection(issue(h, { ...g, gameId: '00000000-0000-4000-8000-000000000001' }, { type: 'kick', target: { externalId: 'u' }, payload: { reason: 'r' } }));
    expect(err.kind).to.equal('not_found');
  });

  it('never delivers a command to a server of another game, even with the same server and user ids', async () => {
    const g1 = await game();
    const g2 = await game();
    await beat(h, g1, 'srv-1', ['u1']);
    await beat(h, g2, 'srv-1', ['u1']);
    const c = await issue(h, g1, { type: 'kick', target: { externalId: 'u1' }, payload: { reason: 'x' } });
    const w = await issue(h, g1, { type: 'mute', target: { externalId: 'elsewhere' }, payload: { durationSeconds: 5 } });
    expect(await beat(h, g2, 'srv-1', ['u1', 'elsewhere'])).to.deep.equal([]);
    // game 2's server acking game 1's id changes nothing in game 1
    await beat(h, g2, 'srv-1', ['u1'], { acks: [c.id, w.id], failures: [{ id: c.id, reason: 'x' }] });
    expect((await beat(h, g1, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([c.id]);
    await h.flush(g1.gameId);
    await h.flush(g2.gameId);
    expect((await recorded(h, c.id)).status).to.equal('dispatched');
    expect((await recorded(h, w.id)).status).to.equal('pending');
    expect(await h.db.commandTransition.count({ where: { command: { gameId: g2.gameId } } })).to.equal(0);
  });

  it(`caps a server queue at ${SERVER_QUEUE_CAP} open commands with 429 command_queue_full, and takes more after acks`, async () => {
    const g = await game();
    await beat(h, g, 'srv-a', ['u1']);
    const ids: string[] = [];
    for (let i = 0; i < SERVER_QUEUE_CAP; i++) {
      const target = i % 2 ? { externalId: 'u1' } : { externalServerId: 'srv-a' };
      ids.push((await issue(h, g, { type: 'custom', target, payload: { i } })).id);
    }
    const err = await rejection(issue(h, g, { type: 'custom', target: { externalId: 'u1' }, payload: {} }));
    expect([err.kind, err.code]).to.deep.equal(['rate_limited', 'command_queue_full']);
    expect(err.message).to.contain('srv-a').and.contain(String(SERVER_QUEUE_CAP));
    expect(err.retryAfterSeconds).to.equal(20);
    expect(await h.db.command.count({ where: { gameId: g.gameId } })).to.equal(SERVER_QUEUE_CAP);
    // delivered-but-unacked still count; acked ones free their place
    expect(await beat(h, g, 'srv-a', ['u1'])).to.have.length(SERVER_QUEUE_CAP);
    await rejection(issue(h, g, { type: 'custom', target: { externalServerId: 'srv-a' }, payload: {} }));
    await beat(h, g, 'srv-a', ['u1'], { acks: ids.slice(0, 10) });
    const more = await issue(h, g, { type: 'custom', target: { externalServerId: 'srv-a' }, payload: {} });
    expect(more.routedTo).to.equal('srv-a');
  });

  it(`caps the queue of a waiting user at ${USER_QUEUE_CAP}`, async () => {
    const g = await game();
    for (let i = 0; i < USER_QUEUE_CAP; i++) await issue(h, g, { type: 'message', target: { externalId: 'away' }, payload: { text: `m${i}` } });
    const err = await rejection(issue(h, g, { type: 'message', target: { externalId: 'away' }, payload: { text: 'one more' } }));
    expect([err.kind, err.code]).to.deep.equal(['rate_limited', 'command_queue_full']);
    expect(err.message).to.contain('away');
    // other users are not affected
    expect((await issue(h, g, { type: 'message', target: { externalId: 'other' }, payload: { text: 'hi' } })).routedTo).to.equal(null);
  });
});
