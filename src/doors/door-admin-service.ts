/**
 * The operator side of doors (issue #5 "Model and management"): doors, their policies and forced states.
 * Every change commits in one Postgres transaction together with the `Game.doorsVersion` increment and
 * an audit row, then raises the Redis copy of the version (doors-version.ts): from that moment every API
 * process serves the new definitions, the manifest ETag changes and no decision cached before the change
 * is read again.
 *
 * Forcing a door records the state and issues a `door_set_state` command (src/commands/command-service.ts)
 * to every live server of the game (spec: States › Door forced state); servers that start later read the
 * forced state from the manifest. A `door_set_state` a moderator issues as a command to one server goes
 * through the same recording ({@link issueDoorSetState}).
 */
import { Prisma } from '@prisma/client';
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import { appendAudit } from '../audit/audit-chain.js';
import { checkIssueInput, issueCommand, type CommandServiceDeps, type IssueCommandInput, type IssuedCommand } from '../commands/command-service.js';
import { FAIL_MODES, FORCED_STATES } from '../schemas/doors.js';
import { DOOR_EFFECTS, SUBJECT_TYPES, type Effect, type FailMode, type ForcedState, type PolicyConditions, type SubjectType } from './door-types.js';
import { incrementDoorsVersion } from './doors-version.js';
import { raiseDoorsVersion } from '../store/lua/raise-doors-version.js';
import { parseConditions } from './policy-conditions.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

export interface DoorAdminDeps {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  /** Where forced-state commands are issued (defaults to db/redis/keySpace without nudges). */
  commands?: CommandServiceDeps;
}

