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

export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  ...workspaceCommands,
  ...gameCommands,
  ...keyCommands,
  ...serverCommands,
  ...auditCommands,
];
