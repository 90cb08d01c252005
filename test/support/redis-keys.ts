/**
 * Key listing for tests on one Redis or a Redis Cluster (REDIS_URL=redis+cluster://…, issue #17): SCAN
 * runs on one node, so on a Cluster every master is scanned; keys are deleted one by one (a multi-key
 * DEL would cross slots).
 */
import type { Redis } from 'ioredis';
import { clusterMasters } from '../../src/store/redis.js';

/** Resolves once `client` is ready (a Cluster knows its masters only then). */
async function ready(client: Redis): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('end', () => reject(new Error('redis connection ended before it was ready')));
  });
}

/** Every key matching `pattern` (SCAN MATCH syntax), on every master. */
export async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  await ready(client);
  const found: string[] = [];
  for (const node of clusterMasters(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  return found;
}

/** Deletes every key matching `pattern`; returns how many there were. */
export async function deleteKeys(client: Redis, pattern: string): Promise<number> {
  const keys = await scanKeys(client, pattern);
  for (let i = 0; i < keys.length; i += 500) {
    const pipe = client.pipeline();
    for (const k of keys.slice(i, i + 500)) pipe.unlink(k);
    // On a Cluster a pipeline must stay within one node's slots: send those keys one command each instead.
    await pipe.exec().catch(() => Promise.all(keys.slice(i, i + 500).map((k) => client.unlink(k))));
  }
  return keys.length;
}
