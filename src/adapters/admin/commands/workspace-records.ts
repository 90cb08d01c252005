/** `admin records create|list|revoke|delete`: entries about members (src/workspace/records.ts). */
import { createRecord, deleteRecord, isRecordActive, listRecords, revokeRecord, type RecordRow } from '../../../workspace/records.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';
import { INSTANT_HELP, optionalInstant } from './workspace-args.js';

function recordView(r: RecordRow, now: Date) {
  const { workspaceId: _w, ...rest } = r;
  return { ...rest, active: isRecordActive(r, now) };
}

/**
 * `records create --member M --type T [--reason R] [--issued-at T] [--expires-at T]` → the record with
 * `active`. @throws {ValidationError} `invalid_record` (expiry not after issue).
 */
const createRec: AdminCommand = {
  group: 'records',
  name: 'create',
  summary: 'Issue a record about a member (warning, strike, suspension, ...)',
  options: {
    member: { type: 'string', required: true, valueName: 'ID', description: 'member id' },
    type: { type: 'string', required: true, valueName: 'TYPE', description: 'record type, e.g. warning, strike, suspension' },
    reason: { type: 'string', valueName: 'TEXT', description: 'why' },
    'issued-at': { type: 'string', valueName: 'TIME', description: `default now; ${INSTANT_HELP}` },
    'expires-at': { type: 'string', valueName: 'TIME', description: 'default never' },
  },
  async run(ctx) {
    const now = new Date(ctx.nowMs);
    const r = await createRecord(ctx.db(), {
      memberId: ctx.args.uuid('member'),
      type: ctx.args.string('type'),
      reason: ctx.args.optionalString('reason'),
      issuedAt: optionalInstant(ctx.args, 'issued-at') ?? now,
      expiresAt: optionalInstant(ctx.args, 'expires-at') ?? null,
    }, doorInvalidation(ctx));
    return { json: recordView(r, now), text: formatFields([['id', r.id], ['type', r.type], ['issued', r.issuedAt], ['expires', r.expiresAt], ['active', isRecordActive(r, now)]]) };
  },
};

/** `records list --workspace W [--member M] [--active]` → `{ records: [...] }` newest first; `--active` keeps those active now. */
const listRec: AdminCommand = {
  group: 'records',
  name: 'list',
  summary: 'List records (all, of one member, or only the active ones)',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    member: { type: 'string', valueName: 'ID', description: 'only this member' },
    active: { type: 'boolean', description: 'only records active now (issued, not revoked, not expired)' },
  },
  async run(ctx) {
    const now = new Date(ctx.nowMs);
    const rows = await listRecords(ctx.db(), ctx.args.uuid('workspace'), { memberId: ctx.args.optionalUuid('member'), activeAt: ctx.args.flag('active') ? now : undefined });
    const records = rows.map((r) => recordView(r, now));
    return {
      json: { records },
      text: formatTable(['ID', 'MEMBER', 'TYPE', 'ISSUED', 'EXPIRES', 'REVOKED', 'ACTIVE'], records.map((r) => [r.id, r.memberId, r.type, r.issuedAt, r.expiresAt, r.revoked, r.active]), '(no records)'),
    };
  },
};

/** `records revoke --id R` → the record, revoked (idempotent; the row stays as history). */
const revokeRec: AdminCommand = {
  group: 'records',
  name: 'revoke',
  summary: 'Revoke a record (kept as history, no longer active)',
  destructive: 'revokes the record',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'record id' } },
  async run(ctx) {
    const r = await revokeRecord(ctx.db(), ctx.args.uuid('id'), doorInvalidation(ctx));
    return { json: recordView(r, new Date(ctx.nowMs)), text: `record ${r.id} revoked` };
  },
};

/** `records delete --id R` → `{ deleted: { id, type } }` (removes the row; prefer revoke to keep history). */
const deleteRec: AdminCommand = {
  group: 'records',
  name: 'delete',
  summary: 'Delete a record outright (revoke keeps history)',
  destructive: 'deletes the record and its history',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'record id' } },
  async run(ctx) {
    const r = await deleteRecord(ctx.db(), ctx.args.uuid('id'), doorInvalidation(ctx));
    return { json: { deleted: { id: r.id, type: r.type } }, text: `record ${r.id} deleted` };
  },
};

export const recordCommands: AdminCommand[] = [createRec, listRec, revokeRec, deleteRec];
