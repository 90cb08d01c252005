/**
 * Kick on ban (issue #6: "Creating a ban for a user who is online also issues a kick command to the
 * server(s) it covers, with the ban reason"), through the commands concern: a `kick` command with
 * payload `{ reason }` aimed at the user, which the heartbeat delivers to the server they are on and
 * which is complete once the game acks it (spec: Command lifecycle). The ban service only calls this for
 * covered servers the user is on right now.
 */
import { issueCommand, type CommandServiceDeps } from '../commands/command-service.js';
import type { KickIssuer } from './ban-service.js';

/** A {@link KickIssuer} that issues `kick` commands with the commands service. */
export function commandKickIssuer(deps: CommandServiceDeps): KickIssuer {
  return async ({ gameId, externalId, reason, issuedBy }) => {
    const command = await issueCommand(deps, { gameId, type: 'kick', payload: { reason }, target: { externalId }, issuedBy });
    return { commandId: command.id };
  };
}
