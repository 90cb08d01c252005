/**
 * The member rows of door subject contexts, read for many users in one statement (src/doors/member-rows.ts)
 * against the real Postgres: loads of one moment share a statement and each gets its own rows; a load made
 * after a statement was sent is read again (it sees writes made since); a batch holds at most MAX_BATCH
 * users; a failed read rejects every load of its batch; door evaluations read no rows for a player who is
 * no member.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { MAX_BATCH, MemberRows } from '../../src/doors/member-rows.js';
import { createDb, type Db } from '../../src/store/prisma.js';
import { buildOrg, DAY_MS, doorWith, invalidator, type Org } from './door-fixtures.js';
import { randomUUID } from 'node:crypto';
import { DoorAccessService } from '../../src/doors/door-access-service.js';
import { doorBulkBody } from '../../src/adapters/http/door-responses.js';

/**
 * `db` with every `$queryRaw` statement's user count recorded. The statements still run on Postgres at
 * once; after `hold()`, the answer of the next statement is handed back only at `release()` (a statement
 * kept in flight).
 */
function counted(db: Db): { db: Db; batches: number[]; hold: () => void; release: () => void } {
  const batches: number[] = [];
  let gate: Promise<void> | null = null;
  let open = () => {};
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== '$queryRaw') return Reflect.get(target, prop, receiver) as unknown;
      return (strings: TemplateStringsArray, ...values: unknown[]) => {
        batches.push((values.find(Array.isArray) as unknown[]).length);
        const running = Promise.resolve(target.$queryRaw(strings, ...values)); // runs now (Prisma's are lazy)
        const held = gate;
        gate = null;
        return held ? held.then(() => running) : running;
      };
    },
  });
  return {
    db: proxy,
    batches,
    hold: () => {
      gate = new Promise((r) => (open = r));
    },
    release: () => open(),
  };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('member rows of door subjects, read in batches', () => {
  let h: Harness;
  let g: TestGame;
  let org: Org;

  before(async () => {
    h = new Harness();
    g = await h.game();
    org = await buildOrg(h, g.workspaceId);
  });
  after(() => h.close());

  it('reads the loads of one moment in one statement, each user its own rows', async () => {
    const { db, batches } = counted(h.db);
    const rows = new MemberRows(db);
    const now = Date.now();
    const [alice, bob, dan, stranger, aliceAgain] = await Promise.all(['alice', 'bob', 'dan', 'stranger', 'alice'].map((u) => rows.load(g.workspaceId, u, now)));
    expect(batches).to.deep.equal([4]);
    expect(alice?.positions).to.deep.equal([org.pChild]);
    expect(Math.round((now - alice!.joined_ms) / DAY_MS)).to.equal(400);
    expect(bob?.positions).to.deep.equal([org.pOther]);
    expect(dan).to.include({ external_id: 'dan', positions: null, clocked_in: false, records: null });
    expect(stranger).to.equal(undefined);
    expect(aliceAgain).to.deep.equal(alice);
  });

  it('keeps workspaces apart: the same externalId in another workspace is another statement and another row', async () => {
    const other = await h.game();
    await h.db.member.create({ data: { workspaceId: other.workspaceId, externalId: 'alice', joinedAt: new Date(Date.now() - 3 * DAY_MS) } });
    const { db, batches } = counted(h.db);
    const rows = new MemberRows(db);
    const [here, there] = await Promise.all([rows.load(g.workspaceId, 'alice', Date.now()), rows.load(other.workspaceId, 'alice', Date.now())]);
    expect(batches).to.deep.equal([1, 1]);
    expect(here?.positions).to.deep.equal([org.pChild]);
    expect(there?.positions).to.equal(null);
  });

  it('does not join a statement already sent: a later load sees what was written after it', async () => {
    const { db, batches, hold, release } = counted(h.db);
    const rows = new MemberRows(db);
    hold();
    const first = rows.load(g.workspaceId, 'carol', Date.now());
    await turn(); // the statement of `first` runs at the end of the turn; its answer is held
    await h.db.memberRecord.create({ data: { workspaceId: g.workspaceId, memberId: org.members.carol, type: 'certified', issuedAt: new Date(Date.now() - 1000) } });
    const second = rows.load(g.workspaceId, 'carol', Date.now()); // asked while the first is in flight
    release();
    expect((await first)?.records).to.equal(null);
    expect((await second)?.records?.map((r) => r.type)).to.deep.equal(['certified']);
    expect(batches).to.deep.equal([1, 1]);
  });

  it(`sends at most ${MAX_BATCH} users per statement`, async () => {
    const { db, batches } = counted(h.db);
    const rows = new MemberRows(db);
    const users = Array.from({ length: 2 * MAX_BATCH + 50 }, (_, i) => (i === 0 ? 'bob' : `nobody-${i}`));
    const found = await Promise.all(users.map((u) => rows.load(g.workspaceId, u, Date.now())));
    expect(batches).to.deep.equal([MAX_BATCH, MAX_BATCH, 50]);
    expect(found.filter(Boolean).map((r) => r!.external_id)).to.deep.equal(['bob']);
  });

  it('rejects every load of a batch whose statement fails', async () => {
    const down = createDb('postgresql://postgres@127.0.0.1:1/gis_nowhere?connect_timeout=2', 1);
    try {
      const rows = new MemberRows(down);
      const outcomes = await Promise.allSettled(['alice', 'bob', 'alice'].map((u) => rows.load(g.workspaceId, u, Date.now())));
      expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
    } finally {
      await down.$disconnect();
    }
  });

  // Who reads member rows at all (src/doors/door-access-service.ts `subject`): a player the workspace
  // snapshot does not list as a member, whose own subject version is still 0, is evaluated without SQL;
  // a Member created after the snapshot was loaded raises that version (memberChanged) and is read.
  it('door evaluations read the rows of members only, and see a member created after the snapshot through their raised version', async () => {
    const { db, batches } = counted(h.db);
    const service = new DoorAccessService({ db, redis: h.redis, keySpace: h.keySpace, doorCacheTtlSeconds: h.config.doorCacheTtlSeconds, doorDecisionWindowSeconds: h.config.doorDecisionWindowSeconds });
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'positions', subjectIds: [org.pOther] }], { defaultEffect: 'deny' });
    const decide = async (user: string) => {
      const answer = await service.bulk({ gameId: g.gameId, keyId: randomUUID(), signature: randomUUID() }, { externalId: user }, Date.now());
      const body = JSON.parse(doorBulkBody(answer, Date.now())) as { decisions: { doorKey: string; decision: string }[] };
      return body.decisions.find((d) => d.doorKey === door.key)?.decision;
    };
    expect(await decide('bob'), 'a member: rows read').to.equal('allow');
    expect(batches).to.deep.equal([1]);
    expect(await decide('player-1'), 'no member: no statement').to.equal('deny');
    expect(await decide('player-2')).to.equal('deny');
    expect(batches).to.deep.equal([1]);
    // A new member, created after the snapshot was loaded, through the path the workspace services take.
    const m = await h.db.member.create({ data: { workspaceId: g.workspaceId, externalId: 'player-3', joinedAt: new Date() } });
    await h.db.assignment.create({ data: { memberId: m.id, positionId: org.pOther } });
    await invalidator(h).memberChanged(g.workspaceId, 'player-3');
    expect(await decide('player-3')).to.equal('allow');
    expect(batches).to.deep.equal([1, 1]);
  });
});
