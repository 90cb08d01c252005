/**
 * What every console API route reads from a request: the game in the path, and the moderator acting.
 *
 * Moderators share the operator token, so the token says nothing about who acts; the page sends the
 * name the moderator signed in with in `X-Moderator` and every change is recorded as issued by
 * `console:<name>` (commands, doors audit rows, bans). That is how expired and failed commands are
 * surfaced "to the moderator who issued them" (spec: Command lifecycle).
 */
import type { Request } from 'express';
import type { Db } from '../../store/prisma.js';
import { NotFoundError, ValidationError } from '../../errors.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MODERATOR_RE = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

/** A game as the console shows it. */
export interface ConsoleGame {
  id: string;
  name: string;
  workspaceId: string;
  /** Seconds (spec: 15–60). */
  heartbeatIntervalSeconds: number;
}

/**
 * The game named by the `:gameId` path parameter.
 * @throws {NotFoundError} 404 `unknown_game` when the id is not a UUID or no such game exists.
 */
export async function gameOf(req: Request, db: Db): Promise<ConsoleGame> {
  const raw = String(req.params.gameId ?? '');
  const game = UUID_RE.test(raw)
    ? await db.game.findUnique({ where: { id: raw.toLowerCase() }, select: { id: true, name: true, workspaceId: true, heartbeatIntervalSeconds: true } })
    : null;
  if (!game) throw new NotFoundError(`game ${raw} not found`, 'unknown_game');
  return game;
}

/** A UUID path parameter, lower-cased. @throws {NotFoundError} 404 `code` when it is not a UUID. */
export function uuidParam(req: Request, name: string, code: string): string {
  const raw = String(req.params[name] ?? '');
  if (!UUID_RE.test(raw)) throw new NotFoundError(`${name} ${raw} not found`, code);
  return raw.toLowerCase();
}

/**
 * The acting moderator as recorded on changes: `console:<X-Moderator>`.
 * @throws {ValidationError} 400 `moderator_required` when the header is missing or not 1–64 of
 *   letters, digits, `_ . @ -` (starting with a letter or digit).
 */
export function moderatorOf(req: Request): string {
  const name = (req.get('x-moderator') ?? '').trim();
  if (!MODERATOR_RE.test(name)) throw new ValidationError('X-Moderator must name the moderator (1-64 of letters, digits, _ . @ -)', 'moderator_required');
  return `console:${name}`;
}
