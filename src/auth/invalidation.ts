/**
 * Wires a process's {@link KeyVerifier} to the Redis channel the operator CLI publishes on, so a
 * revocation or game change reaches every API process within milliseconds (issue: "within 1 s").
 * `subscriber` must be a dedicated connection (it enters subscriber mode).
 */
import type { Redis } from 'ioredis';
import { GlobalKeys } from '../store/keys.js';
import type { KeyVerifier } from './key-verifier.js';

export async function subscribeInvalidations(subscriber: Redis, verifier: KeyVerifier, redisPrefix: string): Promise<void> {
  const channel = new GlobalKeys(redisPrefix).authChannel();
  subscriber.on('message', (ch: string, message: string) => {
    if (ch === channel) verifier.invalidate(message);
  });
  // Messages published while the connection was down are lost: forget every cached key on reconnect.
  subscriber.on('ready', () => verifier.invalidate('all'));
  await subscriber.subscribe(channel);
}
