/**
 * Moderator accounts of a workspace (issue #31): create, list, disable, enable, change role, rotate the
 * personal access token, link a sign-in identity. Used by the operator CLI (`admin moderators …`) and by
 * a workspace admin in the console; both record who acted in the workspace's audit chain.
 *
 * Every change that can take a right away (disable, role change, token rotation) publishes
 * `moderator:<id>` on the auth invalidation channel every API process listens to, so it is in force on
 * the next request everywhere, and an open live stream of that moderator closes
 * (src/adapters/console/console-auth.ts). Disabling and rotating also bump `credentialEpoch`, which ends every
 * session signed in under the old value.
 */
import argon2 from 'argon2';
import type { Redis } from 'ioredis';
import type { Moderator } from '@prisma/client';
import type { Db } from '../../store/prisma.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';
import { appendAudit } from '../../audit/audit-chain.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { keyedDigest, type VerifiedDigests } from '../verified-digests.js';
import { generateModeratorToken, sharedDigestName } from './moderator-token.js';
import { isModeratorRole, MODERATOR_ROLES, type ModeratorRole } from './console-permissions.js';

/** A moderator account as listed (never the token or its hash). */
export interface ModeratorView {
  id: string;
  workspaceId: string;
  name: string;
  role: ModeratorRole;
  tokenPrefix: string;
  disabledAt: Date | null;
  createdAt: Date;
  identities: { issuer: string; subject: string }[];
}

/** What {@link addModerator} and {@link rotateModeratorToken} return: the token, shown once. */
export interface IssuedModerator {
  id: string;
  name: string;
  role: ModeratorRole;
  workspaceId: string;
  /** `gmod_<prefix>.<secret>`: returned once, never stored. */
  token: string;
}

/** Where a change is published and its shared digest kept. */
export interface ModeratorStoreDeps {
  db: Db;
  redis: Redis;
  keySpace: KeySpace;
  digests: VerifiedDigests;
}

const NAME_RE = /^[^\p{Cc}\p{Cf}]{1,64}$/u;

/** A display name: trimmed, 1–64 characters, no control characters. @throws {ValidationError} otherwise. */
export function parseModeratorName(raw: unknown): string {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (!NAME_RE.test(name)) throw new ValidationError('the moderator name must be 1-64 characters without control characters', 'invalid_moderator_name');
  return name;
}

/** A role. @throws {ValidationError} `invalid_role` for anything but viewer, moderator, admin. */
export function parseModeratorRole(raw: unknown): ModeratorRole {
  if (!isModeratorRole(raw)) throw new ValidationError(`the role must be one of ${MODERATOR_ROLES.join(', ')}`, 'invalid_role');
  return raw;
}

/** How a moderator account is named on the changes it makes: `moderator:<id> (<name at the time>)`. */
export function moderatorActor(account: { id: string; name: string }): string {
  return `moderator:${account.id} (${account.name})`;
}

function view(row: Moderator & { identities: { issuer: string; subject: string }[] }): ModeratorView {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    role: row.role as ModeratorRole,
    tokenPrefix: row.tokenPrefix,
    disabledAt: row.disabledAt,
    createdAt: row.createdAt,
    identities: row.identities.map((i) => ({ issuer: i.issuer, subject: i.subject })),
  };
}

async function newToken(digests: VerifiedDigests): Promise<{ token: string; prefix: string; hash: string; share: () => Promise<void> }> {
  const { token, prefix, secret } = generateModeratorToken();
  const hash = await argon2.hash(secret, { type: argon2.argon2id });
  return { token, prefix, hash, share: () => digests.set(sharedDigestName(prefix), keyedDigest(hash, secret)) };
}

async function publish(deps: ModeratorStoreDeps, moderatorId: string): Promise<void> {
  await deps.redis.publish(deps.keySpace.global.authChannel(), `moderator:${moderatorId}`);
}

/**
 * Creates an account in `workspaceId` and its personal access token; stores the argon2id hash and the
 * shared verified digest (so the token is never cold on any API process).
 * @throws {NotFoundError} `unknown_workspace`. @throws {ValidationError} bad name or role.
 */
export async function addModerator(deps: ModeratorStoreDeps, input: { workspaceId: string; name: unknown; role: unknown }, actor: string): Promise<IssuedModerator> {
  const name = parseModeratorName(input.name);
  const role = parseModeratorRole(input.role);
  const ws = await deps.db.workspace.findUnique({ where: { id: input.workspaceId }, select: { id: true } });
  if (!ws) throw new NotFoundError(`workspace ${input.workspaceId} not found`, 'unknown_workspace');
  const t = await newToken(deps.digests);
  const row = await deps.db.$transaction(async (tx) => {
    const created = await tx.moderator.create({ data: { workspaceId: ws.id, name, role, tokenPrefix: t.prefix, tokenHash: t.hash } });
    await appendAudit(tx, { workspaceId: ws.id, actor, action: 'moderator.add', detail: { moderatorId: created.id, name, role, tokenPrefix: t.prefix } });
    return created;
  });
  await t.share();
  return { id: row.id, name, role, workspaceId: ws.id, token: t.token };
}

