/**
 * Doors in the console (issue #7: "doors with forced state and a lockdown switch"; spec: States › Door
 * forced state), through src/doors/door-admin-service.ts, like `admin doors force`:
 *
 * - `GET /console/api/games/:gameId/doors` → `{ doors: DoorView[], lockdown, serverTime }`; `lockdown` is
 *   true when the game has doors and every one of them is forced `locked`.
 * - `POST /console/api/games/:gameId/doors/:doorKey/state` body `{ state: "locked"|"unlocked"|"auto" }` → `{ result: ForceResult, serverTime }` (the state is recorded, the manifest
 *   version raised, and a `door_set_state` command issued to every live server).
 * - `POST /console/api/games/:gameId/lockdown` body `{ locked: boolean, doorCount? }` → `{ lockdown, results:
 *   ForceResult[], serverTime }`: `true` forces every door `locked`; `false` returns every door to `auto`
 *   (policy evaluation resumes; a door that was forced `unlocked` before the lockdown returns to auto too).
 *   The page asks the moderator to confirm, naming the game and the number of doors, and sends that number
 *   as `doorCount`: 409 `doors_changed` (nothing forced) when the game has a different number now.
 *
 * - `GET /console/api/games/:gameId/access-log?door=&user=&decision=allow|deny&since=&limit=&cursor=` →
 *   `{ entries: AccessLogEntry[], nextCursor, since, serverTime }`, newest first, keyset-paginated
 *   (src/doors/access-log-query.ts; the same as `admin doors access-log`).
 * - `GET /console/api/games/:gameId/policies/:policyId` → `{ policy: PolicyView, serverTime }`: the policy
 *   an access-log row names.
 *
 * Permissions `console.read`, `doors.force`, `doors.lockdown` (src/adapters/console/api/console-request.ts).
 *
 * Errors: 403 `forbidden`; 400 body / `invalid_since` / `invalid_cursor` / `invalid_request`; 404
 * `unknown_game`, `unknown_door`, `unknown_policy`; 409 `doors_changed`.
 */
import { Router } from 'express';
import { DomainError } from '../../../errors.js';
import { forceDoor, getPolicy, listDoors, type ForceResult } from '../../../doors/door-admin-service.js';
import { queryAccessLog } from '../../../doors/access-log-query.js';
import { compileValidator } from '../../../schemas/validator.js';
import { forceDoorSchema, lockdownSchema, type ForceDoorBody, type LockdownBody } from '../console-schemas.js';
import type { ConsoleServices } from '../console-services.js';
import { gameAccess } from './console-request.js';

const validateForce = compileValidator<ForceDoorBody>(forceDoorSchema);

/** 409 `doors_changed`: the lockdown was confirmed for a different number of doors than the game has now. */
export class DoorsChangedError extends DomainError {
  constructor(gameName: string, confirmed: number, now: number) {
    super('conflict', 'doors_changed', `the lockdown was confirmed for ${confirmed} door(s), but game "${gameName}" has ${now} now; confirm again`);
  }
}
const validateLockdown = compileValidator<LockdownBody>(lockdownSchema);

/** Door and lockdown routes (see the module comment); mounted under /console/api. */
export function doorsApi(services: ConsoleServices): Router {
  const router = Router();

  router.get('/games/:gameId/doors', async (req, res) => {
    const { game } = await gameAccess(req, res, services.db, 'console.read');
    const doors = await listDoors(services.db, game.id);
    res.json({ doors, lockdown: doors.length > 0 && doors.every((d) => d.forcedState === 'locked'), serverTime: new Date().toISOString() });
  });

  router.post('/games/:gameId/doors/:doorKey/state', async (req, res) => {
    const body = validateForce(req.body);
    const { game, actor } = await gameAccess(req, res, services.db, 'doors.force');
    const result = await forceDoor(services.doors, game.id, String(req.params.doorKey), body.state, actor);
    res.json({ result, serverTime: new Date().toISOString() });
  });

  router.get('/games/:gameId/access-log', async (req, res) => {
    const { game } = await gameAccess(req, res, services.db, 'console.read');
    const q = (name: string) => (typeof req.query[name] === 'string' && req.query[name] !== '' ? (req.query[name]) : undefined);
    const limit = q('limit');
    const page = await queryAccessLog(services.db, {
      gameId: game.id,
      doorKey: q('door'),
      externalId: q('user'),
      decision: q('decision'),
      since: q('since'),
      limit: limit === undefined ? undefined : /^\d{1,4}$/.test(limit) ? Number(limit) : -1,
      cursor: q('cursor'),
    });
    res.json({ ...page, serverTime: new Date().toISOString() });
  });

  router.get('/games/:gameId/policies/:policyId', async (req, res) => {
    const { game } = await gameAccess(req, res, services.db, 'console.read');
    const policy = await getPolicy(services.db, game.id, String(req.params.policyId));
    res.json({ policy, serverTime: new Date().toISOString() });
  });

  router.post('/games/:gameId/lockdown', async (req, res) => {
    const body = validateLockdown(req.body);
    const { game, actor } = await gameAccess(req, res, services.db, 'doors.lockdown');
    const state = body.locked ? 'locked' : 'auto';
    const results: ForceResult[] = [];
    const doors = await listDoors(services.db, game.id);
    if (body.doorCount !== undefined && body.doorCount !== doors.length) throw new DoorsChangedError(game.name, body.doorCount, doors.length);
    // One door after another: each change is its own versioned transaction (door-admin-service).
    for (const door of doors) {
      if (door.forcedState !== state) results.push(await forceDoor(services.doors, game.id, door.key, state, actor));
    }
    res.json({ lockdown: body.locked, results, serverTime: new Date().toISOString() });
  });

  return router;
}
