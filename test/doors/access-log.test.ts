/**
 * Issue #21 item 2, "Access log for moderators": decisions answered by signed door requests, flushed as
 * the worker does, read back with `admin doors access-log` (a real CLI process) newest first with time,
 * server, user, door, decision, reason and the deciding policy; filters; keyset pagination that neither
 * skips nor repeats rows (equal timestamps included); every filter served by an index without a sort;
 * retention enforced by the `prune-access-log` worker role's processor.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { okJson, runAdmin } from '../admin/harness.js';
import { check, doorWith } from './door-fixtures.js';
import { accessLogSql, queryAccessLog, type AccessLogEntry } from '../../src/doors/access-log-query.js';
import { pruneAccessLog } from '../../src/doors/access-log-retention.js';
import { pruneAccessLogJob } from '../../workers/jobs/prune-access-log.job.js';
import { GameDirectory } from '../../src/store/game-directory.js';
import { loadConfig } from '../../src/config.js';
import { DomainError } from '../../src/errors.js';

type Page = { entries: (Omit<AccessLogEntry, 'at'> & { at: string })[]; nextCursor: string | null };

describe('access log for moderators', function () {
  this.timeout(90_000);
  const h = new Harness();
  let g: TestGame;
  let allowAlice: string;
  let denyTroll: string;
  const admin = (...args: string[]) => runAdmin(args, h.config.redisPrefix);

  before(async () => {
    g = await h.game();
    const armory = await doorWith(h, g.gameId, [
      { effect: 'allow', subjectType: 'users', subjectIds: ['alice', 'troll'] },
      { effect: 'deny', subjectType: 'users', subjectIds: ['troll'] },
    ], { key: 'armory', defaultEffect: 'deny' });
    [allowAlice, denyTroll] = armory.ids as [string, string];
    await doorWith(h, g.gameId, [], { key: 'gate', defaultEffect: 'allow' });
    for (const [door, user, server] of [['armory', 'alice', 'srv-a'], ['armory', 'bob', 'srv-a'], ['gate', 'bob', 'srv-b'], ['armory', 'troll', 'srv-b']] as const) {
      const res = await check(h, g, door, user, { externalServerId: server });
      expect(res.status).to.equal(200);
    }
    await h.flush(g.gameId);
  });
  after(() => h.close());

  it('shows a denial with its reason and the policy that decided it, newest first (CLI, --json)', async () => {
    const all = okJson<Page>(await admin('doors', 'access-log', '--game', g.gameId, '--json'));
    expect(all.entries.map((e) => [e.doorKey, e.externalId, e.decision])).to.deep.equal([
      ['armory', 'troll', 'deny'],
      ['gate', 'bob', 'allow'],
      ['armory', 'bob', 'deny'],
      ['armory', 'alice', 'allow'],
    ]);
    expect(all.entries[0]).to.deep.include({ externalServerId: 'srv-b', reason: `policy_deny:${denyTroll}`, policyId: denyTroll });
    expect(all.entries[2]).to.deep.include({ reason: 'default_deny', policyId: null });
    expect(all.entries[3]).to.deep.include({ reason: `policy_allow:${allowAlice}`, policyId: allowAlice });
    const times = all.entries.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => b - a)).to.deep.equal(times);
    expect(all.nextCursor).to.equal(null);

    const text = await admin('doors', 'access-log', '--game', g.gameId, '--decision', 'deny');
    expect(text.code).to.equal(0);
    expect(text.stdout).to.match(/^TIME\s+SERVER\s+USER\s+DOOR\s+DECISION\s+REASON\s+POLICY/);
    expect(text.stdout).to.include(`policy_deny:${denyTroll}`).and.not.include('alice');
  });

  it('filters by door, user, decision and since', async () => {
    const q = (extra: object) => queryAccessLog(h.db, { gameId: g.gameId, ...extra });
    expect((await q({ doorKey: 'gate' })).entries.map((e) => e.externalId)).to.deep.equal(['bob']);
    expect((await q({ externalId: 'bob' })).entries.map((e) => e.doorKey)).to.deep.equal(['gate', 'armory']);
    expect((await q({ decision: 'deny' })).entries.map((e) => e.externalId)).to.deep.equal(['troll', 'bob']);
    expect((await q({ doorKey: 'armory', decision: 'allow', externalId: 'alice' })).entries).to.have.length(1);
    expect((await q({ since: '1h' })).entries).to.have.length(4);
    expect((await q({ since: new Date(Date.now() + 60_000).toISOString() })).entries).to.have.length(0);

    const bad = await admin('doors', 'access-log', '--game', g.gameId, '--decision', 'maybe');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('[invalid_request]');
    const since = await admin('doors', 'access-log', '--game', g.gameId, '--since', 'yesterday');
    expect(since.stderr).to.include('[invalid_since]');
  });

  it('pages by keyset: every row exactly once, in order, also across equal timestamps', async () => {
    const other = await h.game();
    const base = Date.now() - 3_600_000;
    // 57 rows, three per millisecond, so pages often end in the middle of a tie.
    await h.db.accessLog.createMany({
      data: Array.from({ length: 57 }, (_v, i) => ({
        gameId: other.gameId, doorKey: `d${i % 4}`, externalId: `u${i % 5}`, decision: i % 3 ? 'allow' : 'deny', reason: 'default_allow',
        at: new Date(base + Math.floor(i / 3)), dedupeKey: `page-${other.gameId}-${i}`,
      })),
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await queryAccessLog(h.db, { gameId: other.gameId, limit: 10, cursor });
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(pages).to.equal(6);
    const ordered = await h.db.accessLog.findMany({ where: { gameId: other.gameId }, orderBy: [{ at: 'desc' }, { id: 'desc' }], select: { id: true } });
    expect(seen).to.deep.equal(ordered.map((r) => r.id.toString()));

    // The same through the CLI with a filter: --cursor continues where the page ended.
    const first = okJson<Page>(await admin('doors', 'access-log', '--game', other.gameId, '--decision', 'deny', '--limit', '15', '--json'));
    const second = okJson<Page>(await admin('doors', 'access-log', '--game', other.gameId, '--decision', 'deny', '--limit', '15', '--cursor', first.nextCursor!, '--json'));
    expect(first.entries).to.have.length(15);
    expect(second.entries).to.have.length(4);
    expect(second.nextCursor).to.equal(null);
    expect(new Set([...first.entries, ...second.entries].map((e) => e.id)).size).to.equal(19);

    let refused: unknown;
    await queryAccessLog(h.db, { gameId: other.gameId, cursor: 'not-a-cursor' }).catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(DomainError);
    expect((refused as DomainError).code).to.equal('invalid_cursor');
  });

  it('serves every filter from an index, newest first, without sorting (EXPLAIN)', async () => {
    const after = { at: new Date(), id: '9223372036854775806' };
    const filters = [
      { name: 'AccessLog_gameId_at_id_idx' },
      { name: 'AccessLog_gameId_doorKey_at_id_idx', doorKey: 'armory' },
      { name: 'AccessLog_gameId_externalId_at_id_idx', externalId: 'bob' },
      { name: 'AccessLog_gameId_decision_at_id_idx', decision: 'deny' },
    ];
    for (const { name, ...f } of filters) {
      const plan = await h.db.$transaction(async (tx) => {
        // The test table is tiny, where a sequential scan is cheapest; forbid it to see what the indexes offer.
        await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
        await tx.$executeRawUnsafe('SET LOCAL enable_bitmapscan = off');
        const sql = accessLogSql({ gameId: g.gameId, ...f, since: new Date(Date.now() - 86_400_000), after, limit: 51 });
        const rows = await tx.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${sql.text}`, ...sql.values);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
      // The planner picks by its statistics (on a tiny game it may prefer the plain game index and filter
      // the rest); what must hold whatever it picks: an index range scan with the keyset row comparison in
      // the index condition, and no sort.
      expect(plan, plan).to.match(/Index (Only )?Scan using "AccessLog_gameId_[a-zA-Z_]*idx"/);
      expect(plan, plan).to.match(/Index Cond: .*ROW\(at, id\) < ROW\(/);
      expect(plan, plan).to.not.match(/\bSort\b/);
      const [def] = await h.db.$queryRaw<{ indexdef: string }[]>`SELECT indexdef FROM pg_indexes WHERE tablename = 'AccessLog' AND indexname = ${name}`;
      const column = Object.keys(f)[0];
      expect(def?.indexdef.replace(/"/g, ''), name).to.include(`(gameId, ${column ? `${column}, ` : ''}at DESC, id DESC)`);
    }
  });

  it('retention: the prune-access-log role deletes rows older than ACCESS_LOG_RETENTION_DAYS (default 30) and keeps the rest', async () => {
    expect(loadConfig({}).accessLogRetentionDays).to.equal(30);
    expect(() => loadConfig({ ACCESS_LOG_RETENTION_DAYS: '0' })).to.throw(/ACCESS_LOG_RETENTION_DAYS/);
    const old = await h.game();
    const now = Date.now();
    const day = 86_400_000;
    await h.db.accessLog.createMany({
      data: [31, 30.5, 29, 1].map((d, i) => ({ gameId: old.gameId, doorKey: 'gate', externalId: 'x', decision: 'allow', reason: 'default_allow', at: new Date(now - d * day), dedupeKey: `ret-${old.gameId}-${i}` })),
    });
    const run = pruneAccessLogJob({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, games: new GameDirectory(h.redis, h.db, h.keySpace), consumerName: 'test' });
    const r = await run();
    expect(r.deleted).to.be.at.least(2);
    const left = await h.db.accessLog.findMany({ where: { gameId: old.gameId }, select: { at: true } });
    expect(left.map((x) => Math.round((now - x.at.getTime()) / day))).to.have.members([29, 1]);

    // Batches: a small batch size still deletes everything due, and a second run finds nothing.
    await h.db.accessLog.createMany({
      data: Array.from({ length: 7 }, (_v, i) => ({ gameId: old.gameId, doorKey: 'gate', externalId: 'y', decision: 'deny', reason: 'default_deny', at: new Date(now - 40 * day), dedupeKey: `ret2-${old.gameId}-${i}` })),
    });
    expect((await pruneAccessLog(h.db, 30, now, Number.POSITIVE_INFINITY, 3)).deleted).to.be.at.least(7);
    expect((await pruneAccessLog(h.db, 30, now)).deleted).to.equal(0);
    expect(await h.db.accessLog.count({ where: { gameId: old.gameId } })).to.equal(2);
  });
});
