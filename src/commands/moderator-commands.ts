/**
 * The one entry for commands a moderator issues (operator CLI `commands issue`, console `POST
 * /console/api/games/:gameId/commands`). Most types only need delivering (src/commands/command-service.ts);
 * `door_set_state` also changes service state, the door's forced state, and goes through the doors
 * service first (src/doors/door-admin-service.ts `issueDoorSetState`; spec: States › Door forced state).
 * Internal issuers that already recorded their effect (`doors force`, the kick on a new ban) call
 * `issueCommand` directly.
 */
import { issueCommand, type CommandServiceDeps, type IssueCommandInput, type IssuedCommand } from './command-service.js';
import { issueDoorSetState } from '../doors/door-admin-service.js';

/** What {@link issueModeratorCommand} returns: the command, plus the door change for `door_set_state`. */
export type ModeratorCommandResult = IssuedCommand & {
  /** Only for `door_set_state`: the door's forced state before and after, and the doors version it raised. */
  door?: { key: string; from: string; forcedState: string; doorsVersion: number };
};

/**
 * Issues `input` as a moderator's command. For `door_set_state` the door's forced state is recorded at
 * issue time (doors version raised, decision caches retired) before the command goes to the server.
 * @throws everything `issueCommand` and `issueDoorSetState` throw (400, 404, 429 domain errors).
 */
export async function issueModeratorCommand(deps: CommandServiceDeps, input: IssueCommandInput): Promise<ModeratorCommandResult> {
  if (input.type === 'door_set_state') {
    const { command, door } = await issueDoorSetState({ db: deps.db, redis: deps.redis, keySpace: deps.keySpace, commands: deps }, { ...input, type: 'door_set_state' });
    return { ...command, door };
  }
  return issueCommand(deps, input);
}
