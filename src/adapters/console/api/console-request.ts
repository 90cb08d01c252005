/**
 * What every console API route reads from a request: the game (or ban, or workspace) in the path, and
 * whether the authenticated caller (src/adapters/console/console-auth.ts) may act on it (issue #31).
 *
 * Tenancy and roles, one rule for every route: a game, ban or workspace of a workspace where the caller
 * holds no account answers 404 exactly as a missing one does (existence is not revealed); an account
 * whose role lacks the route's permission (src/auth/moderators/console-permissions.ts) answers 403
 * `forbidden` naming the permission. The operator holds every permission everywhere.
 *
 * The acting party recorded on a change is proven, never typed: `moderator:<id> (<name>)` of the account
 * in the game's workspace, or `operator`. `X-Moderator` is ignored.
 */
import type { Request, Response } from 'express';
import type { Db } from '../../../store/prisma.js';
import { DomainError, NotFoundError } from '../../../errors.js';
import { PERMISSIONS, roleAllows, type Permission } from '../../../auth/moderators/console-permissions.js';
import { moderatorActor } from '../../../auth/moderators/moderator-accounts.js';
import type { ModeratorAccount } from '../../../auth/moderators/moderator-directory.js';
import { callerOf } from '../console-auth.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A game as the console shows it. */
export interface ConsoleGame {
  id: string;
  name: string;
  workspaceId: string;
  /** Seconds (spec: 15–60). */
  heartbeatIntervalSeconds: number;
}

/** 403 `forbidden`: the caller's role in the workspace lacks `permission`. */
export class PermissionError extends DomainError {
  constructor(permission: Permission, role: string) {
    const needed = PERMISSIONS[permission];
    super('forbidden', 'forbidden', `the "${permission}" permission is needed (${needed === null ? 'the operator only' : `role ${needed} or above`}); your role here is ${role}`);
  }
}

/** What an authorised request may act as in one workspace. */
export interface Access {
  /** Recorded as the acting party: `operator` or `moderator:<id> (<name>)`. */
  actor: string;
  /** The caller's account in the workspace; null for the operator. */
  account: ModeratorAccount | null;
}

/**
 * Authorises the caller of `res` for `permission` in `workspaceId`.
 * @throws {NotFoundError} `notFound` when the caller holds no account there.
 * @throws {PermissionError} 403 when the account's role lacks the permission.
 */
export function authorize(res: Response, workspaceId: string, permission: Permission, notFound: () => NotFoundError): Access {
  const caller = callerOf(res);
  if (caller.kind === 'operator') return { actor: 'operator', account: null };
  const account = caller.accounts.find((a) => a.workspaceId === workspaceId);
  if (!account) throw notFound();
  if (!roleAllows(account.role, permission)) throw new PermissionError(permission, account.role);
  return { actor: moderatorActor(account), account };
}

/**
 * Authorises the caller for `permission` where no workspace is involved (operator-only routes).
 * @throws {PermissionError} 403 for a moderator.
 */
export function authorizeGlobal(res: Response, permission: Permission): void {
  const caller = callerOf(res);
  if (caller.kind === 'operator') return;
  const best = caller.accounts.find((a) => roleAllows(a.role, permission));
  if (!best) throw new PermissionError(permission, caller.accounts.map((a) => a.role).join('/'));
}

/** Workspaces the caller may see: null for every one (the operator). */
export function visibleWorkspaces(res: Response): string[] | null {
  const caller = callerOf(res);
  return caller.kind === 'operator' ? null : caller.accounts.map((a) => a.workspaceId);
}

/**
 * The game named by the `:gameId` path parameter, once the caller is authorised for `permission` in its
 * workspace.
 * @throws {NotFoundError} 404 `unknown_game` when the id is not a UUID, no such game exists, or the
 *   caller holds no account in its workspace. @throws {PermissionError} 403.
 */
export async function gameAccess(req: Request, res: Response, db: Db, permission: Permission): Promise<{ game: ConsoleGame } & Access> {
  const raw = String(req.params.gameId ?? '');
  const notFound = () => new NotFoundError(`game ${raw} not found`, 'unknown_game');
  const game = UUID_RE.test(raw)
    ? await db.game.findUnique({ where: { id: raw.toLowerCase() }, select: { id: true, name: true, workspaceId: true, heartbeatIntervalSeconds: true } })
    : null;
  if (!game) throw notFound();
  return { game, ...authorize(res, game.workspaceId, permission, notFound) };
}

/** A UUID path parameter, lower-cased. @throws {NotFoundError} 404 `code` when it is not a UUID. */
export function uuidParam(req: Request, name: string, code: string): string {
  const raw = String(req.params[name] ?? '');
  if (!UUID_RE.test(raw)) throw new NotFoundError(`${name} ${raw} not found`, code);
  return raw.toLowerCase();
}
