/**
 * `admin members create|list|delete` and `admin assignments create|list|delete`: people of a workspace
 * (linked to platform users by externalId) and the positions they hold (src/workspace/members.ts,
 * assignments.ts).
 */
import { createMember, deleteMember, listMembers, tenureDays } from '../../../workspace/members.js';
import { assignPosition, listAssignments, unassignPosition } from '../../../workspace/assignments.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';
import { INSTANT_HELP, optionalInstant } from './workspace-args.js';

/**
 * `members create --workspace W --external-id X [--name N] [--joined-at T]` → the member
 * `{ id, workspaceId, externalId, displayName, joinedAt, createdAt }`; joinedAt defaults to now.
 * @throws {ValidationError} `duplicate_member`.
 */
const create: AdminCommand = {
  group: 'members',
  name: 'create',
  summary: 'Add a member, linked to a platform user by externalId',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    'external-id': { type: 'string', required: true, valueName: 'ID', description: 'the platform user id the game sends' },
    name: { type: 'string', valueName: 'NAME', description: 'display name' },
    'joined-at': { type: 'string', valueName: 'TIME', description: `when they joined (tenure; default now); ${INSTANT_HELP}` },
  },
  async run(ctx) {
    const m = await createMember(ctx.db(), {
      workspaceId: ctx.args.uuid('workspace'),
      externalId: ctx.args.string('external-id'),
      displayName: ctx.args.optionalString('name'),
      joinedAt: optionalInstant(ctx.args, 'joined-at') ?? new Date(ctx.nowMs),
    }, doorInvalidation(ctx));
    return { json: { ...m }, text: formatFields([['id', m.id], ['externalId', m.externalId], ['name', m.displayName], ['joined', m.joinedAt]]) };
  },
};

/** `members list --workspace W` → `{ members: [{ id, externalId, displayName, joinedAt, tenureDays }] }` by externalId. */
const list: AdminCommand = {
  group: 'members',
  name: 'list',
  summary: 'List the members of a workspace with their tenure',
  options: { workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' } },
  async run(ctx) {
    const now = new Date(ctx.nowMs);
    const members = (await listMembers(ctx.db(), ctx.args.uuid('workspace'))).map((m) => ({
      id: m.id,
      externalId: m.externalId,
      displayName: m.displayName,
      joinedAt: m.joinedAt,
      tenureDays: tenureDays(m, now),
    }));
    return {
      json: { members },
      text: formatTable(['ID', 'EXTERNAL ID', 'NAME', 'JOINED', 'TENURE DAYS'], members.map((m) => [m.id, m.externalId, m.displayName, m.joinedAt, m.tenureDays]), '(no members)'),
    };
  },
};

/** `members delete --id M` → `{ deleted: { id, externalId } }`; assignments, records, shifts and payouts go too. */
const remove: AdminCommand = {
  group: 'members',
  name: 'delete',
  summary: 'Delete a member with their assignments, records, shifts and payout entries',
  destructive: 'deletes the member with their assignments, records, shifts and payout entries',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'member id' } },
  async run(ctx) {
    const m = await deleteMember(ctx.db(), ctx.args.uuid('id'), doorInvalidation(ctx));
    return { json: { deleted: { id: m.id, externalId: m.externalId } }, text: `member ${m.externalId} (${m.id}) deleted` };
  },
};

const memberAndPosition = {
  member: { type: 'string', required: true, valueName: 'ID', description: 'member id' },
  position: { type: 'string', required: true, valueName: 'ID', description: 'position id' },
} as const;

/** `assignments create --member M --position P` → `{ id, memberId, positionId, createdAt }`. @throws {ValidationError} `duplicate_assignment`, `workspace_mismatch`. */
const assign: AdminCommand = {
  group: 'assignments',
  name: 'create',
  summary: 'Assign a member to a position',
  options: memberAndPosition,
  async run(ctx) {
    const a = await assignPosition(ctx.db(), ctx.args.uuid('member'), ctx.args.uuid('position'), doorInvalidation(ctx));
    return { json: { ...a }, text: `member ${a.memberId} now holds position ${a.positionId}` };
  },
};

/** `assignments list --workspace W [--member M]` → `{ assignments: [{ memberId, externalId, positionId, positionName, createdAt }] }`. */
const listAssigned: AdminCommand = {
  group: 'assignments',
  name: 'list',
  summary: 'List who holds which position',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    member: { type: 'string', valueName: 'ID', description: 'only this member' },
  },
  async run(ctx) {
    const rows = await listAssignments(ctx.db(), ctx.args.uuid('workspace'), { memberId: ctx.args.optionalUuid('member') });
    const assignments = rows.map(({ memberId, externalId, positionId, positionName, createdAt }) => ({ memberId, externalId, positionId, positionName, createdAt }));
    return {
      json: { assignments },
      text: formatTable(['EXTERNAL ID', 'POSITION', 'MEMBER ID', 'POSITION ID'], assignments.map((a) => [a.externalId, a.positionName, a.memberId, a.positionId]), '(no assignments)'),
    };
  },
};

/** `assignments delete --member M --position P` → `{ deleted: { memberId, positionId } }`. @throws {NotFoundError} `assignment_not_found`. */
const unassign: AdminCommand = {
  group: 'assignments',
  name: 'delete',
  summary: 'Remove a member from a position',
  destructive: 'removes the member from the position',
  options: memberAndPosition,
  async run(ctx) {
    const a = await unassignPosition(ctx.db(), ctx.args.uuid('member'), ctx.args.uuid('position'), doorInvalidation(ctx));
    return { json: { deleted: { memberId: a.memberId, positionId: a.positionId } }, text: `member ${a.memberId} no longer holds position ${a.positionId}` };
  },
};

export const memberCommands: AdminCommand[] = [create, list, remove, assign, listAssigned, unassign];