/** The accounts of `workspaceId`, oldest first (never a token or hash). */
export async function listModerators(db: Db, workspaceId: string): Promise<ModeratorView[]> {
  const rows = await db.moderator.findMany({ where: { workspaceId }, include: { identities: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map(view);
}

/** One account. @throws {NotFoundError} `unknown_moderator` (also when it is not in `workspaceId`, if given). */
export async function getModerator(db: Db, id: string, workspaceId?: string): Promise<ModeratorView> {
  const row = await db.moderator.findUnique({ where: { id }, include: { identities: true } });
  if (!row || (workspaceId !== undefined && row.workspaceId !== workspaceId)) throw new NotFoundError(`moderator ${id} not found`, 'unknown_moderator');
  return view(row);
}

/**
 * Applies `data` to account `id` with an audit row `action`, then publishes the change.
 * @throws {NotFoundError} `unknown_moderator` (also when not in `workspaceId`, if given).
 */
async function change(
  deps: ModeratorStoreDeps,
  id: string,
  workspaceId: string | undefined,
  actor: string,
  action: string,
  data: (row: Moderator) => { update: Partial<Pick<Moderator, 'role' | 'disabledAt' | 'tokenPrefix' | 'tokenHash'>> & { bumpEpoch?: boolean }; detail: Record<string, string | null> } | null,
): Promise<ModeratorView> {
  await deps.db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<Moderator[]>`SELECT * FROM "Moderator" WHERE "id" = ${id}::uuid FOR UPDATE`;
    if (!row || (workspaceId !== undefined && row.workspaceId !== workspaceId)) throw new NotFoundError(`moderator ${id} not found`, 'unknown_moderator');
    const next = data(row);
    if (!next) return; // already so: nothing to record
    const { bumpEpoch, ...update } = next.update;
    await tx.moderator.update({ where: { id }, data: { ...update, ...(bumpEpoch ? { credentialEpoch: { increment: 1 } } : {}) } });
    await appendAudit(tx, { workspaceId: row.workspaceId, actor, action, detail: { moderatorId: id, name: row.name, ...next.detail } });
  });
  await publish(deps, id);
  return getModerator(deps.db, id);
}

/** Disables (`disabled` true) or enables account `id`; idempotent. Disabling ends its sessions and refuses its token. */
export function setModeratorDisabled(deps: ModeratorStoreDeps, id: string, disabled: boolean, actor: string, workspaceId?: string): Promise<ModeratorView> {
  return change(deps, id, workspaceId, actor, disabled ? 'moderator.disable' : 'moderator.enable', (row) => {
    if ((row.disabledAt !== null) === disabled) return null;
    return { update: { disabledAt: disabled ? new Date() : null, bumpEpoch: disabled }, detail: {} };
  });
}

/** Changes the role of account `id`; idempotent. @throws {ValidationError} `invalid_role`. */
export function setModeratorRole(deps: ModeratorStoreDeps, id: string, role: unknown, actor: string, workspaceId?: string): Promise<ModeratorView> {
  const next = parseModeratorRole(role);
  return change(deps, id, workspaceId, actor, 'moderator.set-role', (row) =>
    row.role === next ? null : { update: { role: next }, detail: { from: row.role, to: next } },
  );
}

/**
 * Replaces the personal access token of account `id`: the old one stops working on every process on its
 * next use, sessions signed in before end; the new token is returned once.
 */
export async function rotateModeratorToken(deps: ModeratorStoreDeps, id: string, actor: string, workspaceId?: string): Promise<IssuedModerator> {
  const t = await newToken(deps.digests);
  let oldPrefix = '';
  const account = await change(deps, id, workspaceId, actor, 'moderator.rotate-token', (row) => {
    oldPrefix = row.tokenPrefix;
    return { update: { tokenPrefix: t.prefix, tokenHash: t.hash, bumpEpoch: true }, detail: { from: row.tokenPrefix, to: t.prefix } };
  });
  await Promise.all([t.share(), deps.digests.delete(sharedDigestName(oldPrefix))]);
  return { id: account.id, name: account.name, role: account.role, workspaceId: account.workspaceId, token: t.token };
}

/** Links the sign-in identity (`issuer`, `subject`) to account `id`; idempotent. @throws {ValidationError} empty issuer or subject. */
export async function linkModeratorIdentity(deps: ModeratorStoreDeps, id: string, issuer: string, subject: string, actor: string): Promise<ModeratorView> {
  const iss = issuer.trim();
  const sub = subject.trim();
  if (!iss || !sub || iss.length > 512 || sub.length > 255) throw new ValidationError('issuer and subject are required (at most 512 and 255 characters)', 'invalid_identity');
  await deps.db.$transaction(async (tx) => {
    const row = await tx.moderator.findUnique({ where: { id } });
    if (!row) throw new NotFoundError(`moderator ${id} not found`, 'unknown_moderator');
    const existing = await tx.moderatorIdentity.findUnique({ where: { issuer_subject_moderatorId: { issuer: iss, subject: sub, moderatorId: id } } });
    if (existing) return;
    await tx.moderatorIdentity.create({ data: { moderatorId: id, issuer: iss, subject: sub } });
    await appendAudit(tx, { workspaceId: row.workspaceId, actor, action: 'moderator.link', detail: { moderatorId: id, name: row.name, issuer: iss, subject: sub } });
  });
  return getModerator(deps.db, id);
}
