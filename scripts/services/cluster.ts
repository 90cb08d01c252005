/**
 * scripts/services/cluster.ts — a local Redis Cluster in one command (issue #17):
 * `npm run services:up -- --cluster [--replicas N]` starts 3 masters (and N replicas each, N ≤ 2) as
 * Debian's redis-server in cluster mode on loopback ports 7001… (7001–7003 the masters' ports at
 * creation, 7004–7009 the replicas'), each with AOF (appendfsync everysec) and noeviction like the
 * single project-local Redis, data under `.data/redis-cluster/<port>/` (AOF, nodes.conf, log, pid).
 *
 * Idempotent: nodes already running (pid files of ours) are kept; nodes of an earlier run that were
 * stopped restart from their nodes.conf and rejoin; only a set of fresh nodes is joined into a cluster
 * (`redis-cli --cluster create … --cluster-yes`). It returns once every node reports `cluster_state:ok` and
 * every replica has finished its first sync (`master_link_status:up`: only then can it be elected).
 * The connection setting is `REDIS_URL=redis+cluster://127.0.0.1:7001,…` (src/config.ts): every node is
 * listed, so a client can start while any one of them is down. `services:down` stops the nodes and keeps
 * their data (delete `.data/redis-cluster` for a new cluster).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { runCommand, tail, waitUntil } from '../support/child-process.js';
import { DATA_DIR, EXIT_MISSING_BINARIES, EXIT_USAGE, PROBE_TIMEOUT_MS, ServiceError, errMessage, livePid, rel, tcpProbe, which } from './common.js';
import { launchRedisServer, redisServerBinary, stopRedisServer } from './redis.js';

export const CLUSTER_DIR = path.join(DATA_DIR, 'redis-cluster');
export const CLUSTER_HOST = '127.0.0.1';
/** First node port; the nodes use consecutive ports from here. */
export const CLUSTER_BASE_PORT = 7001;
export const CLUSTER_MASTERS = 3;
/** At most 2 replicas per master: ports 7001–7009. */
export const MAX_REPLICAS = 2;
/** How long the nodes may take to agree (`cluster_state:ok` on every node), in milliseconds. */
const CLUSTER_OK_TIMEOUT_MS = 60_000;
/** How long a node may be unreachable before the others fail it over (redis.conf `cluster-node-timeout`), in milliseconds. */
const NODE_TIMEOUT_MS = 5_000;

export interface ClusterSpec {
  replicas: number;
  basePort?: number;
  dir?: string;
}

/** The node ports of a cluster of `spec`: masters first, then replicas. */
export function clusterPorts(spec: ClusterSpec): number[] {
  const base = spec.basePort ?? CLUSTER_BASE_PORT;
  return Array.from({ length: CLUSTER_MASTERS * (1 + spec.replicas) }, (_, i) => base + i);
}

/** The REDIS_URL of the cluster: `redis+cluster://host:port,host:port,…` listing every node. */
export function clusterUrl(ports: readonly number[]): string {
  return `redis+cluster://${ports.map((p) => `${CLUSTER_HOST}:${p}`).join(',')}`;
}

function nodeDir(port: number, dir = CLUSTER_DIR): string {
  return path.join(dir, String(port));
}

