/**
 * Wires a process's {@link KeyVerifier} to the Redis channel the operator CLI publishes on, so a
 * revocation or game change reaches every API process within milliseconds (issue: "within 1 s").
 * `subscriber` must be a dedicated connection (it enters subscriber mode).
 */
import type { Redis } from 'ioredis';
import type { KeyVerifier } from './key-verifier.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

export async function subscribeInvalidations(subscriber: Redis, verifier: KeyVerifier, keySpace: KeySpace): Promise<void> {
  const channel = keySpace.global.authChannel();
  subscriber.on('message', (ch: string, message: string) => {
    if (ch === channel) verifier.invalidate(message);
  });
  // Messages published while the connection was down are lost: forget every cached key on reconnect.
  subscriber.on('ready', () => verifier.invalidate('all'));
  await subscriber.subscribe(channel);
}
