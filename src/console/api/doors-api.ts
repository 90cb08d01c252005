/**
 * Doors in the console (issue #7: "doors with forced state and a lockdown switch"; spec: States › Door
 * forced state), through src/doors/door-admin-service.ts, like `admin doors force`:
 *
 * - `GET /console/api/games/:gameId/doors` → `{ doors: DoorView[], lockdown, serverTime }`; `lockdown` is
 *   true when the game has doors and every one of them is forced `locked`.
 * - `POST /console/api/games/:gameId/doors/:doorKey/state` body `{ state: "locked"|"unlocked"|"auto" }`,
 *   header `X-Moderator` → `{ result: ForceResult, serverTime }` (the state is recorded, the manifest
 *   version raised, and a `door_set_state` command issued to every live server).
 * - `POST /console/api/games/:gameId/lockdown` body `{ locked: boolean }` → `{ lockdown, results:
 *   ForceResult[], serverTime }`: `true` forces every door `locked`; `false` returns every door to `auto`
 *   (policy evaluation resumes; a door that was forced `unlocked` before the lockdown returns to auto too).
 *
 * Errors: 400 body / `moderator_required`; 404 `unknown_game`, `unknown_door`.
 */
import { Router } from 'express';
import { forceDoor, listDoors, type ForceResult } from '../../doors/door-admin-service.js';
import { compileValidator } from '../../schemas/validator.js';
import { forceDoorSchema, lockdownSchema, type ForceDoorBody, type LockdownBody } from '../console-schemas.js';
import type { ConsoleServices } from '../console-services.js';
import { gameOf, moderatorOf } from './console-request.js';

const validateForce = compileValidator<ForceDoorBody>(forceDoorSchema);
const validateLockdown = compileValidator<LockdownBody>(lockdownSchema);

/** Door and lockdown routes (see the module comment); mounted under /console/api. */
export function doorsApi(services: ConsoleServices): Router {
  const router = Router();

  router.get('/games/:gameId/doors', async (req, res) => {
    const game = await gameOf(req, services.db);
    const doors = await listDoors(services.db, game.id);
    res.json({ doors, lockdown: doors.length > 0 && doors.every((d) => d.forcedState === 'locked'), serverTime: new Date().toISOString() });
  });

  router.post('/games/:gameId/doors/:doorKey/state', async (req, res) => {
    const body = validateForce(req.body);
    const actor = moderatorOf(req);
    const game = await gameOf(req, services.db);
    const result = await forceDoor(services.doors, game.id, String(req.params.doorKey), body.state, actor);
    res.json({ result, serverTime: new Date().toISOString() });
  });

  router.post('/games/:gameId/lockdown', async (req, res) => {
    const body = validateLockdown(req.body);
    const actor = moderatorOf(req);
    const game = await gameOf(req, services.db);
    const state = body.locked ? 'locked' : 'auto';
    const results: ForceResult[] = [];
    // One door after another: each change is its own versioned transaction (door-admin-service).
    for (const door of await listDoors(services.db, game.id)) {
      if (door.forcedState !== state) results.push(await forceDoor(services.doors, game.id, door.key, state, actor));
    }
    res.json({ lockdown: body.locked, results, serverTime: new Date().toISOString() });
  });

  return router;
}
