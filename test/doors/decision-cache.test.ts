/**
 * Issue #5: "Decisions are cached in Redis per (game, user) with the TTL; any change to doors, policies,
 * forced state, or to the member's positions, records, clock-in state or the schedule that could change a
 * decision invalidates or versions the cache so no decision older than the change is served. Time-window
 * and operation conditions expire cached decisions at their boundaries."
 *
 * Workspace writes are made the way the workspace services make them: the row, then the door
 * invalidation hook (src/doors/subject-invalidation.ts).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Harness, type TestGame } from '../support/harness.js';
import { addPolicy, createDoor, deletePolicy, deleteDoor, forceDoor } from '../../src/doors/door-admin-service.js';
import { DoorAccessService } from '../../src/doors/door-access-service.js';
import { doorCheckBody } from '../../src/adapters/http/door-responses.js';
import { DecisionCache, packDecision } from '../../src/doors/decision-cache.js';
import { scanKeys } from '../support/redis-keys.js';
import { DOOR_CONTEXT_ORDINALS_MAX } from '../../src/store/lua/door-store.js';
import { buildOrg, check, bulk, DAY_MS, doorWith, invalidator, type Org } from './door-fixtures.js';

const HOUR_MS = 3_600_000;

describe('door decision cache', () => {
  const h = new Harness();
  let g: TestGame;
  let org: Org;
  const deps = () => ({ db: h.db, redis: h.redis, keySpace: h.keySpace });

  before(async () => {
    g = await h.game(['doors', 'heartbeat']);
    org = await buildOrg(h, g.workspaceId);
  });
  after(() => h.close());

  /** Checks twice: the first is evaluated, the second must come from the cache with the same answer. */
  async function cachedDecision(doorKey: string, user: string): Promise<string> {
    const first = await check(h, g, doorKey, user);
    expect(first.status, first.text).to.equal(200);
    const second = await check(h, g, doorKey, user);
    expect(second.body).to.include({ cached: true, decision: first.body.decision, reason: first.body.reason });
    expect(second.body.ttlSeconds).to.be.within(0, h.config.doorCacheTtlSeconds);
    return first.body.decision;
  }

  async function freshDecision(doorKey: string, user: string): Promise<string> {
    const res = await check(h, g, doorKey, user);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.cached).to.equal(false);
    return res.body.decision;
  }

  it('serves a repeated check from the cache, per user', async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['alice'] }]);
    const first = await check(h, g, door.key, 'alice');
    expect(first.body).to.include({ cached: false, decision: 'allow' });
    expect(first.body.ttlSeconds).to.equal(h.config.doorCacheTtlSeconds);
    const again = await check(h, g, door.key, 'alice');
    expect(again.body).to.include({ cached: true, decision: 'allow', reason: first.body.reason, doorsVersion: first.body.doorsVersion });
    expect(await freshDecision(door.key, 'bob')).to.equal('deny');
  });

  it('door, policy and forced-state changes retire cached decisions', async () => {
    // A different user per step: a client re-checks a (user, door) only after its TTL, and the door-check
    // quota (src/limits/quotas.ts) allows 10 per TTL.
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }]);
    expect(await cachedDecision(door.key, 'alice')).to.equal('allow');
    const deny = await addPolicy(deps(), { gameId: g.gameId, doorKey: door.key, effect: 'deny', subjectType: 'users', subjectIds: ['alice', 'bob'] }, 'test');
    expect(await freshDecision(door.key, 'alice')).to.equal('deny');
    expect(await cachedDecision(door.key, 'bob')).to.equal('deny');
    await deletePolicy(deps(), g.gameId, deny.id, 'test');
    expect(await freshDecision(door.key, 'bob')).to.equal('allow');
    expect(await cachedDecision(door.key, 'carol')).to.equal('allow');
    await forceDoor(deps(), g.gameId, door.key, 'locked', 'test');
    expect((await check(h, g, door.key, 'carol')).body).to.include({ cached: false, decision: 'deny', reason: 'forced_locked' });
    expect(await cachedDecision(door.key, 'dan')).to.equal('deny');
    await forceDoor(deps(), g.gameId, door.key, 'auto', 'test');
    expect(await freshDecision(door.key, 'dan')).to.equal('allow');
    await deleteDoor(deps(), g.gameId, door.key, 'test');
    expect((await check(h, g, door.key, 'stranger')).status).to.equal(404);
    await createDoor(deps(), { gameId: g.gameId, key: door.key, name: 'again', defaultEffect: 'deny' }, 'test');
    expect((await check(h, g, door.key, 'stranger')).body).to.include({ cached: false, decision: 'deny', reason: 'default_deny' });
  });

  it("a member's positions: assignment added or removed", async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'positions', subjectIds: [org.pRoot] }]);
    expect(await cachedDecision(door.key, 'dan')).to.equal('deny');
    const a = await h.db.assignment.create({ data: { memberId: org.members.dan, positionId: org.pRoot } });
    await invalidator(h).memberChanged(g.workspaceId, 'dan');
    expect(await freshDecision(door.key, 'dan')).to.equal('allow');
    await h.db.assignment.delete({ where: { id: a.id } });
    await invalidator(h).memberChanged(g.workspaceId, 'dan');
    expect(await freshDecision(door.key, 'dan')).to.equal('deny');
  });

  it("a member's records: issued, then revoked", async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { noActiveRecordType: 'suspension' } }]);
    expect(await cachedDecision(door.key, 'carol')).to.equal('allow');
    const r = await h.db.memberRecord.create({ data: { workspaceId: g.workspaceId, memberId: org.members.carol, type: 'suspension', issuedAt: new Date() } });
    await invalidator(h).memberChanged(g.workspaceId, 'carol');
    expect(await freshDecision(door.key, 'carol')).to.equal('deny');
    await h.db.memberRecord.update({ where: { id: r.id }, data: { revoked: true } });
    await invalidator(h).memberChanged(g.workspaceId, 'carol');
    expect(await freshDecision(door.key, 'carol')).to.equal('allow');
  });

  it('clock-in state: shift opened, then closed', async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { clockedIn: true } }]);
    expect(await cachedDecision(door.key, 'bob')).to.equal('deny');
    const s = await h.db.shift.create({ data: { workspaceId: g.workspaceId, memberId: org.members.bob, openedAt: new Date() } });
    await invalidator(h).memberChanged(g.workspaceId, 'bob');
    expect(await freshDecision(door.key, 'bob')).to.equal('allow');
    await h.db.shift.update({ where: { id: s.id }, data: { closedAt: new Date() } });
    await invalidator(h).memberChanged(g.workspaceId, 'bob');
    expect(await freshDecision(door.key, 'bob')).to.equal('deny');
  });

  it('the schedule: an operation created, then cancelled', async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'exercise' } }]);
    expect(await cachedDecision(door.key, 'alice')).to.equal('deny');
    expect(await cachedDecision(door.key, 'stranger')).to.equal('deny');
    const op = await h.db.operation.create({ data: { workspaceId: g.workspaceId, type: 'exercise', title: 'x', startsAt: new Date(Date.now() - HOUR_MS), endsAt: new Date(Date.now() + HOUR_MS) } });
    await invalidator(h).workspaceChanged(g.workspaceId);
    expect(await freshDecision(door.key, 'alice')).to.equal('allow');
    expect(await freshDecision(door.key, 'stranger')).to.equal('allow');
    await h.db.operation.delete({ where: { id: op.id } });
    await invalidator(h).workspaceChanged(g.workspaceId);
    expect(await freshDecision(door.key, 'alice')).to.equal('deny');
  });

  it('the org tree: a unit moved under another', async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'units', subjectIds: [org.root], includeDescendants: true }]);
    expect(await cachedDecision(door.key, 'bob')).to.equal('deny');
    await h.db.unit.update({ where: { id: org.other }, data: { parentId: org.root } });
    await invalidator(h).workspaceChanged(g.workspaceId);
    try {
      expect(await freshDecision(door.key, 'bob')).to.equal('allow');
    } finally {
      await h.db.unit.update({ where: { id: org.other }, data: { parentId: null } });
      await invalidator(h).workspaceChanged(g.workspaceId);
    }
  });

  it("one member's change leaves other members' cached decisions alone", async () => {
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }]);
    await cachedDecision(door.key, 'alice');
    await cachedDecision(door.key, 'bob');
    await invalidator(h).memberChanged(g.workspaceId, 'alice');
    expect((await check(h, g, door.key, 'bob')).body.cached).to.equal(true);
    expect((await check(h, g, door.key, 'alice')).body.cached).to.equal(false);
  });

  it('a bulk check answers from what single checks cached, and caches nothing itself', async () => {
    const other = await h.game(['doors']);
    const a = await doorWith(h, other.gameId, [{ effect: 'allow', subjectType: 'users', subjectIds: ['u1'] }], { key: 'a' });
    await doorWith(h, other.gameId, [], { key: 'b' });
    /** Every field of the game's decision hashes, `<key> <field>` → value. */
    const cacheContents = async () => {
      const out: Record<string, string> = {};
      const pattern = `${h.keySpace.game(other.gameId).base.replace(/[[\]*?\\]/g, '\\$&')}:doors:dc:*`;
      for (const key of await scanKeys(h.redis, pattern)) for (const [f, v] of Object.entries(await h.redis.hgetall(key))) out[`${key} ${f}`] = v;
      return out;
    };
    expect((await check(h, other, a.key, 'u1')).body.cached).to.equal(false);
    const before = await cacheContents();
    expect(Object.keys(before).some((k) => k.endsWith(' u1')), 'the single check cached a pointer').to.equal(true);
    const res = await bulk(h, other, 'u1');
    expect(res.status).to.equal(200);
    expect(res.body.decisions.map((d: { doorKey: string; decision: string }) => [d.doorKey, d.decision])).to.deep.equal([['a', 'allow'], ['b', 'deny']]);
    expect((await bulk(h, other, 'u2')).body.decisions.map((d: { decision: string }) => d.decision)).to.deep.equal(['deny', 'deny']);
    expect(await cacheContents()).to.deep.equal(before);
    // door b was evaluated by the bulk but not cached; door a still comes from the single check's entry
    expect((await check(h, other, 'b', 'u1')).body.cached).to.equal(false);
    expect((await check(h, other, 'a', 'u1')).body.cached).to.equal(true);
  });

  describe('time boundaries end a cached decision', () => {
    let service: DoorAccessService;
    const call = (doorKey: string, user: string, nowMs: number) =>
      service.check({ gameId: g.gameId, keyId: randomUUID(), signature: randomUUID() }, { doorKey, externalId: user }, nowMs).then((a) => JSON.parse(doorCheckBody(a, nowMs)) as Record<string, unknown>);

    before(() => {
      service = new DoorAccessService({ db: h.db, redis: h.redis, keySpace: h.keySpace, doorCacheTtlSeconds: h.config.doorCacheTtlSeconds, doorDecisionWindowSeconds: h.config.doorDecisionWindowSeconds });
    });

    it('an operation ending', async () => {
      const now = Date.now();
      await h.db.operation.create({ data: { workspaceId: g.workspaceId, type: 'sprint', title: 's', startsAt: new Date(now - HOUR_MS), endsAt: new Date(now + 30_000) } });
      await invalidator(h).workspaceChanged(g.workspaceId);
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'sprint' } }]);
      const first = await call(door.key, 'alice', now);
      expect(first).to.include({ decision: 'allow', cached: false });
      expect(first.ttlSeconds).to.be.within(29, 30);
      expect(await call(door.key, 'alice', now + 29_000)).to.include({ decision: 'allow', cached: true });
      expect(await call(door.key, 'alice', now + 30_000)).to.include({ decision: 'deny', cached: false });
    });

    it('an operation starting', async () => {
      const now = Date.now();
      await h.db.operation.create({ data: { workspaceId: g.workspaceId, type: 'briefing', title: 'b', startsAt: new Date(now + 20_000), endsAt: new Date(now + HOUR_MS) } });
      await invalidator(h).workspaceChanged(g.workspaceId);
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { operationType: 'briefing' } }]);
      expect((await call(door.key, 'bob', now)).ttlSeconds).to.be.within(19, 20);
      expect(await call(door.key, 'bob', now + 20_000)).to.include({ decision: 'allow', cached: false });
    });

    it('a record expiring', async () => {
      const now = Date.now();
      await h.db.memberRecord.create({ data: { workspaceId: g.workspaceId, memberId: org.members.dan, type: 'timeout', issuedAt: new Date(now - HOUR_MS), expiresAt: new Date(now + 15_000) } });
      await invalidator(h).memberChanged(g.workspaceId, 'dan');
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { noActiveRecordType: 'timeout' } }]);
      const first = await call(door.key, 'dan', now);
      expect(first).to.include({ decision: 'deny' });
      expect(first.ttlSeconds).to.be.within(14, 15);
      expect(await call(door.key, 'dan', now + 15_000)).to.include({ decision: 'allow', cached: false });
    });

    it('a tenure threshold reached', async () => {
      const now = Date.now();
      await h.db.member.update({ where: { id: org.members.dan }, data: { joinedAt: new Date(now - 7 * DAY_MS + 10_000) } });
      await invalidator(h).memberChanged(g.workspaceId, 'dan');
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { minTenureDays: 7 } }]);
      const first = await call(door.key, 'dan', now);
      expect(first).to.include({ decision: 'deny' });
      expect(first.ttlSeconds).to.be.within(9, 10);
      expect(await call(door.key, 'dan', now + 10_000)).to.include({ decision: 'allow', cached: false });
    });

    it('a time window closing', async () => {
      const now = Date.now();
      const d = new Date(now);
      const hhmm = (t: Date) => `${String(t.getUTCHours()).padStart(2, '0')}:${String(t.getUTCMinutes()).padStart(2, '0')}`;
      const nextMinute = Math.floor(now / 60_000) * 60_000 + 60_000;
      const door = await doorWith(h, g.gameId, [
        { effect: 'allow', subjectType: 'everyone', conditions: { timeWindow: { from: hhmm(new Date(now - HOUR_MS)), to: hhmm(new Date(nextMinute)), timeZone: 'UTC' } } },
      ]);
      expect(d.getTime()).to.be.below(nextMinute);
      const first = await call(door.key, 'alice', now);
      expect(first).to.include({ decision: 'allow' });
      expect(first.ttlSeconds).to.equal(Math.floor((nextMinute - now) / 1000));
      expect(await call(door.key, 'alice', nextMinute)).to.include({ decision: 'deny', cached: false });
    });
  });

  describe('compact form (issue #15 item 5)', () => {
    const policyId = randomUUID();
    const json = (o: Record<string, unknown>) => JSON.stringify({ doorKey: 'gate', decision: 'allow', reason: 'default_allow', policyId: null, failMode: 'closed', forcedState: 'auto', ...o });
    const decisions = [
      json({}),
      json({ decision: 'deny', reason: 'default_deny', failMode: 'open' }),
      json({ decision: 'deny', reason: `policy_deny:${policyId}`, policyId }),
      json({ reason: `policy_allow:${policyId}`, policyId, failMode: 'open' }),
      json({ decision: 'deny', reason: 'forced_locked', forcedState: 'locked' }),
      json({ reason: 'forced_unlocked', forcedState: 'unlocked' }),
    ];

    it('stores letters and the policy id, not the JSON', () => {
      expect(packDecision('gate', decisions[0]!)).to.equal('aca');
      expect(packDecision('gate', decisions[2]!)).to.equal(`dca${policyId}`);
      expect(packDecision('gate', decisions[4]!)).to.equal('dcl');
      // what the letters cannot rebuild byte for byte is stored as the JSON itself
      for (const odd of [json({ doorKey: 'ga"te' }), json({ reason: 'something_else' }), JSON.stringify({ doorKey: 'gate', allowed: true })]) {
        const doorKey = (JSON.parse(odd) as { doorKey: string }).doorKey;
        expect(packDecision(doorKey, odd)).to.equal(odd);
      }
    });

    it('a hit answers the exact JSON that was cached, for every kind of reason', async () => {
      const cache = new DecisionCache(h.redis, h.keySpace, h.config.doorDecisionWindowSeconds);
      const now = Date.now();
      // six compact codes and one door key JSON must escape (stored as JSON)
      const stored = [...decisions.map((j, i) => ({ doorKey: `door-${i}`, json: j.replace('"doorKey":"gate"', `"doorKey":"door-${i}"`) })), { doorKey: 'ga"te', json: json({ doorKey: 'ga"te' }) }];
      const first = await cache.lookup({ gameId: g.gameId, keyId: 'compact-key', signature: `compact-${now}-1`, mode: 'all', externalId: 'compact-user', nowMs: now });
      await cache.store({
        gameId: g.gameId,
        doorsVersion: first.doorsVersion ?? 1,
        subjectVersion: first.subjectVersion,
        externalId: 'compact-user',
        contextKey: 'compact-context',
        nowMs: now,
        fresh: stored.map((s) => ({ doorKey: s.doorKey, decision: { expiresAtMs: now + 30_000, decision: s.json.includes('"decision":"deny"') ? 'deny' : 'allow', json: s.json } })),
        logged: [],
      });
      const hit = await cache.lookup({ gameId: g.gameId, keyId: 'compact-key', signature: `compact-${now}-2`, mode: 'all', externalId: 'compact-user', nowMs: now + 1 });
      for (const s of stored) {
        expect(hit.hits.get(s.doorKey)?.json).to.equal(s.json, s.doorKey);
        expect(hit.hits.get(s.doorKey)?.expiresAtMs).to.equal(now + 30_000);
      }
    });

    it('300 users in one window: listpack-sized shards, and every user finds their decision', async () => {
      const cache = new DecisionCache(h.redis, h.keySpace, h.config.doorDecisionWindowSeconds);
      const ttlMs = h.config.doorDecisionWindowSeconds * 1000;
      // the middle of a door-cache window, so every store and lookup lands in one window
      const now = (Math.floor(Date.now() / ttlMs) + 1) * ttlMs + ttlMs / 2;
      const users = Array.from({ length: 300 }, (_, i) => `shard-user-${i}`);
      const decision = json({ doorKey: 'lobby' });
      let doorsVersion = 1;
      for (const u of users) {
        const found = await cache.lookup({ gameId: g.gameId, keyId: 'shard-key', signature: `shard-${now}-${u}`, mode: 'one', externalId: u, doorKey: 'lobby', nowMs: now });
        doorsVersion = found.doorsVersion ?? 1;
        await cache.store({ gameId: g.gameId, doorsVersion, subjectVersion: found.subjectVersion, externalId: u, contextKey: `context-of-${u}`, nowMs: now, fresh: [{ doorKey: 'lobby', decision: { expiresAtMs: now + 20_000, decision: 'allow', json: decision } }], logged: [] });
      }
      const head = h.keySpace.game(g.gameId).doorDecisions(String(doorsVersion), Math.floor(now / ttlMs));
      const shards = await scanKeys(h.redis, `${head.replace(/[[\]*?\\]/g, '\\$&')}*`);
      expect(shards.length).to.be.greaterThan(8); // 300 pointers and 300 contexts
      let fields = 0;
      for (const shard of shards) {
        expect(await h.redis.object('ENCODING', shard)).to.equal('listpack', shard);
        expect(await h.redis.hlen(shard)).to.be.at.most(128);
        expect(await h.redis.pttl(shard)).to.be.greaterThan(0);
        fields += (await h.redis.hkeys(shard)).filter((f) => f.startsWith('shard-user-')).length;
      }
      expect(fields).to.equal(users.length);
      for (const u of users) {
        const hit = await cache.lookup({ gameId: g.gameId, keyId: 'shard-key', signature: `shard-${now}-${u}-again`, mode: 'one', externalId: u, doorKey: 'lobby', nowMs: now + 1 });
        expect(hit.hits.get('lobby')?.json).to.equal(decision, u);
      }
    });
  });
  describe('one entry per subject context (issue #32 item 4)', () => {
    /** Every field of the game's decision hashes under the doors version `door`'s check answers with. */
    async function decisionFields(doorKey: string): Promise<Map<string, Buffer>> {
      const { doorsVersion } = (await check(h, g, doorKey, 'fields-reader')).body as { doorsVersion: number };
      const prefix = h.keySpace.game(g.gameId).doorDecisions(String(doorsVersion), 0).replace(/0$/, '');
      const fields = new Map<string, Buffer>();
      for (const key of await scanKeys(h.redis, `${prefix.replace(/[[\]*?\\]/g, '\\$&')}*`)) {
        for (const [f, v] of Object.entries(await h.redis.hgetallBuffer(key))) if (f !== '') fields.set(f, v);
      }
      return fields;
    }

    it('users with equal contexts share one cached entry: each has a pointer, the decisions are stored once', async () => {
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }]);
      const guests = ['guest-1', 'guest-2', 'guest-3'];
      for (const u of guests) expect(await cachedDecision(door.key, u)).to.equal('allow');
      const fields = await decisionFields(door.key);
      const contexts = [...fields.keys()].filter((f) => f.startsWith('#'));
      expect(contexts, JSON.stringify([...fields.keys()])).to.have.length(1);
      // the context's value holds the door's decision; a pointer holds none of its own
      expect(fields.get(contexts[0]!)!.includes(door.key)).to.equal(true);
      for (const u of guests) {
        expect(fields.has(u), u).to.equal(true);
        expect(fields.get(u)!.includes(door.key), u).to.equal(false);
      }
    });

    it('a member of a position and a user named by a policy get their own contexts and their own decisions', async () => {
      const door = await doorWith(h, g.gameId, [
        { effect: 'allow', subjectType: 'positions', subjectIds: [org.pChild] },
        { effect: 'allow', subjectType: 'users', subjectIds: ['named-guest'] },
      ]);
      expect(await cachedDecision(door.key, 'plain-guest')).to.equal('deny');
      expect(await cachedDecision(door.key, 'alice')).to.equal('allow');
      expect(await cachedDecision(door.key, 'named-guest')).to.equal('allow');
      expect((await check(h, g, door.key, 'plain-guest')).body).to.include({ cached: true, decision: 'deny' });
      expect((await check(h, g, door.key, 'other-guest')).body).to.include({ decision: 'deny' });
      const contexts = [...(await decisionFields(door.key)).keys()].filter((f) => f.startsWith('#'));
      expect(contexts).to.have.length(3); // guests, alice, named-guest
    });

    it('a pointer names its context by an ordinal, interned per doors version for as long as the decisions live', async () => {
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }]);
      for (const u of ['ordinal-a', 'ordinal-b']) expect(await cachedDecision(door.key, u)).to.equal('allow');
      const fields = await decisionFields(door.key);
      // a new doors version starts its own ordinals
      expect([...fields.keys()].filter((f) => f.startsWith('#'))).to.deep.equal(['#1']);
      // msgpack [subjectVersion, "#1"]: fixarray(2), fixstr "<w>.<u>", fixstr "#1"
      const pointer = fields.get('ordinal-a')!;
      expect(pointer.subarray(-3).toString('latin1')).to.equal('\xa2#1');
      expect(pointer.length).to.be.below(12);
      const { doorsVersion } = (await check(h, g, door.key, 'ordinal-a')).body as { doorsVersion: number };
      const ordinals = h.keySpace.game(g.gameId).doorContexts(String(doorsVersion));
      const interned = await h.redis.hgetall(ordinals);
      expect(Object.keys(interned)).to.have.length(2);
      expect(interned['']).to.equal('1');
      const [name] = Object.keys(interned).filter((f) => f !== '');
      expect(name).to.match(/^\d+:[\w-]{22}$/);
      // it expires, but not before any decision hash of its doors version
      const prefix = h.keySpace.game(g.gameId).doorDecisions(String(doorsVersion), 0).replace(/0$/, '');
      const ttls = await Promise.all((await scanKeys(h.redis, `${prefix.replace(/[[\]*?\\]/g, '\\$&')}*`)).map((k) => h.redis.pttl(k)));
      expect(ttls.length).to.be.at.least(1);
      expect(await h.redis.pttl(ordinals)).to.be.at.least(Math.max(...ttls) - 1000);
    });

    it('past the most ordinals per doors version, a new context is named in full and still served from the cache', async () => {
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'positions', subjectIds: [org.pChild] }]);
      expect(await cachedDecision(door.key, 'capped-guest')).to.equal('deny');
      const { doorsVersion } = (await check(h, g, door.key, 'capped-guest')).body as { doorsVersion: number };
      const ordinals = h.keySpace.game(g.gameId).doorContexts(String(doorsVersion));
      await h.redis.hset(ordinals, '', String(DOOR_CONTEXT_ORDINALS_MAX));
      expect(await cachedDecision(door.key, 'alice')).to.equal('allow');
      const contexts = [...(await decisionFields(door.key)).keys()].filter((f) => f.startsWith('#'));
      expect(contexts.sort()).to.deep.equal(['#1', contexts.find((f) => /^#\d+:[\w-]{22}$/.test(f))!].sort());
      expect(Object.keys(await h.redis.hgetall(ordinals))).to.have.length(2); // the counter and the guests' context
    });

    it('a pointer an older build wrote, naming the context by its full name, is still followed', async () => {
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }]);
      expect(await cachedDecision(door.key, 'legacy-a')).to.equal('allow');
      expect(await cachedDecision(door.key, 'legacy-b')).to.equal('allow');
      const { doorsVersion } = (await check(h, g, door.key, 'legacy-a')).body as { doorsVersion: number };
      const prefix = h.keySpace.game(g.gameId).doorDecisions(String(doorsVersion), 0).replace(/0$/, '');
      // two users and one context: one unsplit hash per window, the current one holds all three fields
      const [head] = await Promise.all(
        (await scanKeys(h.redis, `${prefix.replace(/[[\]*?\\]/g, '\\$&')}*`)).map(async (k) => ((await h.redis.hexists(k, '#1')) ? k : null)),
      ).then((ks) => ks.filter((k): k is string => k !== null));
      const decisions = (await h.redis.hgetBuffer(head!, '#1'))!;
      const pointer = (await h.redis.hgetBuffer(head!, 'legacy-a'))!;
      const legacyName = '#7:abcdefghijklmnopqrstuv';
      // the older layout: the context under "#<workspace version>:<context key>", the pointer naming it
      await h.redis.hset(head!, legacyName, decisions);
      await h.redis.hset(head!, 'legacy-a', Buffer.concat([pointer.subarray(0, -3), Buffer.from([0xa0 | legacyName.length]), Buffer.from(legacyName)]));
      await h.redis.hdel(head!, '#1');
      expect((await check(h, g, door.key, 'legacy-a')).body).to.include({ cached: true, decision: 'allow' });
      expect((await check(h, g, door.key, 'legacy-b')).body).to.include({ cached: false, decision: 'allow' });
    });

    it("a user id that looks like a context field never overwrites the context's decisions", async () => {
      const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone' }]);
      expect(await cachedDecision(door.key, 'ordinary-guest')).to.equal('allow');
      const context = [...(await decisionFields(door.key)).keys()].find((f) => f.startsWith('#'))!;
      expect(await cachedDecision(door.key, context)).to.equal('allow');
      expect((await check(h, g, door.key, 'ordinary-guest')).body).to.include({ cached: true, decision: 'allow' });
      const fields = await decisionFields(door.key);
      expect(fields.has(`#${context}`), 'the look-alike user has its own escaped field').to.equal(true);
      expect(fields.get(context)!.includes(door.key)).to.equal(true);
    });
  });
});
