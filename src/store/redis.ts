/**
 * Redis connections. One client per role per process, never per request. The heartbeat and sweep Lua
 * scripts are registered once with `defineCommand` (EVALSHA after the first call).
 *
 * One factory, {@link createRedis}, for the API, the workers, pub/sub and BullMQ: a single Redis for
 * `redis://` / `rediss://` URLs, an ioredis `Cluster` for `redis+cluster://host:port,host:port` (issue
 * #17; {@link parseRedisUrl}). Every key family carries a hash tag (`{g:<game>}`, `{w:<workspace>}`,
 * BullMQ queue names `{<queue>}`), so each Lua script and MULTI touches one slot.
 */
import { readFileSync } from 'node:fs';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Socket } from 'node:net';
import { watchConnection } from './connection-state.js';

const luaDir = new URL('./lua/', import.meta.url);

/** Lua scripts by command name: file `<name>.lua`, number of KEYS. */
const SCRIPTS = { heartbeat: 1, sweepServer: 1, issueCommand: 1, expireCommands: 1, nudgeAdmit: 1, banLookup: 2, banSync: 2, banWriteSlot: 3, doorLookup: 1, raiseDoorsVersion: 1, banCheckClaim: 1 } as const;

export type ScriptName = keyof typeof SCRIPTS;

/** A Redis client with the project's Lua commands available as `runScript`. */
export interface AppRedis extends Redis {
  runScript(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown>;
}

function fileName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * Bounds on how long an API command waits for a dead Redis, so a request answers 503 within 1 s
 * (README "Dependency outages"): reconnect attempts at most {@link RECONNECT_MAX_DELAY_MS} apart, a command
 * queued while disconnected fails after one failed attempt, and any command gives up after
 * {@link COMMAND_TIMEOUT_MS}. Measured: 0.1–0.5 s to the 503 (scripts/outage-probe.ts).
 */
export const RECONNECT_MAX_DELAY_MS = 500;
export const COMMAND_TIMEOUT_MS = 800;

/** Scheme of a Redis Cluster in REDIS_URL: `redis+cluster://[user:password@]host:port,host:port,…`. */
export const CLUSTER_SCHEME = 'redis+cluster:';

/** Where REDIS_URL points: one Redis (its URL as ioredis takes it) or a Cluster (seed nodes, credentials). */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: { host: string; port: number }[]; username?: string; password?: string };

/**
 * Parses REDIS_URL. `redis+cluster://[user:password@]host:port[,host:port…]` (any number of seed nodes,
 * the client discovers the rest; port default 6379; user and password percent-encoded as in a URL) is
 * a Cluster; anything else is one Redis.
 * @throws Error when a cluster URL names no node or a node is not host:port.
 */
