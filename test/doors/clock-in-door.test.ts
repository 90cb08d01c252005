/**
 * Issue #33: a door whose policy allows members who are clocked in opens once auto clock-in has clocked
 * the member in (spec: Door › policy conditions; issue #4 "Auto clock-in"). The path: heartbeat roster →
 * session stream → `flush-sessions` → Session row → `derive-shifts` → Shift → the member's door subject
 * version (src/doors/subject-invalidation.ts) → doors/check.
 *
 * What went wrong: the shift deriver told the door side about a clock-in only when its own transaction
 * flipped the member's state in Postgres. When another process had derived the shift first — a worker of
 * another deployment on the same database, with its own Redis (a single-Redis stack left running while a
 * Cluster one starts), or a worker that died between commit and report — the flip was reported to that
 * process's Redis or to none, and the Redis this API reads kept its cached `default_deny` for the whole
 * door cache TTL while Postgres held the open shift (the "2 of 3 runs" on a Cluster). Now a flip
 * is judged against the Redis the doors read (src/derived/shift-deriver.ts).
 *
 * Both tests ask the door before the clock-in, so a deny is cached under the member's subject version
 * and a door that was never cached as a deny cannot make them pass.
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import request from 'supertest';
import { sign } from '../../src/auth/signature.js';
import { MIN_INTERVAL_SECONDS } from '../../src/games/game-service.js';
import { KeySpace } from '../../src/store/keyspace/key-space.js';
import { ShiftDeriver, FAR_FUTURE_MS } from '../../src/derived/shift-deriver.js';
import { DoorSubjectInvalidator } from '../../src/doors/subject-invalidation.js';
import { startNodeScript, type ManagedChild } from '../../scripts/support/child-process.js';
import { Stack } from '../support/stack.js';
import { heartbeatBody, Harness, type TestGame } from '../support/harness.js';
import { deleteKeys } from '../support/redis-keys.js';
import { check, doorWith } from './door-fixtures.js';
import { heartbeatAt, memberWithPosition } from '../derived/fixtures.js';

/** Games (each with its member and door) per run: the "10 of 10". Override with CLOCK_IN_DOOR_GAMES. */
const GAMES = Number(process.env.CLOCK_IN_DOOR_GAMES ?? 10);
const INTERVAL_S = MIN_INTERVAL_SECONDS;
/** The bound: two heartbeat intervals after the first heartbeat. */
const BOUND_MS = 2 * INTERVAL_S * 1000;
/** Poll period: at most 9 checks within the bound, under the door-check quota of 10 per subject version. */
const POLL_MS = 3_500;

/** The Redis prefix of another deployment on the same Redis: nothing it writes is read here. */
const OTHER_PREFIX = `${(process.env.REDIS_PREFIX ?? 'gistest').slice(0, 24)}-other`;

let nonce = 0;
/** A signed POST to the stack's API over a real socket, as a game server sends it. */
function post(stack: Stack, g: TestGame, path: string, body: unknown): Promise<Response> {
  const raw = JSON.stringify(body);
  const ts = String(Math.floor(Date.now() / 1000));
  return request(stack.url).post(path).set('Authorization', `Bearer ${g.key}`).set('X-Service-Timestamp', ts).set('X-Service-Signature', sign(g.secret, ts, raw)).set('Content-Type', 'application/json').send(raw);
}

function doorCheck(stack: Stack, g: TestGame, doorKey: string, externalId: string): Promise<Response> {
  nonce += 1;
  return post(stack, g, '/api/v1/game/doors/check', { doorKey, externalId, externalServerId: 'srv-1', n: nonce });
}

