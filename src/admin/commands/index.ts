/**
 * The operator CLI's command registry: one line per command module. A new module exports an
 * `AdminCommand[]` (see ../command.ts) and is added here; help and dispatch pick it up.
 */
import type { AdminCommand } from '../command';
import { workspaceCommands } from './workspaces';
import { gameCommands } from './games';
import { keyCommands } from './keys';
import { serverCommands } from './servers';
import { auditCommands } from './audit';
import { commandCommands } from './commands';
import { banCommands } from './bans';
import { gamePlatformCommands } from './game-platform';
import { doorCommands } from './doors';
import { workspaceFileCommands } from './workspace-file';
import { orgCommands } from './workspace-orgs';
import { unitCommands } from './workspace-units';
import { positionCommands } from './workspace-positions';
import { memberCommands } from './workspace-members';
import { operationCommands } from './workspace-operations';
import { recordCommands } from './workspace-records';
import { derivedDataCommands } from './derived-data';
import { healthCommands } from './health';

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  ...workspaceCommands,
  ...gameCommands,
  ...keyCommands,
  ...serverCommands,
  ...auditCommands,
  ...commandCommands,
  ...banCommands,
  ...gamePlatformCommands,
  ...doorCommands,
  ...workspaceFileCommands,
  ...orgCommands,
  ...unitCommands,
  ...positionCommands,
  ...memberCommands,
  ...operationCommands,
  ...recordCommands,
  ...derivedDataCommands,
  ...healthCommands,
];
