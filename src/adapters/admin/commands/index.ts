/**
 * The operator CLI's command registry: one line per command module. A new module exports an
 * `AdminCommand[]` (see ../command.ts) and is added here; help and dispatch pick it up.
 */
import type { AdminCommand } from '../command.js';
import { workspaceCommands } from './workspaces.js';
import { gameCommands } from './games.js';
import { keyCommands } from './keys.js';
import { serverCommands } from './servers.js';
import { auditCommands } from './audit.js';
import { commandCommands } from './commands.js';
import { banCommands } from './bans.js';
import { gamePlatformCommands } from './game-platform.js';
import { doorCommands } from './doors.js';
import { workspaceFileCommands } from './workspace-file.js';
import { orgCommands } from './workspace-orgs.js';
import { unitCommands } from './workspace-units.js';
import { positionCommands } from './workspace-positions.js';
import { memberCommands } from './workspace-members.js';
import { operationCommands } from './workspace-operations.js';
import { recordCommands } from './workspace-records.js';
import { derivedDataCommands } from './derived-data.js';
import { healthCommands } from './health.js';
import { moderatorCommands } from './moderators.js';

/** Groups merged into another: the old name is refused with the new one (`workspace` → `workspaces`). */
export const RENAMED_GROUPS: Readonly<Record<string, string>> = { workspace: 'workspaces' };

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
  ...moderatorCommands,
];
