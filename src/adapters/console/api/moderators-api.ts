/**
 * A workspace's moderators, managed by its admins in the console (issue #31), through the same functions
 * as `admin moderators` (src/auth/moderators/moderator-accounts.ts); every change is recorded in the
 * workspace's audit chain as made by the authenticated caller. Permission `moderators.manage`.
 *
 * - `GET /console/api/workspaces/:workspaceId/moderators` → `{ moderators: ModeratorView[], serverTime }`.
 * - `POST /console/api/workspaces/:workspaceId/moderators` body `{ name, role }` → 201 `{ moderator:
 *   { id, name, role, workspaceId, token }, serverTime }`: the token is shown this once.
 * - `PATCH /console/api/workspaces/:workspaceId/moderators/:moderatorId` body `{ role?, disabled? }` →
 *   `{ moderator: ModeratorView, serverTime }`; in force on every API process at the next request.
 * - `POST /console/api/workspaces/:workspaceId/moderators/:moderatorId/token` (no body) → 201 `{ moderator:
 *   { id, name, role, workspaceId, token }, serverTime }`: a new personal access token, shown this once;
 *   the old one and the sessions signed in with it end on every API process at their next request.
 * - `POST /console/api/workspaces/:workspaceId/moderators/:moderatorId/invitations` (no body) → 201
 *   `{ invitation: { code, expiresAt }, serverTime }`: a one-time code (shown this once) that links the
 *   identity of the person's first OpenID Connect sign-in to the account (src/auth/moderators/moderator-invitations.ts).
 *
 * Errors: 400 `invalid_request` (body), `invalid_moderator_name`, `invalid_role`; 403 `forbidden`; 404
 * `unknown_workspace` (also a workspace the caller has no account in), `unknown_moderator`.
 */
import { Router, type Request, type Response } from 'express';
import type { Db } from '../../../store/prisma.js';
import { NotFoundError, ValidationError } from '../../../errors.js';
import { addModerator, getModerator, listModerators, rotateModeratorToken, setModeratorDisabled, setModeratorRole, type ModeratorStoreDeps } from '../../../auth/moderators/moderator-accounts.js';
import { createInvitation } from '../../../auth/moderators/moderator-invitations.js';
import { authorize, uuidParam, type Access } from './console-request.js';

/** The workspace in the path, once the caller may manage its moderators. */
async function workspaceAccess(req: Request, res: Response, db: Db): Promise<{ workspaceId: string } & Access> {
  const workspaceId = uuidParam(req, 'workspaceId', 'unknown_workspace');
  const notFound = () => new NotFoundError(`workspace ${workspaceId} not found`, 'unknown_workspace');
  const access = authorize(res, workspaceId, 'moderators.manage', notFound);
  if (!access.account && !(await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true } }))) throw notFound();
  return { workspaceId, ...access };
}

function objectBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError('body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Routes of the module comment; mounted under /console/api. */
export function moderatorsApi(deps: ModeratorStoreDeps): Router {
  const router = Router();

  router.get('/workspaces/:workspaceId/moderators', async (req, res) => {
    const { workspaceId } = await workspaceAccess(req, res, deps.db);
    res.json({ moderators: await listModerators(deps.db, workspaceId), serverTime: new Date().toISOString() });
  });

  router.post('/workspaces/:workspaceId/moderators', async (req, res) => {
    const body = objectBody(req);
    const { workspaceId, actor } = await workspaceAccess(req, res, deps.db);
    const extra = Object.keys(body).filter((k) => k !== 'name' && k !== 'role');
    if (extra.length) throw new ValidationError(`unknown field(s): ${extra.join(', ')}`);
    const moderator = await addModerator(deps, { workspaceId, name: body.name, role: body.role }, actor);
    res.status(201).json({ moderator, serverTime: new Date().toISOString() });
  });

  router.patch('/workspaces/:workspaceId/moderators/:moderatorId', async (req, res) => {
    const body = objectBody(req);
    const { workspaceId, actor } = await workspaceAccess(req, res, deps.db);
    const moderatorId = uuidParam(req, 'moderatorId', 'unknown_moderator');
    const extra = Object.keys(body).filter((k) => k !== 'role' && k !== 'disabled');
    if (extra.length) throw new ValidationError(`unknown field(s): ${extra.join(', ')}`);
    if (body.disabled !== undefined && typeof body.disabled !== 'boolean') throw new ValidationError('disabled must be true or false');
    let moderator = await getModerator(deps.db, moderatorId, workspaceId);
    if (body.role !== undefined) moderator = await setModeratorRole(deps, moderatorId, body.role, actor, workspaceId);
    if (typeof body.disabled === 'boolean') moderator = await setModeratorDisabled(deps, moderatorId, body.disabled, actor, workspaceId);
    res.json({ moderator, serverTime: new Date().toISOString() });
  });

  router.post('/workspaces/:workspaceId/moderators/:moderatorId/token', async (req, res) => {
    const { workspaceId, actor } = await workspaceAccess(req, res, deps.db);
    const moderatorId = uuidParam(req, 'moderatorId', 'unknown_moderator');
    const moderator = await rotateModeratorToken(deps, moderatorId, actor, workspaceId);
    res.status(201).json({ moderator, serverTime: new Date().toISOString() });
  });

  router.post('/workspaces/:workspaceId/moderators/:moderatorId/invitations', async (req, res) => {
    const { workspaceId, actor } = await workspaceAccess(req, res, deps.db);
    const moderatorId = uuidParam(req, 'moderatorId', 'unknown_moderator');
    // createInvitation knows no workspaces: the account must be this workspace's (404 as a missing one).
    await getModerator(deps.db, moderatorId, workspaceId);
    const invitation = await createInvitation(deps.db, moderatorId, actor);
    res.status(201).json({ invitation, serverTime: new Date().toISOString() });
  });

  return router;
}
