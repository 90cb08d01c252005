/** `admin orgs create|list|delete`: organizations of a workspace (src/workspace/organizations.ts). */
import { createOrganization, deleteOrganization, listOrganizations } from '../../../workspace/organizations.js';
import { doorInvalidation } from './door-invalidation.js';
import type { AdminCommand } from '../command.js';
import { formatFields, formatTable } from '../format.js';

/** `orgs create --workspace W --name N` → `{ id, workspaceId, name, createdAt }`. @throws {ValidationError} `duplicate_name`. */
const create: AdminCommand = {
  group: 'orgs',
  name: 'create',
  summary: 'Create an organization in a workspace',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    name: { type: 'string', required: true, valueName: 'NAME', description: 'name, unique in the workspace' },
  },
  async run(ctx) {
    const org = await createOrganization(ctx.db(), { workspaceId: ctx.args.uuid('workspace'), name: ctx.args.string('name') });
    return { json: { ...org }, text: formatFields([['id', org.id], ['name', org.name]]) };
  },
};

/** `orgs list --workspace W` → `{ organizations: [{ id, name, createdAt }] }` by name. */
const list: AdminCommand = {
  group: 'orgs',
  name: 'list',
  summary: 'List the organizations of a workspace',
  options: { workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' } },
  async run(ctx) {
    const organizations = (await listOrganizations(ctx.db(), ctx.args.uuid('workspace'))).map(({ id, name, createdAt }) => ({ id, name, createdAt }));
    return { json: { organizations }, text: formatTable(['ID', 'NAME', 'CREATED'], organizations.map((o) => [o.id, o.name, o.createdAt]), '(no organizations)') };
  },
};

/** `orgs delete --id O` → `{ deleted: { id, name } }`; its units and operations stay, unlinked. */
const remove: AdminCommand = {
  group: 'orgs',
  name: 'delete',
  summary: 'Delete an organization (its units and operations stay, without it)',
  destructive: 'deletes the organization',
  options: { id: { type: 'string', required: true, valueName: 'ID', description: 'organization id' } },
  async run(ctx) {
    const org = await deleteOrganization(ctx.db(), ctx.args.uuid('id'), doorInvalidation(ctx));
    return { json: { deleted: { id: org.id, name: org.name } }, text: `organization ${org.name} (${org.id}) deleted` };
  },
};

export const orgCommands: AdminCommand[] = [create, list, remove];