describe('clocked-in door after auto clock-in (issue #33)', function () {
  this.timeout(180_000);
  const h = new Harness();
  const other = new KeySpace(OTHER_PREFIX);
  after(async () => {
    await deleteKeys(h.redis, other.scanPattern());
    await h.close();
  });

  it('a clock-in another deployment derived first still retires the cached deny in this Redis', async () => {
    const g = await h.game(['heartbeat', 'doors'], INTERVAL_S);
    const { member } = await memberWithPosition(h, g.workspaceId, 'ivy', { autoClockIn: true });
    const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { clockedIn: true } }]);
    const theirs = new ShiftDeriver(h.db, h.redis, other, new DoorSubjectInvalidator(h.db, h.redis, other));
    const ours = new ShiftDeriver(h.db, h.redis, h.keySpace, new DoorSubjectInvalidator(h.db, h.redis, h.keySpace));
    const ws = await ours.loadWorkspace(g.workspaceId);
    expect((await check(h, g, door.key, 'ivy')).body).to.include({ decision: 'deny', reason: 'default_deny' });

    const t1 = await heartbeatAt(h, g, ['ivy'], 'srv-1');
    await h.flush(g.gameId);
    const derivedElsewhere = await theirs.recomputeMember(ws, member.id, t1, FAR_FUTURE_MS);
    expect(derivedElsewhere).to.include({ open: true, clockInChanged: true });
    const derivedHere = await ours.recomputeMember(ws, member.id, t1, FAR_FUTURE_MS);
    expect(derivedHere).to.include({ open: true, clockInChanged: false }); // Postgres did not flip again
    const opened = await check(h, g, door.key, 'ivy');
    expect(opened.body).to.include({ cached: false, decision: 'allow' });

    // and the clock-out, derived elsewhere first too
    await heartbeatAt(h, g, [], 'srv-1');
    await h.flush(g.gameId);
    expect(await theirs.recomputeMember(ws, member.id, t1, FAR_FUTURE_MS)).to.include({ open: false, clockInChanged: true });
    expect(await ours.recomputeMember(ws, member.id, t1, FAR_FUTURE_MS)).to.include({ open: false, clockInChanged: false });
    expect((await check(h, g, door.key, 'ivy')).body).to.include({ cached: false, decision: 'deny', reason: 'default_deny' });
  });

  describe('through the API and worker processes, beside another deployment on the same database', () => {
    let stack: Stack | undefined;
    let elsewhere: ManagedChild | undefined;

    before(async () => {
      // The other deployment's shift deriver only: it reads the same Session rows and races ours to them.
      elsewhere = startNodeScript('other-workers', 'workers/index.ts', { env: { REDIS_PREFIX: OTHER_PREFIX, WORKER_ROLES: 'derive-shifts', LOG_LEVEL: 'warn', DB_POOL_SIZE: '2' }, echo: 'none' });
      stack = await Stack.start();
    });
    after(async () => {
      await Promise.all([stack?.stop(), elsewhere?.stop()]);
    });

    it(`opens within two heartbeat intervals for every one of ${GAMES} games`, async () => {
      const s = stack!;
      const cases: { g: TestGame; externalId: string; door: string }[] = [];
      for (let i = 0; i < GAMES; i++) {
        const g = await h.game(['heartbeat', 'doors'], INTERVAL_S);
        const externalId = `officer-${i}`;
        await memberWithPosition(h, g.workspaceId, externalId, { autoClockIn: true });
        const door = await doorWith(h, g.gameId, [{ effect: 'allow', subjectType: 'everyone', conditions: { clockedIn: true } }]);
        cases.push({ g, externalId, door: door.key });
      }
      // Not clocked in yet: a deny, cached under the member's current subject version.
      for (const c of cases) {
        const res = await doorCheck(s, c.g, c.door, c.externalId);
        expect(res.status, res.text).to.equal(200);
        expect(res.body, 'before the heartbeat').to.include({ decision: 'deny', reason: 'default_deny' });
      }
      const heartbeat = async () => {
        for (const c of cases) {
          const res = await post(s, c.g, '/api/v1/game/heartbeat', heartbeatBody([c.externalId], { externalServerId: 'srv-1' }));
          expect(res.status, res.text).to.equal(200);
        }
      };
      const start = Date.now();
      await heartbeat();
      let secondSent = false;
      const openedAfterMs = new Map<number, number>();
      while (openedAfterMs.size < cases.length && Date.now() - start <= BOUND_MS) {
        await new Promise((r) => setTimeout(r, POLL_MS));
        // A server keeps heartbeating: the second one, one interval after the first.
        if (!secondSent && Date.now() - start >= INTERVAL_S * 1000) {
          await heartbeat();
          secondSent = true;
        }
        await Promise.all(
          cases.map(async (c, i) => {
            if (openedAfterMs.has(i)) return;
            const res = await doorCheck(s, c.g, c.door, c.externalId);
            expect(res.status, res.text).to.equal(200);
            if (res.body.decision === 'allow') openedAfterMs.set(i, Date.now() - start);
          }),
        );
      }
      const shut = cases.map((c, i) => (openedAfterMs.has(i) ? null : c.g.gameId)).filter((id) => id !== null);
      const openShifts = await h.db.shift.count({ where: { workspaceId: { in: cases.map((c) => c.g.workspaceId) }, closedAt: null } });
      const detail = `open shifts in Postgres: ${openShifts} of ${cases.length}; opened after (ms): ${JSON.stringify([...openedAfterMs.values()].sort((a, b) => a - b))}`;
      expect(shut, `games whose door was still shut ${BOUND_MS} ms after the heartbeat (${detail})\n${s.logs()}`).to.deep.equal([]);
      console.log(`      (${cases.length} of ${cases.length} opened; ${detail})`);
    });
  });
});
