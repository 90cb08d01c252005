/** Domain errors of command issuing; they carry a kind and a stable code like every DomainError. */
import { RateLimitError } from '../errors.js';

/**
 * 429 `command_queue_full`: the destination queue (a server's open commands, or a waiting user's
 * commands) is at its cap. `Retry-After` is the game's heartbeat interval: the queue drains as the server
 * acks on its next heartbeats, or as commands expire.
 */
export class CommandQueueFullError extends RateLimitError {
  constructor(where: string, open: number, cap: number, retryAfterSeconds: number) {
    super(retryAfterSeconds, `${where} already has ${open} open commands (cap ${cap}); wait for acks or expiry and issue again`, 'command_queue_full');
  }
}
