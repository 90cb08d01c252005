/**
 * Fixtures of the door tests: a small workspace model written straight to Postgres (the workspace
 * services of issue #4 are not a dependency of doors), door/policy helpers over the real operator
 * service, and signed calls of the three door endpoints.
 *
 * The org tree (Unit.parentId), with organizations:
 *
 *   orgA:  root ─ child ─ grandchild          orgB: other
 *   positions: pRoot (root), pChild (child), pGrand (grandchild), pOther (other)
 *
 * Members: alice (pChild, joined 400 days ago), bob (pOther, joined 2 days ago), carol (pGrand), dan
 * (no position). `stranger` has no Member row.
 */
import type { Response } from 'supertest';
import type { Harness, TestGame } from '../support/harness.js';
import { addPolicy, createDoor } from '../../src/doors/door-admin-service.js';
import { DoorSubjectInvalidator } from '../../src/doors/subject-invalidation.js';

export const DAY_MS = 86_400_000;

export interface Org {
  orgA: string;
  orgB: string;
  root: string;
  child: string;
  grandchild: string;
  other: string;
  pRoot: string;
  pChild: string;
  pGrand: string;
  pOther: string;
  members: Record<'alice' | 'bob' | 'carol' | 'dan', string>;
}

/** Builds the org tree and members of the module comment in `workspaceId`. */
export async function buildOrg(h: Harness, workspaceId: string, nowMs = Date.now()): Promise<Org> {
  const db = h.db;
  const orgA = (await db.organization.create({ data: { workspaceId, name: 'Org A' } })).id;
  const orgB = (await db.organization.create({ data: { workspaceId, name: 'Org B' } })).id;
  const unit = async (name: string, parentId: string | null, organizationId: string | null) =>
    (await db.unit.create({ data: { workspaceId, name, parentId, organizationId } })).id;
  const root = await unit('root', null, orgA);
  const child = await unit('child', root, null);
  const grandchild = await unit('grandchild', child, null);
  const other = await unit('other', null, orgB);
  const position = async (name: string, unitId: string) => (await db.position.create({ data: { workspaceId, unitId, name } })).id;
  const pRoot = await position('root officer', root);
  const pChild = await position('child officer', child);
  const pGrand = await position('grandchild officer', grandchild);
  const pOther = await position('other officer', other);
  const member = async (externalId: string, joinedDaysAgo: number, positions: string[]) => {
    const m = await db.member.create({ data: { workspaceId, externalId, joinedAt: new Date(nowMs - joinedDaysAgo * DAY_MS) } });
    for (const positionId of positions) await db.assignment.create({ data: { memberId: m.id, positionId } });
    return m.id;
  };
  const members = {
    alice: await member('alice', 400, [pChild]),
    bob: await member('bob', 2, [pOther]),
    carol: await member('carol', 30, [pGrand]),
    dan: await member('dan', 30, []),
  };
  return { orgA, orgB, root, child, grandchild, other, pRoot, pChild, pGrand, pOther, members };
}

let doorSeq = 0;

/** A fresh door key (unique within the test process). */
export function doorKey(prefix = 'door'): string {
  doorSeq += 1;
  return `${prefix}-${doorSeq}`;
}

export type PolicySpec = Omit<Parameters<typeof addPolicy>[1], 'gameId' | 'doorKey'>;

/** Creates a door with `policies` (in order) through the operator service; returns its key and the policy ids. */
export async function doorWith(
  h: Harness,
  gameId: string,
  policies: PolicySpec[],
  door: { defaultEffect?: string; failMode?: string; key?: string; kind?: string } = {},
): Promise<{ key: string; ids: string[] }> {
  const deps = { db: h.db, redis: h.redis, keySpace: h.keySpace };
  const key = door.key ?? doorKey();
  await createDoor(deps, { gameId, key, name: `Door ${key}`, kind: door.kind, defaultEffect: door.defaultEffect, failMode: door.failMode }, 'test');
  const ids: string[] = [];
  for (const p of policies) ids.push((await addPolicy(deps, { gameId, doorKey: key, ...p }, 'test')).id);
  return { key, ids };
}

/** The invalidation hooks the workspace services call after a write. */
export function invalidator(h: Harness): DoorSubjectInvalidator {
  return new DoorSubjectInvalidator(h.db, h.redis, h.keySpace);
}

// Unknown request fields are ignored (spec: Versioning rule 2); `n` keeps two identical calls in one second
// from signing identical bytes, which the replay cache would rightly refuse (409).
let nonce = 0;

/**
 * Sends `send()`, a door check or bulk check of game `g`, and after a 200 waits (at most 2 s) until its
 * writes are in Redis. The service answers before it writes a fresh decision to the cache and its
 * access-log entry (`remember` in src/doors/door-access-service.ts), and that write can land after the
 * next request, e.g. the first time a Cluster node runs the store script (EVALSHA, NOSCRIPT, then EVAL).
 * Every 200 adds one access-log entry, so the stream growing is the sign that the write is in.
 */
async function answeredAndStored(h: Harness, g: TestGame, send: () => PromiseLike<Response>): Promise<Response> {
  const stream = h.keySpace.game(g.gameId).accessStream();
  const before = await h.redis.xlen(stream);
  const res = await send();
  for (const deadline = Date.now() + 2000; res.status === 200 && Date.now() < deadline && (await h.redis.xlen(stream)) <= before; ) {
    await new Promise((r) => setTimeout(r, 5));
  }
  return res;
}

/** POST doors/check; resolves once a 200's decision is stored (see {@link answeredAndStored}). */
export function check(h: Harness, g: TestGame, doorKeyValue: string, externalId: string, extra: Record<string, unknown> = {}): Promise<Response> {
  nonce += 1;
  const body = { doorKey: doorKeyValue, externalId, externalServerId: 'server-1', n: nonce, ...extra };
  return answeredAndStored(h, g, () => h.signed(g, 'post', '/api/v1/game/doors/check', body));
}

/** POST doors/bulk; resolves once a 200's decisions are stored (see {@link answeredAndStored}). */
export function bulk(h: Harness, g: TestGame, externalId: string): Promise<Response> {
  nonce += 1;
  const body = { externalId, externalServerId: 'server-1', n: nonce };
  return answeredAndStored(h, g, () => h.signed(g, 'post', '/api/v1/game/doors/bulk', body));
}

/**
 * GET doors/manifest (empty body), signed with a request nonce: two fetches in one second sign different
 * bytes. (Back-dated timestamps used to keep them apart, and collided whenever two fetches straddled a
 * second: fetch k at second T and fetch k+1 at T+1 signed the same T-k.)
 */
export function manifest(h: Harness, g: TestGame) {
  return h.signed(g, 'get', '/api/v1/game/doors/manifest', undefined, { nonce: true });
}
