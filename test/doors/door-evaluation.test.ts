/**
 * Issue #5, "Evaluation": table-driven over the real endpoint and the real workspace data. Every subject
 * type (units with and without descendants), every condition, the order deny → highest-priority allow →
 * default, ties, forced states, and the reason + deciding policy of each decision.
 */
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { forceDoor } from '../../src/doors/door-admin-service.js';
import { buildOrg, check, DAY_MS, doorWith, type Org, type PolicySpec } from './door-fixtures.js';

const HOUR_MS = 3_600_000;

/** `HH:MM` in UTC, `minutes` from now. */
function utcClock(minutes: number): string {
  const d = new Date(Date.now() + minutes * 60_000);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
}

interface Case {
  name: string;
  /** Built once the org exists; policies are added in this order. */
  policies: (o: Org) => PolicySpec[];
  defaultEffect?: 'allow' | 'deny';
  /** user → expected decision and reason; `policy_allow:#1` means the id of the second policy. */
  expect: Record<string, [decision: 'allow' | 'deny', reason: string]>;
}

const CASES: Case[] = [
  // ── subjects ──
  {
    name: 'positions: holders of the position only',
    policies: (o) => [{ effect: 'allow', subjectType: 'positions', subjectIds: [o.pChild] }],
    expect: { alice: ['allow', 'policy_allow:#0'], bob: ['deny', 'default_deny'], stranger: ['deny', 'default_deny'] },
  },
  {
    name: 'units without descendants: members of that unit only',
    policies: (o) => [{ effect: 'allow', subjectType: 'units', subjectIds: [o.child] }],
    expect: { alice: ['allow', 'policy_allow:#0'], carol: ['deny', 'default_deny'], bob: ['deny', 'default_deny'] },
  },
  {
    name: 'units with descendants: the whole subtree',
    policies: (o) => [{ effect: 'allow', subjectType: 'units', subjectIds: [o.root], includeDescendants: true }],
    expect: { alice: ['allow', 'policy_allow:#0'], carol: ['allow', 'policy_allow:#0'], bob: ['deny', 'default_deny'], dan: ['deny', 'default_deny'] },
  },
  {
    name: 'organizations: through the organization of any ancestor unit',
    policies: (o) => [{ effect: 'allow', subjectType: 'organizations', subjectIds: [o.orgA] }],
    expect: { alice: ['allow', 'policy_allow:#0'], carol: ['allow', 'policy_allow:#0'], bob: ['deny', 'default_deny'] },
  },
  {
    name: 'organizations: another organization',
    policies: (o) => [{ effect: 'allow', subjectType: 'organizations', subjectIds: [o.orgB] }],
    expect: { bob: ['allow', 'policy_allow:#0'], alice: ['deny', 'default_deny'] },
  },
  {
    name: 'users: named externalIds, members or not',
    policies: () => [{ effect: 'allow', subjectType: 'users', subjectIds: ['stranger', 'bob'] }],
    expect: { stranger: ['allow', 'policy_allow:#0'], bob: ['allow', 'policy_allow:#0'], dan: ['deny', 'default_deny'] },
  },
  {
    name: 'everyone: members and non-members',
    policies: () => [{ effect: 'allow', subjectType: 'everyone' }],
    expect: { stranger: ['allow', 'policy_allow:#0'], dan: ['allow', 'policy_allow:#0'] },
  },
  // ── conditions ──
  {
    name: 'clockedIn: true needs an open shift',
    policies: () => [{ effect: 'allow', subjectType: 'everyone', conditions: { clockedIn: true } }],
    expect: { alice: ['allow', 'policy_allow:#0'], bob: ['deny', 'default_deny'], stranger: ['deny', 'default_deny'] },
  },
  {
    name: 'clockedIn: false needs no open shift',
    policies: () => [{ effect: 'allow', subjectType: 'everyone', conditions: { clockedIn: false } }],
    expect: { alice: ['deny', 'default_deny'], bob: ['allow', 'policy_allow:#0'] },
  },
  {
    name: 'operationType: a workspace-wide operation in progress applies to everyone',
    policies: () => [{ effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'raid' } }],
    expect: { alice: ['allow', 'policy_allow:#0'], stranger: ['allow', 'policy_allow:#0'] },
  },
  {
    name: "operationType: a unit's operation applies to that unit's subtree only",
    policies: () => [{ effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'patrol' } }],
    expect: { alice: ['allow', 'policy_allow:#0'], carol: ['allow', 'policy_allow:#0'], bob: ['deny', 'default_deny'], stranger: ['deny', 'default_deny'] },
  },
  {
    name: "operationType: an organization's operation applies to its members only",
    policies: () => [{ effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'muster' } }],
    expect: { bob: ['allow', 'policy_allow:#0'], alice: ['deny', 'default_deny'] },
  },
  {
    name: 'operationType: scheduled later or already over does not count',
    policies: () => [
      { effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'drill' } },
      { effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'parade' } },
    ],
    expect: { alice: ['deny', 'default_deny'], stranger: ['deny', 'default_deny'] },
  },
  {
    name: 'noActiveRecordType: an active record blocks; expired, revoked or future ones do not',
    policies: () => [
      { effect: 'allow', subjectType: 'everyone', priority: 2, conditions: { noActiveRecordType: 'warning' } },
    ],
    expect: { alice: ['deny', 'default_deny'], bob: ['allow', 'policy_allow:#0'], carol: ['allow', 'policy_allow:#0'], stranger: ['allow', 'policy_allow:#0'] },
  },
  {
    name: 'minTenureDays: whole days since joining; non-members never qualify',
    policies: () => [{ effect: 'allow', subjectType: 'everyone', conditions: { minTenureDays: 30 } }],
    expect: { alice: ['allow', 'policy_allow:#0'], carol: ['allow', 'policy_allow:#0'], bob: ['deny', 'default_deny'], stranger: ['deny', 'default_deny'] },
  },
  {
    name: 'timeWindow: inside the window (UTC, every day)',
    policies: () => [{ effect: 'allow', subjectType: 'everyone', conditions: { timeWindow: { from: utcClock(-60), to: utcClock(60), timeZone: 'UTC' } } }],
    expect: { alice: ['allow', 'policy_allow:#0'], stranger: ['allow', 'policy_allow:#0'] },
  },
  {
    name: 'timeWindow: outside the window, or not on a listed day',
    policies: () => {
      const today = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][new Date(Date.now() + 2 * HOUR_MS).getUTCDay()]!;
      const notToday = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].filter((d) => d !== today);
      return [
        { effect: 'allow', subjectType: 'everyone', conditions: { timeWindow: { from: utcClock(120), to: utcClock(180), timeZone: 'UTC' } } },
        { effect: 'allow', subjectType: 'everyone', conditions: { timeWindow: { days: notToday.slice(0, 1), from: utcClock(-60), to: utcClock(60), timeZone: 'UTC' } } },
      ];
    },
    expect: { alice: ['deny', 'default_deny'] },
  },
  {
    name: 'every condition of a policy must hold',
    policies: () => {
      const all = { clockedIn: true, operationType: 'raid', noActiveRecordType: 'strike', minTenureDays: 30, timeWindow: { from: utcClock(-60), to: utcClock(60), timeZone: 'UTC' } };
      return [
        { effect: 'allow', subjectType: 'everyone', priority: 1, conditions: all },
        { effect: 'allow', subjectType: 'everyone', priority: 2, conditions: { ...all, minTenureDays: 500 } },
      ];
    },
    expect: { alice: ['allow', 'policy_allow:#0'], bob: ['deny', 'default_deny'] },
  },
  // ── order and ties ──
  {
    name: 'deny wins over any allow, whatever the priorities',
    policies: (o) => [
      { effect: 'allow', subjectType: 'everyone', priority: 100 },
      { effect: 'deny', subjectType: 'positions', subjectIds: [o.pChild], priority: -5 },
    ],
    defaultEffect: 'deny',
    expect: { alice: ['deny', 'policy_deny:#1'], bob: ['allow', 'policy_allow:#0'] },
  },
  {
    name: 'the highest-priority applicable allow is the one named',
    policies: () => [
      { effect: 'allow', subjectType: 'everyone', priority: 1 },
      { effect: 'allow', subjectType: 'users', subjectIds: ['alice'], priority: 5 },
      { effect: 'allow', subjectType: 'users', subjectIds: ['alice'], priority: 9, conditions: { minTenureDays: 10_000 } },
    ],
    expect: { alice: ['allow', 'policy_allow:#1'], bob: ['allow', 'policy_allow:#0'] },
  },
  {
    name: 'equal priority: the oldest policy is named',
    policies: () => [
      { effect: 'allow', subjectType: 'everyone', priority: 3 },
      { effect: 'allow', subjectType: 'everyone', priority: 3 },
      { effect: 'deny', subjectType: 'users', subjectIds: ['bob'], priority: 3 },
      { effect: 'deny', subjectType: 'users', subjectIds: ['bob'], priority: 3 },
    ],
    expect: { alice: ['allow', 'policy_allow:#0'], bob: ['deny', 'policy_deny:#2'] },
  },
  {
    name: 'several denies: the highest-priority deny is named',
    policies: () => [
      { effect: 'deny', subjectType: 'everyone', priority: 1 },
      { effect: 'deny', subjectType: 'users', subjectIds: ['alice'], priority: 7 },
    ],
    defaultEffect: 'allow',
    expect: { alice: ['deny', 'policy_deny:#1'], bob: ['deny', 'policy_deny:#0'] },
  },
  {
    name: 'a deny whose conditions fail does not apply',
    policies: () => [
      { effect: 'allow', subjectType: 'everyone' },
      { effect: 'deny', subjectType: 'everyone', priority: 50, conditions: { clockedIn: true } },
    ],
    expect: { alice: ['deny', 'policy_deny:#1'], bob: ['allow', 'policy_allow:#0'] },
  },
  {
    name: 'nothing applies: the default (allow)',
    policies: () => [{ effect: 'deny', subjectType: 'users', subjectIds: ['bob'] }],
    defaultEffect: 'allow',
    expect: { alice: ['allow', 'default_allow'], bob: ['deny', 'policy_deny:#0'] },
  },
  {
    name: 'no policies at all: the default (deny)',
    policies: () => [],
    expect: { alice: ['deny', 'default_deny'], stranger: ['deny', 'default_deny'] },
  },
];

