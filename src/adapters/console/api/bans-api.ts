/**
 * Bans in the console (issue #7: "bans (create, lift)"; spec: What the service does, item 5), through
 * src/bans/ban-service.ts like `admin bans`. The console works per game, so the bans shown and created
 * are those of the game's workspace; a `game` or `server` ban created here covers this game.
 *
 * - `GET /console/api/games/:gameId/bans[?all=1]` → `{ bans: BanView[], serverTime }`: the workspace's
 *   bans in force (with `all=1` also lifted and expired ones), newest first.
 * - `POST /console/api/games/:gameId/bans` body {@link CreateBanBody} → 201
 *   `{ ban, kicks, platformWrites, serverTime }` (an online user is kicked with the ban reason).
 * - `POST /console/api/bans/:banId/lift` → `{ ban, alreadyLifted, platformWrites,
 *   serverTime }`.
 *
 * Permissions `console.read`, `bans.create`, `bans.lift` (src/adapters/console/api/console-request.ts); the ban is
 * recorded as issued (lifted) by the authenticated caller.
 *
 * Errors: 400 body / service validation; 403 `forbidden`; 404 `unknown_game`, `unknown_ban` (not a ban
 * id, no such ban, or a ban of a workspace the caller has no account in).
 */
import { Router } from 'express';
import { listBans } from '../../../bans/ban-service.js';
import { compileValidator } from '../../../schemas/validator.js';
import { createBanSchema, type CreateBanBody } from '../console-schemas.js';
import type { ConsoleServices } from '../console-services.js';
import { authorize, gameAccess, uuidParam } from './console-request.js';
import { NotFoundError } from '../../../errors.js';

const validateCreate = compileValidator<CreateBanBody>(createBanSchema);

/** Ban routes (see the module comment); mounted under /console/api. */
export function bansApi(services: ConsoleServices): Router {
  const router = Router();

  router.get('/games/:gameId/bans', async (req, res) => {
    const { game } = await gameAccess(req, res, services.db, 'console.read');
    const activeOnly = req.query.all !== '1';
    const bans = await listBans(services.db, { workspaceId: game.workspaceId, activeOnly });
    res.json({ bans: bans.map(({ platformWrites: _omitted, ...ban }) => ban), serverTime: new Date().toISOString() });
  });

  router.post('/games/:gameId/bans', async (req, res) => {
    const body = validateCreate(req.body);
    const { game, actor: issuedBy } = await gameAccess(req, res, services.db, 'bans.create');
    const result = await services.bans.create({
      workspaceId: game.workspaceId,
      externalId: body.externalId,
      scope: body.scope,
      gameId: body.scope === 'workspace' ? null : game.id,
      externalServerId: body.externalServerId ?? null,
      expiresInSeconds: body.expiresInSeconds ?? null,
      reason: body.reason,
      issuedBy,
    });
    res.status(201).json({ ...result, serverTime: new Date().toISOString() });
  });

  router.post('/bans/:banId/lift', async (req, res) => {
    const banId = uuidParam(req, 'banId', 'unknown_ban');
    const notFound = () => new NotFoundError(`ban ${banId} not found`, 'unknown_ban');
    const ban = await services.db.ban.findUnique({ where: { id: banId }, select: { workspaceId: true } });
    if (!ban) throw notFound();
    const { actor } = authorize(res, ban.workspaceId, 'bans.lift', notFound);
    const result = await services.bans.lift(banId, actor);
    res.json({ ...result, serverTime: new Date().toISOString() });
  });

  return router;
}
