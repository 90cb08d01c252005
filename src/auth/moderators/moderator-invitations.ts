/**
 * One-time invitation codes (issue #31): an operator or workspace admin invites a moderator account; the
 * person presents the code once at their first OpenID Connect sign-in, and the identity they signed in
 * with is linked to the account. Only SHA-256 of the code is stored (the code is 128 random bits, so a
 * fast hash suffices); a code works once and until it expires.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../store/prisma.js';
import { appendAudit } from '../../audit/audit-chain.js';
import { NotFoundError } from '../../errors.js';

/** How long an invitation stays valid by default, ms (3 days). */
export const INVITATION_TTL_MS = 3 * 24 * 3_600_000;

const hashOf = (code: string): string => createHash('sha256').update(code).digest('hex');

/**
 * Creates an invitation to account `moderatorId`; the code is returned once.
 * @throws {NotFoundError} `unknown_moderator`.
 */
export async function createInvitation(db: Db, moderatorId: string, actor: string, ttlMs = INVITATION_TTL_MS, nowMs = Date.now()): Promise<{ code: string; expiresAt: Date }> {
  const code = randomBytes(16).toString('base64url');
  const expiresAt = new Date(nowMs + ttlMs);
  await db.$transaction(async (tx) => {
    const row = await tx.moderator.findUnique({ where: { id: moderatorId } });
    if (!row) throw new NotFoundError(`moderator ${moderatorId} not found`, 'unknown_moderator');
    await tx.moderatorInvitation.create({ data: { moderatorId, codeHash: hashOf(code), expiresAt } });
    await appendAudit(tx, { workspaceId: row.workspaceId, actor, action: 'moderator.invite', detail: { moderatorId, name: row.name, expiresAt: expiresAt.toISOString() } });
  });
  return { code, expiresAt };
}

/**
 * Redeems `code` for the identity (`issuer`, `subject`): marks it used and links the identity to the
 * invited account, in one transaction (a code used twice concurrently links once).
 * @returns the account id, or null when the code is unknown, used, expired, or its account disabled.
 */
export async function redeemInvitation(db: Db, code: string, issuer: string, subject: string, nowMs = Date.now()): Promise<string | null> {
  if (!/^[A-Za-z0-9_-]{22}$/.test(code)) return null;
  return db.$transaction(async (tx) => {
    const invitation = await tx.moderatorInvitation.findUnique({ where: { codeHash: hashOf(code) }, include: { moderator: true } });
    if (!invitation || invitation.usedAt || invitation.expiresAt.getTime() <= nowMs || invitation.moderator.disabledAt) return null;
    const used = await tx.moderatorInvitation.updateMany({ where: { id: invitation.id, usedAt: null }, data: { usedAt: new Date(nowMs) } });
    if (used.count !== 1) return null;
    const m = invitation.moderator;
    await tx.moderatorIdentity.upsert({
      where: { issuer_subject_moderatorId: { issuer, subject, moderatorId: m.id } },
      create: { moderatorId: m.id, issuer, subject },
      update: {},
    });
    await appendAudit(tx, { workspaceId: m.workspaceId, actor: `moderator:${m.id} (${m.name})`, action: 'moderator.link', detail: { moderatorId: m.id, name: m.name, issuer, subject, via: 'invitation' } });
    return m.id;
  });
}

/** Account ids linked to the identity (`issuer`, `subject`), one per workspace the person moderates. */
export async function accountsOfIdentity(db: Db, issuer: string, subject: string): Promise<string[]> {
  const rows = await db.moderatorIdentity.findMany({ where: { issuer, subject }, select: { moderatorId: true } });
  return rows.map((r) => r.moderatorId);
}