describe('door evaluation (table)', () => {
  const h = new Harness();
  let g: TestGame;
  let org: Org;

  before(async () => {
    g = await h.game(['doors', 'heartbeat']);
    const now = Date.now();
    org = await buildOrg(h, g.workspaceId, now);
    const ws = g.workspaceId;
    // alice: clocked in, an active warning; bob: an expired strike, a revoked warning; carol: a warning issued in an hour
    await h.db.shift.create({ data: { workspaceId: ws, memberId: org.members.alice, openedAt: new Date(now - HOUR_MS) } });
    await h.db.shift.create({ data: { workspaceId: ws, memberId: org.members.bob, openedAt: new Date(now - 3 * HOUR_MS), closedAt: new Date(now - 2 * HOUR_MS) } });
    await h.db.memberRecord.create({ data: { workspaceId: ws, memberId: org.members.alice, type: 'warning', issuedAt: new Date(now - DAY_MS) } });
    await h.db.memberRecord.create({ data: { workspaceId: ws, memberId: org.members.bob, type: 'strike', issuedAt: new Date(now - 9 * DAY_MS), expiresAt: new Date(now - DAY_MS) } });
    await h.db.memberRecord.create({ data: { workspaceId: ws, memberId: org.members.bob, type: 'warning', issuedAt: new Date(now - DAY_MS), revoked: true } });
    await h.db.memberRecord.create({ data: { workspaceId: ws, memberId: org.members.carol, type: 'warning', issuedAt: new Date(now + HOUR_MS) } });
    const op = (type: string, startsIn: number, endsIn: number, scope: { unitId?: string; organizationId?: string } = {}) =>
      h.db.operation.create({ data: { workspaceId: ws, type, title: type, startsAt: new Date(now + startsIn), endsAt: new Date(now + endsIn), ...scope } });
    await op('raid', -HOUR_MS, HOUR_MS);
    await op('patrol', -HOUR_MS, HOUR_MS, { unitId: org.root });
    await op('muster', -HOUR_MS, HOUR_MS, { organizationId: org.orgB });
    await op('drill', HOUR_MS, 2 * HOUR_MS);
    await op('parade', -2 * HOUR_MS, -HOUR_MS);
  });
  after(() => h.close());

  for (const c of CASES) {
    it(c.name, async () => {
      const door = await doorWith(h, g.gameId, c.policies(org), { defaultEffect: c.defaultEffect ?? 'deny', failMode: 'open' });
      for (const [user, [decision, reason]] of Object.entries(c.expect)) {
        const res = await check(h, g, door.key, user);
        expect(res.status, `${user}: ${res.text}`).to.equal(200);
        const want = reason.replace(/#(\d+)/, (_m, i: string) => door.ids[Number(i)]!);
        expect({ user, decision: res.body.decision, reason: res.body.reason }).to.deep.equal({ user, decision, reason: want });
        const policy = /^policy_(allow|deny):(.+)$/.exec(want);
        expect(res.body.policyId).to.equal(policy ? policy[2] : null);
        expect(res.body).to.include({ doorKey: door.key, externalId: user, failMode: 'open', forcedState: 'auto' });
      }
    });
  }

  it('stored policies with invalid conditions fail closed: an allow is ignored, a deny applies unconditionally', async () => {
    const allow = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }, { effect: 'allow', subjectType: 'everyone', priority: 9 }]);
    const deny = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }, { effect: 'deny', subjectType: 'everyone', conditions: { clockedIn: true } }]);
    // written around the operator tools (which would refuse them), then the version raised as any change does
    await h.db.doorPolicy.update({ where: { id: allow.ids[1]! }, data: { conditions: { clockedin: true } } });
    await h.db.doorPolicy.update({ where: { id: deny.ids[1]! }, data: { conditions: { timeWindow: { from: 'noon' } } } });
    await forceDoor({ db: h.db, redis: h.redis, keySpace: h.keySpace }, g.gameId, allow.key, 'auto', 'test');
    expect((await check(h, g, allow.key, 'bob')).body).to.include({ decision: 'allow', reason: `policy_allow:${allow.ids[0]}` });
    expect((await check(h, g, deny.key, 'bob')).body).to.include({ decision: 'deny', reason: `policy_deny:${deny.ids[1]}` });
  });

  it('forced locked / unlocked override every policy until returned to auto', async () => {
    const deps = { db: h.db, redis: h.redis, keySpace: h.keySpace };
    const allowAll = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', priority: 1000 }]);
    const denyAll = await doorWith(h, g.gameId, [{ effect: 'deny', subjectType: 'everyone' }], { defaultEffect: 'allow' });
    await forceDoor(deps, g.gameId, allowAll.key, 'locked', 'test');
    await forceDoor(deps, g.gameId, denyAll.key, 'unlocked', 'test');
    for (const user of ['alice', 'stranger']) {
      expect((await check(h, g, allowAll.key, user)).body).to.include({ decision: 'deny', reason: 'forced_locked', policyId: null, forcedState: 'locked' });
      expect((await check(h, g, denyAll.key, user)).body).to.include({ decision: 'allow', reason: 'forced_unlocked', policyId: null, forcedState: 'unlocked' });
    }
    await forceDoor(deps, g.gameId, allowAll.key, 'auto', 'test');
    await forceDoor(deps, g.gameId, denyAll.key, 'auto', 'test');
    expect((await check(h, g, allowAll.key, 'alice')).body).to.include({ decision: 'allow', reason: `policy_allow:${allowAll.ids[0]}`, forcedState: 'auto' });
    expect((await check(h, g, denyAll.key, 'alice')).body).to.include({ decision: 'deny', reason: `policy_deny:${denyAll.ids[0]}`, forcedState: 'auto' });
  });
});
