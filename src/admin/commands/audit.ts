/**
 * `admin audit list`: the audit trail of a game (AuditLog: who did what to keys and games; keys appear
 * by prefix only, never a secret).
 */
import { UsageError, type AdminCommand } from '../command.js';
import { formatTable } from '../format.js';
import { requireGame } from './games.js';

/** Default and maximum number of entries `audit list` prints. */
export const AUDIT_LIST_DEFAULT = 50;
export const AUDIT_LIST_MAX = 1000;

/**
 * `audit list --game G [--limit N]` → `{ entries: [{ id, createdAt, actor, action, keyPrefix, detail }] }`,
 * newest first; `id` is a decimal string (bigint). @throws {UsageError} limit outside 1–1000.
 * @throws {NotFoundError} unknown game.
 */
const list: AdminCommand = {
  group: 'audit',
  name: 'list',
  summary: 'Show the audit trail of a game, newest first',
  options: {
    game: { type: 'string', required: true, valueName: 'ID', description: 'game id' },
    limit: { type: 'string', valueName: 'N', description: `most entries to show, 1 to ${AUDIT_LIST_MAX} (default ${AUDIT_LIST_DEFAULT})` },
  },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const limit = ctx.args.int('limit', AUDIT_LIST_DEFAULT);
    if (limit < 1 || limit > AUDIT_LIST_MAX) {
      throw new UsageError(`--limit must be from 1 to ${AUDIT_LIST_MAX}`);
    }
    const db = ctx.db();
    await requireGame(db, gameId);
    const rows = await db.auditLog.findMany({
      where: { gameId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
      select: { id: true, createdAt: true, actor: true, action: true, keyPrefix: true, detail: true },
    });
    const entries = rows.map((r) => ({ ...r, id: r.id.toString() }));
    return {
      json: { entries },
      text: formatTable(
        ['WHEN', 'ACTOR', 'ACTION', 'KEY', 'DETAIL'],
        entries.map((e) => [e.createdAt, e.actor, e.action, e.keyPrefix, e.detail === null ? null : JSON.stringify(e.detail)]),
        '(no audit entries)',
      ),
    };
  },
};

export const auditCommands: AdminCommand[] = [list];