export function parseRedisUrl(url: string): RedisTarget {
  if (!url.toLowerCase().startsWith(`${CLUSTER_SCHEME}//`)) return { kind: 'single', url };
  let rest = url.slice(CLUSTER_SCHEME.length + 2).replace(/[/?#].*$/, '');
  let username: string | undefined;
  let password: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const auth = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = auth.indexOf(':');
    username = decodeURIComponent(colon >= 0 ? auth.slice(0, colon) : auth) || undefined;
    password = colon >= 0 ? decodeURIComponent(auth.slice(colon + 1)) : undefined;
  }
  const nodes = rest.split(',').filter(Boolean).map((hp) => {
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(hp);
    if (!m) throw new Error(`REDIS_URL: cluster node "${hp}" is not host:port`);
    return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port: m[2] ? Number(m[2]) : 6379 };
  });
  if (!nodes.length) throw new Error('REDIS_URL: a redis+cluster:// URL names no node');
  return { kind: 'cluster', nodes, ...(username ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}

/**
 * Connects to `url`. `forWorker` sets `maxRetriesPerRequest: null` as BullMQ requires for blocking
 * connections (no command timeout either: blocking reads wait by design); API clients fail fast instead
 * so a request never hangs on a dead Redis. `coalesceWrites` (the API's client): see {@link coalesceWrites}.
 * Connection state changes are logged once each (store/connection-state.ts).
 */
export function createRedis(url: string, opts: { forWorker?: boolean; name?: string; coalesceWrites?: boolean } = {}): AppRedis {
  const target = parseRedisUrl(url);
  const options: RedisOptions = {
    connectionName: opts.name,
    maxRetriesPerRequest: opts.forWorker ? null : 1,
    ...(opts.forWorker ? {} : { commandTimeout: COMMAND_TIMEOUT_MS }),
    // Reconnect quickly (ioredis's default backs off to 2 s): recovery is prompt once Redis returns.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, RECONNECT_MAX_DELAY_MS),
    // Off: with it, a tick's commands wait for each other in one pipeline (and ioredis builds a Pipeline
    // object per tick), so the API and Redis took turns idling; the heartbeat bench ran ~15% faster
    // without it (scripts/bench-heartbeat.ts, README "Benchmarks").
    enableAutoPipelining: false,
    lazyConnect: false,
  };
  const client = target.kind === 'cluster' ? createCluster(target, options, { spreadPipelines: !opts.forWorker }) : (new Redis(url, options) as AppRedis);
  watchConnection(client, { name: opts.name ?? 'redis' });
  for (const [name, numberOfKeys] of Object.entries(SCRIPTS)) {
    client.defineCommand(name, {
      numberOfKeys,
      lua: readFileSync(new URL(`${fileName(name)}.lua`, luaDir), 'utf8'),
    });
  }
  client.runScript = function runScript(name, keys, args) {
    const fn = (this as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[name]!;
    return fn.call(this, ...keys, ...args);
  };
  // Per-node sockets are internal to a Cluster: coalescing is for the single-Redis client only.
  if (opts.coalesceWrites && target.kind === 'single') coalesceWrites(client);
  return client;
}

/**
 * An ioredis Cluster with the options of a single client applied to every node connection, returned as
 * an {@link AppRedis}: it has the same command API (commands, `defineCommand` scripts routed by their
 * first key's slot, `multi`/`pipeline` within one slot, pub/sub, `duplicate` for BullMQ). What a Cluster
 * does not have is given here: `commandQueue` (admission control reads its length) as the sum over the
 * nodes; and, with `spreadPipelines`, a `pipeline()` that may span nodes ({@link spreadPipeline}).
 * Commands without keys (INFO, CONFIG GET, SCAN) go to one node; callers that must see every master use
 * `clusterMasters`.
 */
function createCluster(target: Extract<RedisTarget, { kind: 'cluster' }>, options: RedisOptions, opts: { spreadPipelines: boolean }): AppRedis {
  const { retryStrategy, ...nodeOptions } = options;
  const cluster = new Cluster(target.nodes, {
    clusterRetryStrategy: retryStrategy,
    // Reads stay on masters: the hot path reads what it just wrote (rosters, replay keys, commands).
    scaleReads: 'master',
    enableReadyCheck: true,
    redisOptions: {
      ...nodeOptions,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password !== undefined ? { password: target.password } : {}),
    },
  });
  Object.defineProperty(cluster, 'commandQueue', {
    get: () => ({ length: cluster.nodes('all').reduce((n, node) => n + node.commandQueue.length, 0) }),
  });
  // Not on BullMQ's connections (forWorker): a queue's keys share its hash tag, so its pipelines stay on one node.
  if (opts.spreadPipelines) cluster.pipeline = spreadPipeline(cluster);
  return cluster as unknown as AppRedis;
}

type Queued = [name: string, args: unknown[]];

/**
 * `pipeline()` of a Cluster client. ioredis refuses a Cluster pipeline whose keys live on more than one
 * node ("All keys in the pipeline should belong to the same slots allocation group"), and the service
 * batches reads over many games that way (each game its own slot: ban kicks, stream backlogs, concurrency
 * samples, expiry). This pipeline queues the same chained calls and, on `exec()`, sends every command at
 * once as its own request (they are in flight together, so the batch still costs about one round trip
 * per node) and resolves to what `Pipeline.exec()` resolves to: `[error, result]` per command, in order.
 * Like a pipeline it is not atomic; MULTI (one slot, by the hash tags) is untouched.
 */
function spreadPipeline(cluster: Cluster): Cluster['pipeline'] {
  const send = cluster as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  return (() => {
    const queued: Queued[] = [];
    const pipe: object = new Proxy(
      {},
      {
        get(_target, prop) {
          if (prop === 'exec') {
            return () => Promise.all(queued.map(([name, args]) => send[name]!.apply(cluster, args).then((r) => [null, r], (e: unknown) => [e, null])));
          }
          if (prop === 'length') return queued.length;
          if (typeof prop !== 'string' || prop === 'then') return undefined; // not a thenable
          return (...args: unknown[]) => {
            queued.push([prop, args]);
            return pipe;
          };
        },
      },
    );
    return pipe;
  }) as unknown as Cluster['pipeline'];
}

/** The masters of `client` when it is a Cluster, else `[client]`: for keyless commands that must reach every shard (SCAN). */
export function clusterMasters(client: Redis): Redis[] {
  return client instanceof Cluster ? (client as Cluster).nodes('master') : [client];
}

/**
 * Most commands one coalesced write carries. The first cut sent a whole turn's commands at once, and
 * then the API and Redis took turns: Redis idled while the API parsed the turn's requests, the API
 * idled while Redis ran the batch (the machine sat ~15 % idle at the heartbeat maximum). Batches of 8
 * keep both busy: heartbeat/ceiling 0.52–0.57 over eight rounds, against 0.46–0.50 uncapped, 0.52–0.54
 * at 16 and 0.47–0.51 at 4 (scripts/bench-heartbeat.ts).
 */
export const MAX_COALESCED_COMMANDS = 8;

/**
 * Batches commands into one socket write while Redis is busy. A command sent while earlier ones still
 * await their replies corks the socket; it is uncorked after {@link MAX_COALESCED_COMMANDS} commands or
 * by a `setImmediate` once the turn's I/O callbacks have run, whichever comes first: Node hands the
 * kernel one `writev`, and Redis reads, runs and answers the batch in one wake-up. A command sent while
 * nothing is in flight goes out at once, so an idle Redis never waits. Each command keeps its own reply.
 * Why: at thousands of heartbeats a second, one write per request (the send syscall waking Redis, and
 * Redis's own per-read work) cost about as much CPU as the heartbeat script itself; batched, Redis's CPU
 * per heartbeat fell ~15 % and the kernel's ~40 % (scripts/bench-heartbeat.ts). ioredis's own
 * `enableAutoPipelining` flushes on `process.nextTick`, i.e. after each request, and builds a Pipeline
 * object per flush: it batched nothing here.
 */
function coalesceWrites(client: Redis): void {
  const send = client.sendCommand.bind(client);
  let corked: Socket | null = null;
  let batched = 0;
  const flush = () => {
    const socket = corked;
    corked = null;
    socket?.uncork();
  };
  client.sendCommand = (command, stream) => {
    const socket = client.stream as Socket | undefined;
    if (!corked && socket && client.status === 'ready' && client.commandQueue.length > 0) {
      corked = socket;
      batched = 0;
      socket.cork();
      setImmediate(flush);
    }
    const reply = send(command, stream);
    if (corked && ++batched >= MAX_COALESCED_COMMANDS) flush();
    return reply;
  };
}