/** Ports of the node directories under `dir` (the nodes ever started there), sorted. */
function knownNodePorts(dir = CLUSTER_DIR): number[] {
  try {
    return fs
      .readdirSync(dir)
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/** `CLUSTER INFO` of the node on `port` as key → value. @throws when the node does not answer. */
export async function clusterInfo(port: number): Promise<Record<string, string>> {
  const client = new Redis({ host: CLUSTER_HOST, port, lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => {}); // reported through the promise
  try {
    await client.connect();
    const text = (await client.call('CLUSTER', 'INFO')) as string;
    return Object.fromEntries(text.split(/\r?\n/).filter((l) => l.includes(':')).map((l) => l.split(':', 2) as [string, string]));
  } finally {
    client.disconnect();
  }
}

/** `INFO replication` of the node on `port` as key → value (`role`, `master_link_status`, …). @throws when the node does not answer. */
async function replicationInfo(port: number): Promise<Record<string, string>> {
  const client = new Redis({ host: CLUSTER_HOST, port, lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => {}); // reported through the promise
  try {
    await client.connect();
    const text = await client.info('replication');
    return Object.fromEntries(text.split(/\r?\n/).filter((l) => l.includes(':')).map((l) => l.split(':', 2) as [string, string]));
  } finally {
    client.disconnect();
  }
}

/** Starts the node on `port` unless it runs already; "started" / "running" / "restarted". */
async function ensureNode(bin: string, port: number, dir: string): Promise<'started' | 'running' | 'restarted'> {
  const ndir = nodeDir(port, dir);
  if (livePid(path.join(ndir, 'redis.pid'), 'redis-server') !== undefined) return 'running';
  if ((await tcpProbe(CLUSTER_HOST, port)) === undefined) {
    throw new ServiceError(`redis cluster: port ${port} is taken by a process this script did not start; stop it or free ports ${CLUSTER_BASE_PORT}–${CLUSTER_BASE_PORT + CLUSTER_MASTERS * (1 + MAX_REPLICAS) - 1}`);
  }
  const earlier = fs.existsSync(path.join(ndir, 'nodes.conf'));
  await launchRedisServer(bin, {
    host: CLUSTER_HOST,
    port,
    dir: ndir,
    extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(NODE_TIMEOUT_MS)],
  });
  return earlier ? 'restarted' : 'started';
}

/**
 * Starts (or finds running) the local cluster of `spec` and waits until every node reports
 * `cluster_state:ok` and every replica is in sync with its master. Returns the REDIS_URL and the lines to print.
 * @throws {ServiceError} for a bad replica count (exit 2), missing binaries (exit 3), a port taken by
 *   another process, an existing cluster of another size, or a cluster that does not become ok or whose replicas do not sync.
 */
export async function ensureCluster(spec: ClusterSpec): Promise<{ url: string; message: string }> {
  if (!Number.isInteger(spec.replicas) || spec.replicas < 0 || spec.replicas > MAX_REPLICAS) {
    throw new ServiceError(`redis cluster: --replicas takes 0 to ${MAX_REPLICAS}`, EXIT_USAGE);
  }
  const dir = spec.dir ?? CLUSTER_DIR;
  const ports = clusterPorts(spec);
  const earlier = knownNodePorts(dir).filter((p) => fs.existsSync(path.join(nodeDir(p, dir), 'nodes.conf')));
  if (earlier.length > 0 && earlier.join() !== ports.join()) {
    throw new ServiceError(
      `redis cluster: ${rel(dir)} holds a cluster of ${earlier.length} nodes (ports ${earlier.join(', ')}), not the ${ports.length} asked for; ` +
        `run \`npm run services:down\`, delete ${rel(dir)} and try again (its data is lost), or ask for --replicas ${earlier.length / CLUSTER_MASTERS - 1}`,
    );
  }
  const bin = redisServerBinary('a cluster was asked for');
  const cli = which('redis-cli');
  if (!cli) throw new ServiceError('redis cluster: redis-cli is not installed; install the Debian package `redis-tools`', EXIT_MISSING_BINARIES);
  const states = await Promise.all(ports.map((p) => ensureNode(bin, p, dir)));
  const counts = (['started', 'restarted', 'running'] as const).map((s) => [s, states.filter((x) => x === s).length] as const).filter(([, n]) => n > 0);
  const nodes = counts.map(([s, n]) => `${n} ${s}`).join(', ');

  let created = false;
  if (states.every((s) => s === 'started')) {
    const res = await runCommand(cli, ['--cluster', 'create', ...ports.map((p) => `${CLUSTER_HOST}:${p}`), '--cluster-replicas', String(spec.replicas), '--cluster-yes'], {
      cwd: dir,
      timeoutMs: 60_000,
    });
    if (res.code !== 0 || !/All \d+ slots covered/.test(res.output)) {
      throw new ServiceError(`redis cluster: redis-cli --cluster create failed (exit ${res.code ?? errMessage(res.error)}):\n${tail(res.output, 20)}`);
    }
    created = true;
  }
  const want = String(ports.length);
  let last = '';
  const ok = await waitUntil(async () => {
    const infos = await Promise.all(ports.map((p) => clusterInfo(p)));
    last = infos.map((info, i) => `${ports[i]}: ${info.cluster_state ?? '?'}, ${info.cluster_known_nodes ?? '?'} nodes`).join('; ');
    return infos.every((info) => info.cluster_state === 'ok' && info.cluster_known_nodes === want);
  }, CLUSTER_OK_TIMEOUT_MS, 250);
  if (!ok) {
    throw new ServiceError(`redis cluster: the nodes did not agree within ${CLUSTER_OK_TIMEOUT_MS / 1000} s (${last}); logs under ${rel(dir)}/<port>/redis.log`);
  }
  // A replica that has not finished its first sync cannot be elected (it refuses: "Disconnected from
  // master for longer than allowed"), so a master killed before then is never failed over.
  // (Which nodes are replicas is read, not assumed: after a failover and a restart the roles may differ
  // from the creation's.)
  const synced = await waitUntil(async () => {
    const infos = await Promise.all(ports.map((p) => replicationInfo(p)));
    const replicas = infos.map((info, i) => ({ port: ports[i]!, info })).filter(({ info }) => info.role === 'slave');
    last = replicas.map(({ port, info }) => `${port}: ${info.master_link_status ?? '?'}`).join('; ');
    return replicas.length === CLUSTER_MASTERS * spec.replicas && replicas.every(({ info }) => info.master_link_status === 'up');
  }, CLUSTER_OK_TIMEOUT_MS, 250);
  if (!synced) {
    throw new ServiceError(`redis cluster: the replicas did not sync with their masters within ${CLUSTER_OK_TIMEOUT_MS / 1000} s (${last}); logs under ${rel(dir)}/<port>/redis.log`);
  }
  const url = clusterUrl(ports);
  const shape = `${CLUSTER_MASTERS} masters${spec.replicas ? ` + ${CLUSTER_MASTERS * spec.replicas} replicas` : ''}`;
  return {
    url,
    message: `redis cluster: ${created ? 'created' : 'ready'}, ${shape} on ${CLUSTER_HOST}:${ports[0]}–${ports.at(-1)} (nodes ${nodes}; AOF everysec; data in ${rel(dir)})\nredis cluster: connection setting REDIS_URL=${url}`,
  };
}

/** Stops every node of the local cluster this script started (their data stays); the lines to print. */
export async function stopCluster(dir = CLUSTER_DIR): Promise<string> {
  const ports = knownNodePorts(dir);
  if (ports.length === 0) return 'redis cluster: no local cluster (nothing to stop)';
  const lines = await Promise.all(ports.map((p) => stopRedisServer(nodeDir(p, dir), `redis cluster node ${p}`)));
  return lines.join('\n');
}

/** `status` of the local cluster: undefined when none was ever started here, else one line. */
export async function clusterStatus(dir = CLUSTER_DIR): Promise<string | undefined> {
  const ports = knownNodePorts(dir);
  if (ports.length === 0) return undefined;
  const running = ports.filter((p) => livePid(path.join(nodeDir(p, dir), 'redis.pid'), 'redis-server') !== undefined);
  if (running.length === 0) return `redis cluster: ${ports.length} nodes in ${rel(dir)}, none running`;
  const info = await clusterInfo(running[0]!).catch((err: unknown) => ({ cluster_state: `unreachable (${errMessage(err)})` }));
  return `redis cluster: ${running.length}/${ports.length} nodes running, cluster_state ${info.cluster_state ?? '?'}; REDIS_URL=${clusterUrl(ports)}`;
}
