/**
 * Fixtures of the workspace-model and derived-data tests: an org chart built through the real services,
 * a recording {@link SubjectChanges} (the door side's listener, not a store), the live derivation wired
 * the way the worker wires it, and direct Session rows for histories longer than a test can wait for.
 */
import { heartbeatBody, type Harness, type TestGame } from '../support/harness.js';
import type { SubjectChanges } from '../../src/workspace/subject-changes.js';
import { createUnit } from '../../src/workspace/units.js';
import { createPosition, type PositionRules } from '../../src/workspace/positions.js';
import { createMember } from '../../src/workspace/members.js';
import { assignPosition } from '../../src/workspace/assignments.js';
import { ShiftDeriver } from '../../src/derived/shift-deriver.js';
import { LiveDerivation } from '../../src/derived/live-derivation.js';

/** A SubjectChanges that remembers what it was told. */
export class RecordingChanges implements SubjectChanges {
  readonly members: string[] = [];
  readonly workspaces: string[] = [];
  async memberChanged(workspaceId: string, externalId: string): Promise<void> {
    this.members.push(`${workspaceId}:${externalId}`);
  }
  async workspaceChanged(workspaceId: string): Promise<void> {
    this.workspaces.push(workspaceId);
  }
}

/** A member `externalId` of `workspaceId` holding one new position with `rules`. */
export async function memberWithPosition(h: Harness, workspaceId: string, externalId: string, rules: Partial<PositionRules>, changes: SubjectChanges = new RecordingChanges()) {
  const unit = await createUnit(h.db, { workspaceId, name: `unit of ${externalId}` });
  const position = await createPosition(h.db, { workspaceId, unitId: unit.id, name: `position of ${externalId}`, ...rules });
  const member = await createMember(h.db, { workspaceId, externalId, joinedAt: new Date('2025-01-01T00:00:00Z') }, changes);
  await assignPosition(h.db, member.id, position.id, changes);
  return { unit, position, member };
}

/** The live derivation over the harness's connections, and a way to run it until caught up. */
export function liveDerivation(h: Harness, changes: SubjectChanges = new RecordingChanges(), opts: { accrualRefreshMs?: number } = {}) {
  const deriver = new ShiftDeriver(h.db, h.redis, h.keySpace, changes);
  const live = new LiveDerivation(h.db, h.redis, h.keySpace, deriver, { batch: 1000, ...opts });
  return {
    deriver,
    live,
    /** Ticks until every stored session has been read (as the worker's runs would). */
    async run(nowMs = Date.now()): Promise<void> {
      for (let i = 0; i < 1000; i++) if ((await live.tick(nowMs)).caughtUp) return;
      throw new Error('live derivation did not catch up');
    },
  };
}

/** Sends one heartbeat of `players` on server `sid` and returns its server time in ms. */
export async function heartbeatAt(h: Harness, g: TestGame, players: string[], sid: string, body: { externalScopeId?: string } = {}): Promise<number> {
  const res = await h.heartbeat(g, heartbeatBody(players, { externalServerId: sid, ...body }));
  if (res.status !== 200) throw new Error(`heartbeat answered ${res.status}: ${JSON.stringify(res.body)}`);
  return Date.parse(res.body.serverTime);
}

/** Shifts of a member as [openedAt ms, closedAt ms | null], oldest first. */
export async function shiftsOf(h: Harness, memberId: string): Promise<[number, number | null][]> {
  const rows = await h.db.shift.findMany({ where: { memberId }, orderBy: { openedAt: 'asc' } });
  return rows.map((s) => [s.openedAt.getTime(), s.closedAt?.getTime() ?? null]);
}

/** Inserts a stored session directly (for histories of hours); times are ISO strings or ms. */
export async function insertSession(h: Harness, gameId: string, s: { externalId: string; server?: string; scope?: string | null; openedAt: string | number; closedAt?: string | number | null }) {
  return h.db.session.create({
    data: {
      gameId,
      externalServerId: s.server ?? 'srv-1',
      externalScopeId: s.scope === undefined ? 'place-1' : s.scope,
      externalId: s.externalId,
      openedAt: new Date(s.openedAt),
      closedAt: s.closedAt === undefined || s.closedAt === null ? null : new Date(s.closedAt),
      closeReason: s.closedAt === undefined || s.closedAt === null ? null : 'left',
    },
  });
}

/** Awaits `promise`, which must reject with an instance of `type` whose message matches `pattern`; returns the error. */
export async function rejection<E extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => E, pattern?: RegExp): Promise<E> {
  const outcome = await promise.then(
    () => ({ ok: true as const }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  if (outcome.ok) throw new Error(`expected a ${type.name}, but the call succeeded`);
  if (!(outcome.err instanceof type)) throw new Error(`expected a ${type.name}, got ${String(outcome.err)}`);
  if (pattern && !pattern.test(outcome.err.message)) throw new Error(`expected a message matching ${pattern}, got "${outcome.err.message}"`);
  return outcome.err;
}

/** Deletes the rows of `gameIds` that do not cascade from their workspace (sessions, events, samples). */
export async function forgetGames(h: Harness, gameIds: string[]): Promise<void> {
  const where = { gameId: { in: gameIds } };
  await h.db.session.deleteMany({ where });
  await h.db.playerEvent.deleteMany({ where });
  await h.db.concurrencySample.deleteMany({ where });
}
