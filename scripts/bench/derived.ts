/**
 * scripts/bench/derived.ts — throughput of the derived data of issue #4 (not a test).
 *
 * Usage:  node_modules/.bin/tsx scripts/bench/derived.ts [--members 500] [--sessions-per-member 50]
 *
 * Seeds, in the database of DATABASE_URL (default: the dev database `gis`) and under a random Redis
 * prefix: one workspace with one game, `--members` members holding one auto-clock-in, paid, quota
 * position, and `--sessions-per-member` stored sessions each (90 minutes, 12 hours apart, over 25 days).
 * Then measures:
 *   1. the live path from nothing (src/derived/live-derivation.ts ticks until caught up): sessions/s;
 *   2. `derived rebuild` over 30 days when nothing changes (per-member cost of the recompute itself);
 *   3. `derived rebuild` over 30 days after every shift was deleted (shifts + ledger rows written/s);
 *   4. quota progress of the current week and analytics over 31 days.
 * Prints the figures and one greppable line `BENCH derived ...`. Everything it created is removed
 * afterwards, also on failure. Run it on a quiet machine: other load weighs on every figure.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { createDb } from '../../src/store/prisma.js';
import { createRedis } from '../../src/store/redis.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { ShiftDeriver } from '../../src/derived/shift-deriver.js';
import { LiveDerivation } from '../../src/derived/live-derivation.js';
import { rebuildDerived } from '../../src/derived/rebuild.js';
import { gameAnalytics } from '../../src/derived/analytics.js';
import { quotaProgress } from '../../src/derived/quota-progress.js';
import { weekContaining } from '../../src/workspace/calendar.js';
import { parseCli } from '../support/cli-args.js';
import { deleteByPattern } from '../fixtures.js';

const DAY_MS = 86_400_000;
const cli = parseCli('usage: tsx scripts/bench/derived.ts [--members 500] [--sessions-per-member 50]', { options: { members: { type: 'string' }, 'sessions-per-member': { type: 'string' } } });
const MEMBERS = cli.number('members', 500, 1, 1_000_000, { integer: true });
const PER_MEMBER = cli.number('sessions-per-member', 50, 1, 100_000, { integer: true });
const config = loadConfig();
const db = createDb(config.databaseUrl, 5);
const keySpace = new KeySpace(`gisbenchderived-${randomBytes(3).toString('hex')}`);
const redis = createRedis(config.redisUrl, { name: 'bench-derived' });
// Door caches are not part of this measurement.
const noDoors = { memberChanged: async () => {}, workspaceChanged: async () => {} };
const ws = await db.workspace.create({ data: { name: 'bench-derived' } });
const game = await db.game.create({ data: { workspaceId: ws.id, name: 'bench-derived game' } });
const time = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const r = await fn();
  return [r, performance.now() - t];
};

try {
  const unit = await db.unit.create({ data: { workspaceId: ws.id, name: 'U' } });
  const position = await db.position.create({ data: { workspaceId: ws.id, unitId: unit.id, name: 'P', autoClockIn: true, payoutRateMinor: 1250n, payoutUnit: 'USD', quotaMinutesPerWeek: 600 } });
  await db.member.createMany({ data: Array.from({ length: MEMBERS }, (_, i) => ({ workspaceId: ws.id, externalId: `b${i}`, joinedAt: new Date() })) });
  const members = await db.member.findMany({ where: { workspaceId: ws.id }, select: { id: true } });
  await db.assignment.createMany({ data: members.map((m) => ({ memberId: m.id, positionId: position.id })) });
  const now = Date.now();
  const sessions = [];
  for (let i = 0; i < MEMBERS; i++) {
    for (let k = 0; k < PER_MEMBER; k++) {
      const open = now - 25 * DAY_MS + k * 12 * 3_600_000 + (i % 60) * 60_000;
      sessions.push({ gameId: game.id, externalServerId: `s${k % 7}`, externalScopeId: 'p', externalId: `b${i}`, openedAt: new Date(open), closedAt: new Date(open + 90 * 60_000), closeReason: 'left' });
    }
  }
  for (let i = 0; i < sessions.length; i += 5000) await db.session.createMany({ data: sessions.slice(i, i + 5000) });
  console.log(`${MEMBERS} members, ${sessions.length} sessions`);

  const deriver = new ShiftDeriver(db, redis, keySpace, noDoors);
  // The cursor starts at 0: the live path also reads (and skips) every other session in this database.
  const live = new LiveDerivation(db, redis, keySpace, deriver);
  const [ticks, liveMs] = await time(async () => {
    let n = 0;
    for (;;) {
      n++;
      if ((await live.tick()).caughtUp) return n;
    }
  });
  const liveRate = sessions.length / (liveMs / 1000);
  console.log(`live path from nothing: ${ticks} ticks, ${liveMs.toFixed(0)} ms, ${liveRate.toFixed(0)} sessions/s`);
  const period = [new Date(now - 30 * DAY_MS), new Date(now)] as const;
  const [, noopMs] = await time(() => rebuildDerived(db, deriver, ws.id, ...period));
  console.log(`rebuild 30 days, nothing to change: ${noopMs.toFixed(0)} ms, ${(noopMs / MEMBERS).toFixed(1)} ms per member`);
  await db.shift.deleteMany({ where: { workspaceId: ws.id } });
  const [full, fullMs] = await time(() => rebuildDerived(db, deriver, ws.id, ...period));
  const fullRate = full.created / (fullMs / 1000);
  console.log(`rebuild 30 days from nothing: ${fullMs.toFixed(0)} ms, ${full.created} shifts + ${full.payoutsWritten} ledger rows, ${fullRate.toFixed(0)} shifts/s`);
  const [quota, quotaMs] = await time(() => quotaProgress(db, ws.id, weekContaining(now, 'UTC', 1), new Date(now)));
  console.log(`quota progress, ${quota.length} rows: ${quotaMs.toFixed(0)} ms`);
  const [, analyticsMs] = await time(() => gameAnalytics(db, game.id, new Date(now - 31 * DAY_MS + 60_000), new Date(now)));
  console.log(`analytics over 31 days: ${analyticsMs.toFixed(0)} ms`);
  console.log(
    `BENCH derived members=${MEMBERS} sessions=${sessions.length} live_sessions_per_s=${liveRate.toFixed(0)} rebuild_noop_ms_per_member=${(noopMs / MEMBERS).toFixed(1)} rebuild_shifts_per_s=${fullRate.toFixed(0)} quota_ms=${quotaMs.toFixed(0)} analytics_ms=${analyticsMs.toFixed(0)}`,
  );
} finally {
  await db.session.deleteMany({ where: { gameId: game.id } });
  await db.workspace.delete({ where: { id: ws.id } });
  await deleteByPattern(redis, keySpace.scanPattern());
  await redis.quit();
  await db.$disconnect();
}
