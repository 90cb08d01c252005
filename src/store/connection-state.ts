/**
 * One structured log line per connection state change (up→down, down→up), never one per retry or a
 * multi-line stack: ioredis and BullMQ emit `error` on every failed reconnect attempt, and an emitter
 * without an `error` listener crashes the process or prints raw stacks (issue 16 item 5).
 */
import type { EventEmitter } from 'node:events';
import { log } from '../log.js';

export interface WatchOptions {
  /** Connection name in the log line, e.g. `api`, `worker-bull`, `queue:flush-events`. */
  name: string;
  /**
   * Emitter whose `ready` event marks the connection up again: the ioredis client itself, or for BullMQ
   * queues/workers the shared ioredis connection they were built on (BullMQ objects emit no `ready`).
   */
  readySource?: EventEmitter;
}

/**
 * Attaches an `error` listener to `emitter` that logs `redis connection down` (warn) once when the
 * connection fails, and `redis connection up` (info) once on the next `ready`. The first line carries
 * only the error's first message line.
 */
export function watchConnection(emitter: EventEmitter, opts: WatchOptions): void {
  let down = false;
  emitter.on('error', (err: unknown) => {
    if (down) return;
    down = true;
    const message = err instanceof Error ? err.message : String(err);
    log.warn('redis connection down', { connection: opts.name, err: message.split('\n')[0] });
  });
  (opts.readySource ?? emitter).on('ready', () => {
    if (!down) return;
    down = false;
    log.info('redis connection up', { connection: opts.name });
  });
}

/**
 * For a BullMQ Queue built on a connection this process already watches: BullMQ re-emits that shared
 * connection's errors on the queue, where an unhandled `error` would crash the process; the state change
 * is already logged once by the connection's own watcher, so here each error is only a debug line.
 */
export function absorbSharedConnectionErrors(emitter: EventEmitter, name: string): void {
  emitter.on('error', (err: unknown) => {
    log.debug('shared redis connection error', { connection: name, err: (err instanceof Error ? err.message : String(err)).split('\n')[0] });
  });
}
