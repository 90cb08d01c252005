/**
 * `admin moderators add|list|disable|enable|set-role|rotate-token|link|invite`: console moderator accounts of a
 * workspace (issue #31; src/auth/moderators/moderator-accounts.ts). `add` and `rotate-token` print the
 * personal access token `gmod_<prefix>.<secret>` once; only its prefix and argon2id hash are stored.
 * Every change is appended to the workspace's audit chain as made by this invocation's actor, and
 * disable / set-role / rotate-token take effect on every API process at the next request.
 */
import {
  addModerator,
  getModerator,
  linkModeratorIdentity,
  listModerators,
  rotateModeratorToken,
  setModeratorDisabled,
  setModeratorRole,
  type IssuedModerator,
  type ModeratorStoreDeps,
  type ModeratorView,
} from '../../../auth/moderators/moderator-accounts.js';
import { MODERATOR_ROLES } from '../../../auth/moderators/console-permissions.js';
import { VerifiedDigests } from '../../../auth/verified-digests.js';
import { UsageError, type AdminCommand, type CommandContext, type CommandResult } from '../command.js';
import { createInvitation } from '../../../auth/moderators/moderator-invitations.js';
import { formatFields, formatTable } from '../format.js';

const ROLE_HELP = MODERATOR_ROLES.join('|');
const idOption = { id: { type: 'string', required: true, valueName: 'ID', description: 'moderator account id' } } as const;

function store(ctx: CommandContext): ModeratorStoreDeps {
  return { db: ctx.db(), redis: ctx.redis(), keySpace: ctx.keySpace, digests: new VerifiedDigests(ctx.redis(), ctx.keySpace) };
}

function issued(ctx: CommandContext, m: IssuedModerator): CommandResult {
  ctx.notice('warning: this is the only time the token is shown; hand it to the moderator now (a lost token is rotated).');
  return {
    json: { id: m.id, name: m.name, role: m.role, workspaceId: m.workspaceId, token: m.token },
    text: formatFields([['token', m.token], ['id', m.id], ['name', m.name], ['role', m.role], ['workspace', m.workspaceId]]),
  };
}

function shown(m: ModeratorView): CommandResult {
  return {
    json: { ...m },
    text: formatFields([
      ['id', m.id],
      ['name', m.name],
      ['role', m.role],
      ['workspace', m.workspaceId],
      ['token prefix', m.tokenPrefix],
      ['disabled', m.disabledAt],
      ['identities', m.identities.map((i) => `${i.issuer} ${i.subject}`).join(', ') || '(none)'],
    ]),
  };
}

/**
 * `moderators add --workspace W --name N --role R` → `{ id, name, role, workspaceId, token }`.
 * @throws {ValidationError} bad name or role. @throws {NotFoundError} `unknown_workspace`.
 */
const add: AdminCommand = {
  group: 'moderators',
  name: 'add',
  summary: 'Add a console moderator to a workspace (the personal access token is shown once)',
  options: {
    workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' },
    name: { type: 'string', required: true, valueName: 'NAME', description: 'display name (1-64 characters), recorded on every change they make' },
    role: { type: 'string', required: true, valueName: 'ROLE', description: ROLE_HELP },
  },
  async run(ctx) {
    const m = await addModerator(store(ctx), { workspaceId: ctx.args.uuid('workspace'), name: ctx.args.string('name'), role: ctx.args.string('role') }, ctx.actor);
    return issued(ctx, m);
  },
};

/** `moderators list --workspace W` → `{ moderators: ModeratorView[] }`, oldest first; never a token or hash. */
const list: AdminCommand = {
  group: 'moderators',
  name: 'list',
  summary: 'List the console moderators of a workspace',
  options: { workspace: { type: 'string', required: true, valueName: 'ID', description: 'workspace id' } },
  async run(ctx) {
    const moderators = await listModerators(ctx.db(), ctx.args.uuid('workspace'));
    return {
      json: { moderators },
      text: formatTable(
        ['ID', 'NAME', 'ROLE', 'TOKEN PREFIX', 'DISABLED', 'IDENTITIES'],
        moderators.map((m) => [m.id, m.name, m.role, m.tokenPrefix, m.disabledAt, m.identities.length]),
        '(no moderators)',
      ),
    };
  },
};

