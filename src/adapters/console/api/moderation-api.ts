/**
 * Moderator actions on players and servers (issue #7: kick, mute, message, freeze, teleport; spec:
 * Command types, Command lifecycle), through the commands service, exactly as the operator CLI issues
 * them:
 *
 * - `POST /console/api/games/:gameId/commands` body {@link IssueCommandBody} `{ type, target:
 *   { externalId } | { externalServerId }, payload?, expiresInSeconds? }` →
 *   201 `{ command: IssuedCommand (+ `door` for door_set_state), serverTime }`. The command starts
 *   `pending`; the live view shows it move to dispatched and acked (or expired / failed). A
 *   `door_set_state` records the door's forced state at once (src/doors/door-admin-service.ts).
 *
 * Permission `commands.issue` (`doors.force` for `door_set_state`), src/adapters/console/api/console-request.ts.
 *
 * Errors: 400 `invalid_request` (body), `invalid_command_type`, `invalid_payload`,
 * `invalid_target`, `invalid_expiry`; 404 `unknown_game`, `server_not_live`, `unknown_door`; 429 `command_queue_full`
 * with Retry-After.
 */
import { Router } from 'express';
import type { CommandTarget } from '../../../commands/command-service.js';
import { issueModeratorCommand } from '../../../commands/moderator-commands.js';
import { compileValidator } from '../../../schemas/validator.js';
import { issueCommandSchema, type IssueCommandBody } from '../console-schemas.js';
import type { ConsoleServices } from '../console-services.js';
import { gameAccess } from './console-request.js';

const validateIssue = compileValidator<IssueCommandBody>(issueCommandSchema);

/** Route `POST /games/:gameId/commands` (see the module comment); mounted under /console/api. */
export function moderationApi(services: ConsoleServices): Router {
  const router = Router();

  router.post('/games/:gameId/commands', async (req, res) => {
    const body = validateIssue(req.body);
    // A door_set_state command forces a door: it needs what forcing a door needs.
    const { game, actor: issuedBy } = await gameAccess(req, res, services.db, body.type === 'door_set_state' ? 'doors.force' : 'commands.issue');
    const command = await issueModeratorCommand(services.commands, {
      gameId: game.id,
      type: body.type,
      payload: body.payload,
      // Both or neither given: the service refuses it with 400 `invalid_target`.
      target: body.target as CommandTarget,
      expiresInSeconds: body.expiresInSeconds,
      issuedBy,
    });
    res.status(201).json({ command, serverTime: new Date().toISOString() });
  });

  return router;
}
