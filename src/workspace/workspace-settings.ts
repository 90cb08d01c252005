/**
 * The workspace's week settings: the IANA time zone and the ISO weekday quota weeks start on (issue #4:
 * "weeks starting Monday 00:00 UTC unless the workspace says otherwise"; period rules in calendar.ts).
 */
import type { Db } from '../store/prisma.js';
import { ValidationError } from '../errors.js';
import { isTimeZone } from './calendar.js';
import { requireWorkspace, type WorkspaceInfo } from './workspace-lookup.js';

/**
 * Changes the time zone and/or week start of `workspaceId` and returns the workspace. Quota progress is
 * computed when asked for, so the change applies to every period shown from then on.
 * @throws {NotFoundError} unknown workspace. @throws {ValidationError} `invalid_time_zone`, a weekday
 * outside 1–7, or nothing to change.
 */
export async function setWeekSettings(db: Db, workspaceId: string, settings: { timeZone?: string; weekStartsOn?: number }): Promise<WorkspaceInfo> {
  if (settings.timeZone === undefined && settings.weekStartsOn === undefined) throw new ValidationError('give a time zone and/or a week start day');
  if (settings.timeZone !== undefined && !isTimeZone(settings.timeZone)) throw new ValidationError(`unknown time zone "${settings.timeZone}"`, 'invalid_time_zone');
  const w = settings.weekStartsOn;
  if (w !== undefined && (!Number.isInteger(w) || w < 1 || w > 7)) throw new ValidationError('weekStartsOn must be an ISO weekday from 1 (Monday) to 7 (Sunday)');
  await requireWorkspace(db, workspaceId);
  await db.workspace.update({ where: { id: workspaceId }, data: { timeZone: settings.timeZone, weekStartsOn: w } });
  return requireWorkspace(db, workspaceId);
}
