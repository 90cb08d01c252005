/** `admin units create|list|delete`: the org tree of a workspace (src/workspace/units.ts). */
import { createUnit, deleteUnit, listUnits } from '../../../workspace/units.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';

/**
 * `units create --workspace W --name N [--parent U] [--org O]` → the unit
 * `{ id, workspaceId, name, parentId, organizationId, createdAt }`.
 * @throws {NotFoundError} a parent or organization outside the workspace.
 */
const create: AdminCommand = {
  group: 'units',
  name: 'create',
  summary: 'Create a unit, optionally under a parent unit and in an organization',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    name: { type: 'string', required: true, valueName: 'NAME', description: 'name' },
    parent: { type: 'string', valueName: 'ID', description: 'parent unit id' },
    org: { type: 'string', valueName: 'ID', description: 'organization id' },
  },
  async run(ctx) {
    const unit = await createUnit(ctx.db(), {
      workspaceId: ctx.args.uuid('workspace'),
      name: ctx.args.string('name'),
      parentId: ctx.args.optionalUuid('parent'),
      organizationId: ctx.args.optionalUuid('org'),
    });
    return { json: { ...unit }, text: formatFields([['id', unit.id], ['name', unit.name], ['parent', unit.parentId], ['organization', unit.organizationId]]) };
  },
};

/** `units list --workspace W` → `{ units: [{ id, name, parentId, organizationId, depth, createdAt }] }` in tree order. */
const list: AdminCommand = {
  group: 'units',
  name: 'list',
  summary: 'List the units of a workspace as a tree',
  options: { workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' } },
  async run(ctx) {
    const units = (await listUnits(ctx.db(), ctx.args.uuid('workspace'))).map(({ id, name, parentId, organizationId, depth, createdAt }) => ({ id, name, parentId, organizationId, depth, createdAt }));
    return {
      json: { units },
      text: formatTable(['UNIT', 'ID', 'ORGANIZATION'], units.map((u) => [`${'  '.repeat(u.depth)}${u.name}`, u.id, u.organizationId]), '(no units)'),
    };
  },
};

/**
 * `units delete --id U [--recursive]` → `{ deleted: { id, name }, deletedUnits }`. Without --recursive a
 * unit with child units or positions is refused (`unit_not_empty`); with it the whole subtree goes, with
 * its positions and assignments.
 */
const remove: AdminCommand = {
  group: 'units',
  name: 'delete',
  summary: 'Delete a unit (--recursive: with every unit, position and assignment below it)',
  destructive: 'deletes the unit (with --recursive, everything below it)',
  options: {
    id: { type: 'string', required: true, valueName: 'ID', description: 'unit id' },
    recursive: { type: 'boolean', description: 'also delete child units, positions and their assignments' },
  },
  async run(ctx) {
    const r = await deleteUnit(ctx.db(), ctx.args.uuid('id'), doorInvalidation(ctx), { recursive: ctx.args.flag('recursive') });
    return { json: { deleted: { id: r.unit.id, name: r.unit.name }, deletedUnits: r.deletedUnits }, text: `unit ${r.unit.name} (${r.unit.id}) deleted; ${r.deletedUnits} unit(s) in total` };
  },
};

export const unitCommands: AdminCommand[] = [create, list, remove];
