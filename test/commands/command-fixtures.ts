/**
 * Fixtures of the command tests: issuing through the real service, heartbeats that return the delivered
 * entries, and cleanup of Command rows (Command has no foreign key to Game, so deleting the test
 * workspace does not remove them).
 */
import { expect } from 'chai';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { deleteByPattern } from '../../scripts/fixtures.js';
import { issueCommand, type IssueCommandInput, type IssuedCommand } from '../../src/commands/command-service.js';
import type { NudgeRequester } from '../../src/commands/nudge-queue.js';
import { commandEntrySchema, type HeartbeatRequest } from '../../src/schemas/heartbeat.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv) => Ajv;
const strictAjv = new Ajv({ strict: false });
addFormats(strictAjv);
/** Checks one delivered command entry against the documented shape (src/schemas/heartbeat.ts). */
export const isCommandEntry = strictAjv.compile(commandEntrySchema);

/**
 * A harness on a Redis prefix of its own: the expiry index and the nudge queue are per prefix, not per
 * game, so a test that runs the expiry worker "in the future" must not see other test files' commands.
 * Close it with {@link closeOwnPrefix}.
 */
export function ownPrefixHarness(tag: string): Harness {
  return new Harness({ REDIS_PREFIX: `${process.env.REDIS_PREFIX}-${tag}` });
}

/** Deletes every key of `h`'s own prefix, then closes it. */
export async function closeOwnPrefix(h: Harness): Promise<void> {
  await deleteByPattern(h.redis, h.keySpace.scanPattern());
  await h.close();
}

/** A delivered command entry. */
export interface Entry {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  target: { externalServerId: string; externalId?: string };
  issuedAt: string;
  expiresAt: string;
}

/** Issues through the real service as `test:moderator`, with `nudges` when given. */
export function issue(
  h: Harness,
  g: TestGame,
  input: Omit<IssueCommandInput, 'gameId' | 'issuedBy'> & { issuedBy?: string },
  nudges?: NudgeRequester,
): Promise<IssuedCommand> {
  return issueCommand({ db: h.db, redis: h.redis, keySpace: h.keySpace, nudges }, { issuedBy: 'test:moderator', gameId: g.gameId, ...input });
}

/** One heartbeat of `server` with `players`; asserts 200 and returns the command entries it delivered. */
export async function beat(h: Harness, g: TestGame, server: string, players: string[] = [], extra: Partial<HeartbeatRequest> = {}): Promise<Entry[]> {
  const res = await h.heartbeat(g, heartbeatBody(players, { externalServerId: server, ...extra }));
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.commands as Entry[];
}

/** Deletes the Command rows (and their transitions) of `games`. */
export async function deleteCommands(h: Harness, games: TestGame[]): Promise<void> {
  if (games.length) await h.db.command.deleteMany({ where: { gameId: { in: games.map((g) => g.gameId) } } });
}

/** The recorded status and transitions (oldest first) of command `id`. */
export async function recorded(h: Harness, id: string): Promise<{ status: string; issuedBy: string; failureReason: string | null; transitions: { toStatus: string; at: Date; externalServerId: string | null; reason: string | null }[] }> {
  const row = await h.db.command.findUniqueOrThrow({ where: { id }, include: { transitions: { orderBy: [{ at: 'asc' }, { id: 'asc' }] } } });
  return {
    status: row.status,
    issuedBy: row.issuedBy,
    failureReason: row.failureReason,
    transitions: row.transitions.map((t) => ({ toStatus: t.toStatus, at: t.at, externalServerId: t.externalServerId, reason: t.reason })),
  };
}
