/**
 * Persistent throttling becomes an ingest health warning stored per game (spec: Events; issue #7 Limits):
 * raised at 429s in 5 of the last 10 minutes, refreshed while it lasts, resolved after 10 minutes without
 * a 429; shown by `admin health --game G`. Times are passed in, so no test waits for a minute to pass.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { checkIngestHealth, PERSISTENT_MINUTES, THROTTLING_WARNING } from '../../src/limits/ingest-health.js';
import { THROTTLE_COUNT_TTL_SECONDS } from '../../src/store/keys.js';
import { runAdmin, okJson } from '../admin/harness.js';

const MINUTE = 60_000;

describe('ingest health warnings', () => {
  const h = new Harness();
  let g: TestGame;
  let quiet: TestGame;
  const now = Math.floor(Date.now() / MINUTE) * MINUTE + 30_000;

  /** Records `n` throttled requests of `who` in the minute `minutesAgo` before `now`, as the Lua scripts do. */
  async function throttle(game: TestGame, minutesAgo: number, who = 'hb:server-7', n = 3): Promise<void> {
    const at = now - minutesAgo * MINUTE;
    const key = h.keySpace.game(game.gameId).throttledInMinute(Math.floor(at / MINUTE));
    await h.redis.hincrby(key, who, n);
    await h.redis.expire(key, THROTTLE_COUNT_TTL_SECONDS);
    await h.redis.zadd(h.keySpace.global.throttledGames(), at, game.gameId);
  }
  const warnings = (game: TestGame) => h.db.ingestHealthWarning.findMany({ where: { gameId: game.gameId }, orderBy: { firstAt: 'asc' } });

  before(async () => {
    g = await h.game();
    quiet = await h.game();
  });
  after(() => h.close());

  it(`does not warn below ${PERSISTENT_MINUTES} throttled minutes out of 10`, async () => {
    for (const m of [0, 2, 4, 6]) await throttle(quiet, m);
    await checkIngestHealth(h.redis, h.db, h.keySpace, now);
    expect(await warnings(quiet)).to.deep.equal([]);
  });

  it('raises one warning at 5 throttled minutes, refreshes it while throttling lasts, resolves it after 10 quiet minutes', async () => {
    for (const m of [1, 3, 5, 7]) await throttle(g, m);
    await throttle(g, 9, 'door:p1', 2);
    const first = await checkIngestHealth(h.redis, h.db, h.keySpace, now);
    expect(first.raised).to.include(g.gameId);
    let [w] = await warnings(g);
    expect(w).to.include({ kind: THROTTLING_WARNING, count: 1, resolvedAt: null });
    expect(w!.message).to.include('14 requests answered 429 in 5 of the last 10 minutes').and.include('hb:server-7 (12)');

    await throttle(g, -1);
    const second = await checkIngestHealth(h.redis, h.db, h.keySpace, now + MINUTE);
    expect(second.refreshed).to.include(g.gameId);
    const rows = await warnings(g);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ count: 2, resolvedAt: null });

    // still some 429s in the window, but fewer than 5 minutes: stays open (no flapping)
    await checkIngestHealth(h.redis, h.db, h.keySpace, now + 6 * MINUTE);
    expect((await warnings(g))[0]!.resolvedAt).to.equal(null);

    await checkIngestHealth(h.redis, h.db, h.keySpace, now + 11 * MINUTE);
    [w] = await warnings(g);
    expect(w!.resolvedAt?.getTime()).to.equal(now + 11 * MINUTE);
  });

  it('`admin health --game G --json` shows warnings, recent throttling, quotas and streams', async () => {
    await h.db.ingestHealthWarning.create({ data: { gameId: quiet.gameId, kind: THROTTLING_WARNING, message: 'open one', firstAt: new Date(), lastAt: new Date() } });
    const out = okJson<{ gameId: string; warnings: { kind: string; resolvedAt: string | null }[]; throttling: { minutes: unknown[]; persistent: boolean }; quotas: Record<string, number>; streams: Record<string, unknown> }>(
      await runAdmin(['health', '--game', quiet.gameId, '--json'], h.config.redisPrefix),
    );
    expect(out.gameId).to.equal(quiet.gameId);
    expect(out.warnings.map((w) => w.kind)).to.deep.equal([THROTTLING_WARNING]);
    expect(out.throttling.minutes).to.have.length(10);
    expect(out.quotas.heartbeatPerServerPerMinute).to.equal(124);
    expect(Object.keys(out.streams)).to.have.members(['events', 'sessions', 'command_log', 'access_log']);
    const text = await runAdmin(['health', '--game', quiet.gameId], h.config.redisPrefix);
    expect(text.code).to.equal(0);
    expect(text.stdout).to.include('1 open warning(s)').and.include('open one').and.include('124/min');
    const bad = await runAdmin(['health', '--game', '00000000-0000-4000-8000-000000000000'], h.config.redisPrefix);
    expect(bad.code).to.equal(1);
    expect(bad.stdout).to.equal('');
  });
});
