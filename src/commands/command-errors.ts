/** Domain errors of command issuing; they carry a status and a stable code like every AppError. */
import { AppError } from '../http/errors.js';

/**
 * 429 `command_queue_full`: the destination queue (a server's open commands, or a waiting user's
 * commands) is at its cap. `Retry-After` is the game's heartbeat interval: the queue drains as the server
 * acks on its next heartbeats, or as commands expire.
 */
export class CommandQueueFullError extends AppError {
  constructor(where: string, open: number, cap: number, retryAfterSeconds: number) {
    super(429, 'command_queue_full', `${where} already has ${open} open commands (cap ${cap}); wait for acks or expiry and issue again`, {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    });
  }
}