/** A door as the operator sees it. */
export interface DoorView {
  key: string;
  name: string;
  kind: string;
  defaultEffect: Effect;
  failMode: FailMode;
  forcedState: ForcedState;
  policies: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A policy as the operator sees it. */
export interface PolicyView {
  id: string;
  doorKey: string;
  effect: Effect;
  priority: number;
  subjectType: SubjectType;
  subjectIds: string[];
  includeDescendants: boolean;
  conditions: PolicyConditions;
  createdAt: Date;
}

/** What a change returns: the game's doors version after it. */
export interface Versioned {
  doorsVersion: number;
}

const DOOR_KEY_RE = /^\S{1,128}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Largest policy priority magnitude (fits the Int column with room). */
export const MAX_PRIORITY = 1_000_000;

function oneOf<T extends string>(what: string, allowed: readonly T[], value: string | undefined, fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new ValidationError(`${what} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function text(what: string, value: string, max: number): string {
  const v = value.trim();
  if (!v || v.length > max) throw new ValidationError(`${what} must be 1 to ${max} characters`);
  return v;
}

async function requireGame(db: Db | Prisma.TransactionClient, gameId: string): Promise<{ id: string; workspaceId: string }> {
  const game = await db.game.findUnique({ where: { id: gameId }, select: { id: true, workspaceId: true } });
  if (!game) throw new NotFoundError(`game ${gameId} not found`, 'unknown_game');
  return game;
}

async function requireDoor(db: Db | Prisma.TransactionClient, gameId: string, key: string) {
  const door = await db.door.findUnique({ where: { gameId_key: { gameId, key } } });
  if (!door) throw new NotFoundError(`game ${gameId} has no door "${key}"`, 'unknown_door');
  return door;
}

/**
 * Runs `change` with the version increment and an audit row in one transaction, then raises Redis.
 * `change` returns what to report and the audit detail.
 */
async function versioned<T>(
  deps: DoorAdminDeps,
  game: { id: string; workspaceId: string },
  actor: string,
  action: string,
  change: (tx: Prisma.TransactionClient) => Promise<{ result: T; detail: Prisma.InputJsonValue }>,
): Promise<T & Versioned> {
  const { result, doorsVersion } = await deps.db.$transaction(async (tx) => {
    const { result, detail } = await change(tx);
    const doorsVersion = await incrementDoorsVersion(tx, game.id);
    await appendAudit(tx, { workspaceId: game.workspaceId, gameId: game.id, actor, action, detail });
    return { result, doorsVersion };
  });
  await raiseDoorsVersion(deps.redis, deps.keySpace, game.id, doorsVersion);
  return { ...result, doorsVersion };
}

function doorView(d: { key: string; name: string; kind: string; defaultEffect: string; failMode: string; forcedState: string; createdAt: Date; updatedAt: Date }, policies: number): DoorView {
  return {
    key: d.key,
    name: d.name,
    kind: d.kind,
    defaultEffect: d.defaultEffect as Effect,
    failMode: d.failMode as FailMode,
    forcedState: d.forcedState as ForcedState,
    policies,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

/**
 * Creates a door. Defaults: kind `door`, defaultEffect `deny`, failMode `closed`, forced state `auto`.
 * @throws {NotFoundError} unknown game. @throws {ValidationError} bad field, or `door_exists` when the
 *   game already has a door with that key.
 */
export async function createDoor(
  deps: DoorAdminDeps,
  input: { gameId: string; key: string; name: string; kind?: string; defaultEffect?: string; failMode?: string },
  actor: string,
): Promise<DoorView & Versioned> {
  if (!DOOR_KEY_RE.test(input.key)) throw new ValidationError('door key must be 1 to 128 characters without spaces');
  const data = {
    key: input.key,
    name: text('door name', input.name, 200),
    kind: text('door kind', input.kind ?? 'door', 64),
    defaultEffect: oneOf('default effect', DOOR_EFFECTS, input.defaultEffect, 'deny'),
    failMode: oneOf('fail mode', FAIL_MODES, input.failMode, 'closed'),
  };
  const game = await requireGame(deps.db, input.gameId);
  try {
    return await versioned(deps, game, actor, 'door.create', async (tx) => {
      const door = await tx.door.create({ data: { gameId: game.id, ...data } });
      return { result: doorView(door, 0), detail: data };
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      throw new ValidationError(`game ${game.id} already has a door "${input.key}"`, 'door_exists');
    }
    throw err;
  }
}

/** The game's doors in key order. @throws {NotFoundError} unknown game. */
export async function listDoors(db: Db, gameId: string): Promise<DoorView[]> {
  await requireGame(db, gameId);
  const doors = await db.door.findMany({ where: { gameId }, orderBy: { key: 'asc' }, include: { _count: { select: { policies: true } } } });
  return doors.map((d) => doorView(d, d._count.policies));
}

/** Deletes a door and its policies. @throws {NotFoundError} unknown game or door. */
export async function deleteDoor(deps: DoorAdminDeps, gameId: string, key: string, actor: string): Promise<{ key: string } & Versioned> {
  const game = await requireGame(deps.db, gameId);
  return versioned(deps, game, actor, 'door.delete', async (tx) => {
    const door = await requireDoor(tx, game.id, key);
    await tx.door.delete({ where: { id: door.id } });
    return { result: { key }, detail: { key } };
  });
}

/** Result of {@link forceDoor}. */
export interface ForceResult extends Versioned {
  key: string;
  forcedState: ForcedState;
  /** One door_set_state command per live server. */
  commands: { externalServerId: string; commandId: string }[];
  /** Live servers the command could not be issued to (e.g. gone meanwhile, queue full), with why. */
  failures: { externalServerId: string; error: string }[];
}

/**
 * Records a door's forced state and sends `door_set_state` `{doorKey, state}` to every live server
 * (spec: States › Door forced state). Recording happens first, so a server that misses the command still
 * gets the state from the manifest and from every decision.
 * @throws {NotFoundError} unknown game or door. @throws {ValidationError} bad state.
 */
export async function forceDoor(deps: DoorAdminDeps, gameId: string, key: string, state: string, actor: string): Promise<ForceResult> {
  const forcedState = oneOf('state', FORCED_STATES, state, 'auto');
  const game = await requireGame(deps.db, gameId);
  const recorded = await versioned(deps, game, actor, 'door.force', async (tx) => {
    const door = await requireDoor(tx, game.id, key);
    await tx.door.update({ where: { id: door.id }, data: { forcedState } });
    return { result: {}, detail: { key, from: door.forcedState, to: forcedState } };
  });
  const commandDeps = deps.commands ?? { db: deps.db, redis: deps.redis, keySpace: deps.keySpace };
  const servers = await deps.redis.zrange(deps.keySpace.game(game.id).servers(), '0', '-1');
  const commands: ForceResult['commands'] = [];
  const failures: ForceResult['failures'] = [];
  for (const externalServerId of servers) {
    try {
      const issued = await issueCommand(commandDeps, {
        gameId: game.id,
        type: 'door_set_state',
        payload: { doorKey: key, state: forcedState },
        target: { externalServerId },
        issuedBy: actor,
      });
      commands.push({ externalServerId, commandId: issued.id });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      failures.push({ externalServerId, error: `${err.code}: ${err.message}` });
    }
  }
  return { key, forcedState, doorsVersion: recorded.doorsVersion, commands, failures };
}

/** Result of {@link issueDoorSetState}: the command as issued and the door state it recorded. */
export interface DoorSetStateResult {
  command: IssuedCommand;
  door: { key: string; from: ForcedState; forcedState: ForcedState; doorsVersion: number };
}

/**
 * `door_set_state {doorKey, state}` issued as a moderation command to one live server (`commands issue`,
 * the console), through the same path as {@link forceDoor} (spec: States › Door forced state; Command
 * types, "Overrides policy until returned to auto"):
 *
 * 1. checks first, so a refused command changes nothing: the payload (400 `invalid_payload`), the target
 *    (a server, 400 `invalid_target`), the expiry (400 `invalid_expiry`), the issuer, the door (404
 *    `unknown_door`) and that the server is live (404 `server_not_live`);
 * 2. **records the forced state at issue time**, in one transaction with the doors version increment and a
 *    `door.force` audit row (`detail.via = "command"`), then raises the Redis doors version: every cached
 *    decision of the game is retired, the manifest version rises, and the next doors/check, doors/bulk
 *    and manifest answer with the new state; `auto` returns the door to its policies;
 * 3. issues the command (src/commands/command-service.ts), which the server receives in its next
 *    heartbeat and acks once it has acted in the world (closed the door, say). The ack, a failure report
 *    or expiry changes the command's status only, never the recorded state (README "Doors › door_set_state").
 *
 * @throws {ValidationError} 400 as above or from the commands service. @throws {NotFoundError} 404 as
 *   above, `unknown_game`. @throws {DomainError} when the state was recorded but issuing failed afterwards
 *   (the server went away or its queue filled in between): the command service's status and code, with a
 *   message saying the state is recorded.
 */
export async function issueDoorSetState(
  deps: DoorAdminDeps,
  input: Omit<IssueCommandInput, 'type'> & { type?: 'door_set_state' },
): Promise<DoorSetStateResult> {
  const checked = checkIssueInput({ ...input, type: 'door_set_state' });
  const { doorKey, state } = checked.payload as { doorKey: string; state: ForcedState };
  const server = checked.server;
  const game = await requireGame(deps.db, input.gameId);
  await requireDoor(deps.db, game.id, doorKey);
  if ((await deps.redis.zscore(deps.keySpace.game(game.id).servers(), server)) === null) {
    throw new NotFoundError(`server ${server} is not live in game ${game.id}`, 'server_not_live');
  }
  let from: ForcedState = 'auto';
  const recorded = await versioned(deps, game, checked.issuedBy, 'door.force', async (tx) => {
    const door = await requireDoor(tx, game.id, doorKey);
    from = door.forcedState as ForcedState;
    await tx.door.update({ where: { id: door.id }, data: { forcedState: state } });
    return { result: {}, detail: { key: doorKey, from, to: state, via: 'command', externalServerId: server } };
  });
  const commandDeps = deps.commands ?? { db: deps.db, redis: deps.redis, keySpace: deps.keySpace };
  try {
    const command = await issueCommand(commandDeps, { ...input, type: 'door_set_state', payload: { doorKey, state } });
    return { command, door: { key: doorKey, from, forcedState: state, doorsVersion: recorded.doorsVersion } };
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    throw new DomainError(err.kind, err.code, `door ${doorKey} is now ${state} (doors version ${recorded.doorsVersion}), but the command was not issued: ${err.message}`, err.retryAfterSeconds);
  }
}

/**
 * Checks a policy's subject: ids of positions/units/organizations must exist in the game's workspace;
 * users are externalIds; `everyone` takes none. @throws {ValidationError}
 */
async function checkSubject(db: Db, workspaceId: string, type: SubjectType, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids.map((s) => s.trim()).filter(Boolean))];
  if (type === 'everyone') {
    if (unique.length) throw new ValidationError('subject "everyone" takes no ids');
    return [];
  }
  if (!unique.length) throw new ValidationError(`subject "${type}" needs at least one id`);
  if (unique.length > 1000) throw new ValidationError('at most 1000 subject ids');
  if (type === 'users') {
    if (unique.some((u) => u.length > 128)) throw new ValidationError('user externalIds are at most 128 characters');
    return unique;
  }
  const bad = unique.filter((id) => !UUID_RE.test(id));
  if (bad.length) throw new ValidationError(`${type} ids must be UUIDs: ${bad.slice(0, 5).join(', ')}`);
  const where = { workspaceId, id: { in: unique } };
  const found =
    type === 'positions' ? await db.position.findMany({ where, select: { id: true } })
    : type === 'units' ? await db.unit.findMany({ where, select: { id: true } })
    : await db.organization.findMany({ where, select: { id: true } });
  const known = new Set(found.map((r) => r.id));
  const missing = unique.filter((id) => !known.has(id.toLowerCase()));
  if (missing.length) throw new ValidationError(`no ${type} with id ${missing.slice(0, 5).join(', ')} in the game's workspace`, 'unknown_subject');
  return unique.map((id) => id.toLowerCase());
}

function policyView(doorKey: string, p: { id: string; effect: string; priority: number; subjectType: string; subjectIds: string[]; includeDescendants: boolean; conditions: unknown; createdAt: Date }): PolicyView {
  return {
    id: p.id,
    doorKey,
    effect: p.effect as Effect,
    priority: p.priority,
    subjectType: p.subjectType as SubjectType,
    subjectIds: p.subjectIds,
    includeDescendants: p.includeDescendants,
    conditions: p.conditions as PolicyConditions,
    createdAt: p.createdAt,
  };
}

/**
 * Adds a policy to a door. `includeDescendants` is only meaningful for `units`.
 * @throws {NotFoundError} unknown game or door. @throws {ValidationError} bad effect, priority, subject
 *   (`unknown_subject` for ids not in the workspace) or conditions (`invalid_conditions`).
 */
export async function addPolicy(
  deps: DoorAdminDeps,
  input: {
    gameId: string;
    doorKey: string;
    effect: string;
    priority?: number;
    subjectType: string;
    subjectIds?: string[];
    includeDescendants?: boolean;
    conditions?: unknown;
  },
  actor: string,
): Promise<PolicyView & Versioned> {
  const effect = oneOf('effect', DOOR_EFFECTS, input.effect, 'deny');
  const priority = input.priority ?? 0;
  if (!Number.isInteger(priority) || Math.abs(priority) > MAX_PRIORITY) throw new ValidationError(`priority must be an integer from -${MAX_PRIORITY} to ${MAX_PRIORITY}`);
  const subjectType = oneOf('subject type', SUBJECT_TYPES, input.subjectType, 'everyone');
  if (input.includeDescendants && subjectType !== 'units') throw new ValidationError('includeDescendants applies to subject "units" only');
  const conditions = parseConditions(input.conditions ?? {});
  const game = await requireGame(deps.db, input.gameId);
  const subjectIds = await checkSubject(deps.db, game.workspaceId, subjectType, input.subjectIds ?? []);
  return versioned(deps, game, actor, 'door.policy.add', async (tx) => {
    const door = await requireDoor(tx, game.id, input.doorKey);
    const row = await tx.doorPolicy.create({
      data: { doorId: door.id, effect, priority, subjectType, subjectIds, includeDescendants: input.includeDescendants ?? false, conditions: conditions as Prisma.InputJsonValue },
    });
    return { result: policyView(door.key, row), detail: { doorKey: door.key, policyId: row.id, effect, priority, subjectType } };
  });
}

/** Policies of the game (or of one door), in evaluation tie order per door. @throws {NotFoundError} */
export async function listPolicies(db: Db, gameId: string, doorKey?: string): Promise<PolicyView[]> {
  await requireGame(db, gameId);
  if (doorKey !== undefined) await requireDoor(db, gameId, doorKey);
  const rows = await db.doorPolicy.findMany({
    where: { door: { gameId, ...(doorKey !== undefined ? { key: doorKey } : {}) } },
    include: { door: { select: { key: true } } },
    orderBy: [{ door: { key: 'asc' } }, { priority: 'desc' }, { createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((r) => policyView(r.door.key, r));
}

/**
 * One policy of the game by id (the console links an access-log row to the policy that decided it).
 * @throws {NotFoundError} `unknown_game`, or `unknown_policy` (not a UUID, or not a policy of this game).
 */
export async function getPolicy(db: Db, gameId: string, policyId: string): Promise<PolicyView> {
  await requireGame(db, gameId);
  const row = UUID_RE.test(policyId)
    ? await db.doorPolicy.findFirst({ where: { id: policyId.toLowerCase(), door: { gameId } }, include: { door: { select: { key: true } } } })
    : null;
  if (!row) throw new NotFoundError(`game ${gameId} has no policy ${policyId}`, 'unknown_policy');
  return policyView(row.door.key, row);
}

/** Deletes a policy of the game. @throws {NotFoundError} unknown game, or `unknown_policy`. */
export async function deletePolicy(deps: DoorAdminDeps, gameId: string, policyId: string, actor: string): Promise<{ id: string; doorKey: string } & Versioned> {
  if (!UUID_RE.test(policyId)) throw new ValidationError('policy id must be a UUID');
  const game = await requireGame(deps.db, gameId);
  return versioned(deps, game, actor, 'door.policy.delete', async (tx) => {
    const policy = await tx.doorPolicy.findFirst({ where: { id: policyId.toLowerCase(), door: { gameId: game.id } }, include: { door: { select: { key: true } } } });
    if (!policy) throw new NotFoundError(`game ${game.id} has no policy ${policyId}`, 'unknown_policy');
    await tx.doorPolicy.delete({ where: { id: policy.id } });
    return { result: { id: policy.id, doorKey: policy.door.key }, detail: { policyId: policy.id, doorKey: policy.door.key } };
  });
}