/** `moderators disable --id M` → the account; its token and sessions stop working on every API process. */
const disable: AdminCommand = {
  group: 'moderators',
  name: 'disable',
  summary: 'Disable a moderator (token and sessions refused at once, open live streams closed)',
  destructive: "ends the moderator's token and sessions",
  options: idOption,
  async run(ctx) {
    return shown(await setModeratorDisabled(store(ctx), ctx.args.uuid('id'), true, ctx.actor));
  },
};

/** `moderators enable --id M` → the account (its token works again; old sessions stay ended). */
const enable: AdminCommand = {
  group: 'moderators',
  name: 'enable',
  summary: 'Enable a disabled moderator',
  options: idOption,
  async run(ctx) {
    return shown(await setModeratorDisabled(store(ctx), ctx.args.uuid('id'), false, ctx.actor));
  },
};

/** `moderators set-role --id M --role R` → the account. @throws {ValidationError} `invalid_role`. */
const setRole: AdminCommand = {
  group: 'moderators',
  name: 'set-role',
  summary: `Change a moderator's role (${ROLE_HELP})`,
  options: { ...idOption, role: { type: 'string', required: true, valueName: 'ROLE', description: ROLE_HELP } },
  async run(ctx) {
    return shown(await setModeratorRole(store(ctx), ctx.args.uuid('id'), ctx.args.string('role'), ctx.actor));
  },
};

/** `moderators rotate-token --id M` → `{ id, name, role, workspaceId, token }`; the old token and its sessions end. */
const rotateToken: AdminCommand = {
  group: 'moderators',
  name: 'rotate-token',
  summary: "Replace a moderator's personal access token (the new one is shown once)",
  destructive: "revokes the moderator's token and ends their sessions",
  options: idOption,
  async run(ctx) {
    return issued(ctx, await rotateModeratorToken(store(ctx), ctx.args.uuid('id'), ctx.actor));
  },
};

/** `moderators link --id M --issuer URL --subject SUB` → the account: that OpenID Connect identity may sign in as it. */
const link: AdminCommand = {
  group: 'moderators',
  name: 'link',
  summary: 'Link a sign-in identity (OIDC issuer + subject, e.g. a Roblox user id) to a moderator',
  options: {
    ...idOption,
    issuer: { type: 'string', required: true, valueName: 'URL', description: 'the identity provider, exactly as OIDC_ISSUER' },
    subject: { type: 'string', required: true, valueName: 'SUB', description: "the person's `sub` at that provider" },
  },
  async run(ctx) {
    const id = ctx.args.uuid('id');
    await getModerator(ctx.db(), id);
    return shown(await linkModeratorIdentity(store(ctx), id, ctx.args.string('issuer'), ctx.args.string('subject'), ctx.actor));
  },
};

/**
 * `moderators invite --id M [--hours H]` → `{ code, expiresAt }`: a one-time code the person gives at
 * their first OpenID Connect sign-in (`/console/auth/oidc/start?invite=<code>`, or the sign-in page) to
 * link the identity they sign in with to the account. Default 72 hours, at most 720.
 */
const invite: AdminCommand = {
  group: 'moderators',
  name: 'invite',
  summary: 'Create a one-time invitation code that links the identity signing in with it to a moderator',
  options: { ...idOption, hours: { type: 'string', valueName: 'H', description: 'hours the code stays valid (1-720, default 72)' } },
  async run(ctx) {
    const hours = ctx.args.int('hours', 72);
    if (hours < 1 || hours > 720) throw new UsageError('--hours must be 1-720');
    const { code, expiresAt } = await createInvitation(ctx.db(), ctx.args.uuid('id'), ctx.actor, hours * 3_600_000, ctx.nowMs);
    ctx.notice('warning: this is the only time the code is shown; it works once.');
    return { json: { code, expiresAt }, text: formatFields([['code', code], ['expires', expiresAt]]) };
  },
};

export const moderatorCommands: AdminCommand[] = [add, list, disable, enable, setRole, rotateToken, link, invite];
