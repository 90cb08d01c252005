/**
 * Spec: States › Command lifecycle, "not yet acked → expired (no ack before expiry), surfaced to the
 * issuing moderator". The expiry worker is driven with an explicit clock (`nowMs`), so no test waits.
 */
import { expect } from 'chai';
import type { TestGame } from '../support/harness.js';
import { expireDueCommands, reconcileCommands, NO_LIVE_STATE, RECONCILE_GRACE_MS } from '../../src/commands/command-expiry.js';
import { expireCommandsJob } from '../../workers/jobs/expire-commands.job.js';
import { GameDirectory } from '../../src/store/game-directory.js';
import { SERVER_QUEUE_CAP } from '../../src/commands/command-service.js';
import { setLogLevel } from '../../src/log.js';
import { beat, deleteCommands, issue, recorded, ownPrefixHarness, closeOwnPrefix } from './command-fixtures.js';

describe('command expiry', () => {
  const h = ownPrefixHarness('exp');
  const games: TestGame[] = [];
  before(() => setLogLevel(h.config.logLevel));
  const game = async () => {
    const g = await h.game();
    games.push(g);
    return g;
  };
  after(async () => {
    await deleteCommands(h, games);
    await closeOwnPrefix(h);
  });

  it('expires pending and dispatched commands at their expiry, in Redis and in Postgres with the issuer', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const waiting = await issue(h, g, { type: 'kick', target: { externalId: 'offline' }, payload: { reason: 'x' }, expiresInSeconds: 30, issuedBy: 'cli:bob' });
    const queued = await issue(h, g, { type: 'message', target: { externalServerId: 'srv-1' }, payload: { text: 'x' }, expiresInSeconds: 30 });
    const delivered = await issue(h, g, { type: 'freeze', target: { externalId: 'u1' }, expiresInSeconds: 30 });
    const later = await issue(h, g, { type: 'unmute', target: { externalId: 'u1' }, expiresInSeconds: 600 });
    // deliver only `delivered` and `later` (queued stays pending: its heartbeat comes after this one)
    const keys = h.keySpace.game(g.gameId);
    await h.redis.lrem(keys.pendingCommands('srv-1'), 0, queued.id);
    expect((await beat(h, g, 'srv-1', ['u1'])).map((e) => e.id).sort()).to.deep.equal([delivered.id, later.id].sort());
    await h.redis.rpush(keys.pendingCommands('srv-1'), queued.id);

    // one second before expiry nothing happens; at expiry the three expire, the later one does not
    expect((await expireDueCommands(h.redis, h.keySpace, waiting.expiresAt.getTime() - 1000)).expired).to.equal(0);
    const run = await expireDueCommands(h.redis, h.keySpace, waiting.expiresAt.getTime() + 500);
    expect(run.expired).to.equal(3);
    expect(run.games).to.deep.equal([g.gameId]);
    for (const c of [waiting, queued, delivered]) expect(await h.redis.hget(keys.command(c.id), 'status'), c.type).to.equal('expired');
    expect(await h.redis.hget(keys.command(later.id), 'status')).to.equal('dispatched');
    // expired commands leave their queues: not delivered, not re-delivered
    expect(await h.redis.llen(keys.userCommands('offline'))).to.equal(0);
    expect((await beat(h, g, 'srv-1', ['u1'])).map((e) => e.id)).to.deep.equal([later.id]);
    expect((await beat(h, g, 'srv-2', ['offline'])).map((e) => e.id)).to.deep.equal([]);

    await h.flush(g.gameId);
    const w = await recorded(h, waiting.id);
    expect(w).to.include({ status: 'expired', issuedBy: 'cli:bob' });
    expect(w.transitions.map((t) => [t.toStatus, t.at.getTime()])).to.deep.equal([
      ['pending', waiting.issuedAt.getTime()],
      ['expired', waiting.expiresAt.getTime()],
    ]);
    expect((await recorded(h, delivered.id)).transitions.map((t) => [t.toStatus, t.externalServerId])).to.deep.equal([
      ['pending', null],
      ['dispatched', 'srv-1'],
      ['expired', 'srv-1'],
    ]);
    expect((await recorded(h, later.id)).status).to.equal('dispatched');
  });

  it('is idempotent: a second run, or an overlapping one, expires nothing twice', async () => {
    const g = await game();
    const c = await issue(h, g, { type: 'kick', target: { externalId: 'x' }, payload: { reason: 'r' }, expiresInSeconds: 10 });
    const at = c.expiresAt.getTime() + 1;
    const [a, b] = await Promise.all([expireDueCommands(h.redis, h.keySpace, at), expireDueCommands(h.redis, h.keySpace, at)]);
    expect(a.expired + b.expired).to.equal(1);
    expect((await expireDueCommands(h.redis, h.keySpace, at + 60_000)).expired).to.equal(0);
    await h.flush(g.gameId);
    expect((await recorded(h, c.id)).transitions.map((t) => t.toStatus)).to.deep.equal(['pending', 'expired']);
    const index = await h.redis.zrange(h.keySpace.global.commandExpiryIndex(), '0', '-1');
    expect(index.filter((m) => m.startsWith(g.gameId))).to.deep.equal([]);
  });

  it('does not expire acked or failed commands', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const acked = await issue(h, g, { type: 'freeze', target: { externalId: 'u1' }, expiresInSeconds: 10 });
    const failed = await issue(h, g, { type: 'unmute', target: { externalId: 'u1' }, expiresInSeconds: 10 });
    await beat(h, g, 'srv-1', ['u1']);
    await beat(h, g, 'srv-1', ['u1'], { acks: [acked.id], failures: [{ id: failed.id, reason: 'not muted' }] });
    expect((await expireDueCommands(h.redis, h.keySpace, acked.expiresAt.getTime() + 1000)).expired).to.equal(0);
    await h.flush(g.gameId);
    expect((await recorded(h, acked.id)).status).to.equal('acked');
    expect((await recorded(h, failed.id)).status).to.equal('failed');
  });

  it('a heartbeat never delivers a command past its expiry, and expiry frees its place in the queue', async () => {
    const g = await game();
    await beat(h, g, 'srv-1');
    const longAgo = Date.now() - 3600_000;
    const stale = await issue(h, g, { type: 'message', target: { externalServerId: 'srv-1' }, payload: { text: 'old' }, expiresInSeconds: 60, nowMs: longAgo });
    expect(await beat(h, g, 'srv-1')).to.deep.equal([]);
    await h.flush(g.gameId);
    expect((await recorded(h, stale.id)).status).to.equal('expired');
    // a full queue of expired-but-not-yet-swept commands does not block new ones
    for (let i = 0; i < SERVER_QUEUE_CAP; i++) await issue(h, g, { type: 'custom', target: { externalServerId: 'srv-1' }, payload: {}, expiresInSeconds: 5, nowMs: longAgo });
    await expireDueCommands(h.redis, h.keySpace, Date.now());
    expect((await issue(h, g, { type: 'custom', target: { externalServerId: 'srv-1' }, payload: {} })).routedTo).to.equal('srv-1');
  });

  it('the worker role expires due commands and reconciles Postgres rows left behind', async () => {
    const g = await game();
    const due = await issue(h, g, { type: 'kick', target: { externalId: 'nobody' }, payload: { reason: 'r' }, expiresInSeconds: 5, nowMs: Date.now() - 10_000 });
    const run = expireCommandsJob({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, games: new GameDirectory(h.redis, h.db, h.keySpace), consumerName: 'test' });
    const result = await run();
    expect(result.expired).to.be.at.least(1);
    expect(await h.redis.hget(h.keySpace.game(g.gameId).command(due.id), 'status')).to.equal('expired');
  });

  it('reconciles: a row without Redis state expires; a terminal state whose log entry was lost is copied', async () => {
    const g = await game();
    await beat(h, g, 'srv-1', ['u1']);
    const past = Date.now() - RECONCILE_GRACE_MS - 120_000;
    const orphan = await issue(h, g, { type: 'kick', target: { externalId: 'u9' }, payload: { reason: 'r' }, expiresInSeconds: 30, nowMs: past });
    const acked = await issue(h, g, { type: 'freeze', target: { externalId: 'u1' }, expiresInSeconds: 30, nowMs: past + 1 });
    const keys = h.keySpace.game(g.gameId);
    // the command was delivered and acked just before expiring, but that log entry was lost (Redis crash)
    await h.redis.hset(keys.command(acked.id), 'status', 'acked', 'server', 'srv-1', 'doneAt', String(past + 5000));
    // and the orphan's Redis state never got written (crash between the issuer's two writes)
    await h.redis.del(keys.command(orphan.id));
    await h.redis.del(keys.commandLog());
    const res = await reconcileCommands(h.db, h.redis, h.keySpace, Date.now());
    expect(res.fixed).to.be.at.least(2);
    const o = await recorded(h, orphan.id);
    expect(o.status).to.equal('expired');
    expect(o.transitions.at(-1)).to.deep.include({ toStatus: 'expired', reason: NO_LIVE_STATE, at: orphan.expiresAt });
    const a = await recorded(h, acked.id);
    expect(a.status).to.equal('acked');
    expect(a.transitions.at(-1)).to.deep.include({ toStatus: 'acked', externalServerId: 'srv-1', at: new Date(past + 5000) });
    // a second pass finds nothing left to do for this game
    await reconcileCommands(h.db, h.redis, h.keySpace, Date.now());
    expect((await recorded(h, orphan.id)).transitions).to.have.length(2);
  });
});
