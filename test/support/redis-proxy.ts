/**
 * A TCP proxy in front of the test Redis, for tests that stall or cut it (scripts/support/tcp-proxy.ts).
 * A Cluster client follows the node addresses the cluster announces (CLUSTER SLOTS), not the proxy's, so
 * such a test runs on a single Redis only: on a `redis+cluster://` URL `single` is false, the proxy points
 * nowhere and the caller skips (`if (!single) this.skip()`); a Cluster's outages are
 * test/faults/cluster-outage.fault.ts and cluster-failover.fault.ts.
 */
import { TcpProxy } from '../../scripts/support/tcp-proxy.js';
import { parseRedisUrl } from '../../src/store/redis.js';

/** The proxy for `redisUrl` (not yet up), and whether the URL names a single Redis. */
export function singleRedisProxy(redisUrl: string): { single: boolean; proxy: TcpProxy } {
  const single = parseRedisUrl(redisUrl).kind === 'single';
  return { single, proxy: new TcpProxy('127.0.0.1', single ? Number(new URL(redisUrl).port || 6379) : 0) };
}
