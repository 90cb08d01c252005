/**
 * `admin audit list|verify`: the audit trail (AuditLog: who did what to keys, games, doors, commands and
 * bans; keys appear by prefix only, never a secret), kept as a hash chain per workspace
 * (src/audit/audit-chain.ts).
 */
import { verifyAuditChain, type AuditAnchor, type AuditVerification } from '../../../audit/audit-chain.js';
import { NotFoundError } from '../../../errors.js';
import { UsageError, type AdminCommand } from '../command.js';
import { EXIT_FAILURE } from '../cli.js';
import { formatFields, formatTable } from '../format.js';
import { requireGame } from './games.js';

/** Default and maximum number of entries `audit list` prints. */
export const AUDIT_LIST_DEFAULT = 50;
export const AUDIT_LIST_MAX = 1000;

/**
 * `audit list --game G [--limit N]` → `{ entries: [{ id, createdAt, actor, action, keyPrefix, detail, seq,
 * hash }] }`, newest first; `id` and `seq` are decimal strings (bigint), `hash` the row's chain hash.
 * @throws {UsageError} limit outside 1–1000. @throws {NotFoundError} unknown game.
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
      select: { id: true, createdAt: true, actor: true, action: true, keyPrefix: true, detail: true, seq: true, hash: true },
    });
    const entries = rows.map((r) => ({ ...r, id: r.id.toString(), seq: r.seq.toString() }));
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

/** `--anchor SEQ:HASH` parsed. @throws {UsageError} */
function parseAnchor(raw: string | undefined): AuditAnchor | undefined {
  if (raw === undefined) return undefined;
  const m = /^(\d{1,19}):([0-9a-fA-F]{64})$/.exec(raw.trim());
  if (!m) throw new UsageError('--anchor takes SEQ:HASH, e.g. 42:<64 hex digits> as printed by an earlier verify');
  return { seq: String(BigInt(m[1]!)), hash: m[2]!.toLowerCase() };
}

/**
 * `audit verify --workspace W [--anchor SEQ:HASH]` → `{ workspaceId, ok, rowsChecked, head: { seq, hash } |
 * null, problem: { kind: altered|deleted|inserted, rowId, seq, message } | null }`. Recomputes the
 * workspace's hash chain (src/audit/audit-chain.ts) and names the first row altered, deleted or inserted.
 * Exit 0 when the chain is intact, 1 when it is broken (the result is printed either way).
 * @throws {UsageError} malformed --anchor. @throws {NotFoundError} `unknown_workspace` when the workspace
 *   has no chain and does not exist.
 */
const verify: AdminCommand = {
  group: 'audit',
  name: 'verify',
  summary: 'Recompute the audit hash chain of a workspace and name the first row altered, deleted or inserted',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    anchor: { type: 'string', valueName: 'SEQ:HASH', description: 'a link recorded earlier (e.g. a head printed by verify) the chain must still contain' },
  },
  async run(ctx) {
    const workspaceId = ctx.args.uuid('workspace');
    const anchor = parseAnchor(ctx.args.optionalString('anchor'));
    const db = ctx.db();
    const v: AuditVerification = await verifyAuditChain(db, workspaceId, anchor);
    if (!v.head && v.rowsChecked === 0 && !(await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true } }))) {
      throw new NotFoundError(`workspace ${workspaceId} not found and has no audit chain`, 'unknown_workspace');
    }
    return {
      json: { ...v },
      text: formatFields([
        ['workspace', v.workspaceId],
        ['result', v.ok ? 'chain intact' : `BROKEN (${v.problem!.kind})`],
        ['rows checked', v.rowsChecked],
        ['head', v.head ? `${v.head.seq}:${v.head.hash}` : '(no audit rows yet)'],
        ...(v.problem ? ([['first problem', v.problem.message]] as [string, string][]) : []),
      ]),
      exitCode: v.ok ? 0 : EXIT_FAILURE,
    };
  },
};

export const auditCommands: AdminCommand[] = [list, verify];
