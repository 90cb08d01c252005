/** `admin operations create|list|delete`: the schedule of a workspace (src/workspace/operations.ts). */
import { createOperation, deleteOperation, listOperations } from '../../../workspace/operations.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';
import { INSTANT_HELP, instant, optionalInstant } from './workspace-args.js';

/**
 * `operations create --workspace W --type T --title T --starts-at T --ends-at T [--unit U] [--org O]` →
 * the operation. @throws {ValidationError} `invalid_operation` (end not after start, empty type or title).
 */
const createOp: AdminCommand = {
  group: 'operations',
  name: 'create',
  summary: 'Schedule an operation (type, title, start, end, optional unit / organization)',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    type: { type: 'string', required: true, valueName: 'TYPE', description: 'operation type (door conditions match it exactly)' },
    title: { type: 'string', required: true, valueName: 'TEXT', description: 'title' },
    'starts-at': { type: 'string', required: true, valueName: 'TIME', description: INSTANT_HELP },
    'ends-at': { type: 'string', required: true, valueName: 'TIME', description: `${INSTANT_HELP}; after the start` },
    unit: { type: 'string', valueName: 'ID', description: 'unit it concerns (and the units below it)' },
    org: { type: 'string', valueName: 'ID', description: 'organization it concerns' },
  },
  async run(ctx) {
    const op = await createOperation(ctx.db(), {
      workspaceId: ctx.args.uuid('workspace'),
      type: ctx.args.string('type'),
      title: ctx.args.string('title'),
      startsAt: instant(ctx.args, 'starts-at'),
      endsAt: instant(ctx.args, 'ends-at'),
      unitId: ctx.args.optionalUuid('unit'),
      organizationId: ctx.args.optionalUuid('org'),
    }, doorInvalidation(ctx));
    return { json: { ...op }, text: formatFields([['id', op.id], ['type', op.type], ['title', op.title], ['starts', op.startsAt], ['ends', op.endsAt]]) };
  },
};

/** `operations list --workspace W [--from T] [--to T]` → `{ operations: [...] }` overlapping the range, by start. */
const listOps: AdminCommand = {
  group: 'operations',
  name: 'list',
  summary: 'List the operations of a workspace (optionally overlapping a range)',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    from: { type: 'string', valueName: 'TIME', description: `only operations ending after this; ${INSTANT_HELP}` },
    to: { type: 'string', valueName: 'TIME', description: 'only operations starting before this' },
  },
  async run(ctx) {
    const operations = (await listOperations(ctx.db(), ctx.args.uuid('workspace'), { from: optionalInstant(ctx.args, 'from'), to: optionalInstant(ctx.args, 'to') })).map(
      ({ workspaceId: _w, ...op }) => op,
    );
    return {
      json: { operations },
      text: formatTable(['ID', 'TYPE', 'TITLE', 'STARTS', 'ENDS', 'UNIT', 'ORGANIZATION'], operations.map((o) => [o.id, o.type, o.title, o.startsAt, o.endsAt, o.unitId, o.organizationId]), '(no operations)'),
    };
  },
};

/** `operations delete --id O` → `{ deleted: { id, title } }`. */
const deleteOp: AdminCommand = {
  group: 'operations',
  name: 'delete',
  summary: 'Delete an operation',
  destructive: 'deletes the operation',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'operation id' } },
  async run(ctx) {
    const op = await deleteOperation(ctx.db(), ctx.args.uuid('id'), doorInvalidation(ctx));
    return { json: { deleted: { id: op.id, title: op.title } }, text: `operation ${op.title} (${op.id}) deleted` };
  },
};

export const operationCommands: AdminCommand[] = [createOp, listOps, deleteOp];
