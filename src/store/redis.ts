/**
 * Redis connections. One client per role per process, never per request. The Lua scripts run by EVALSHA
 * (EVAL once when Redis answers NOSCRIPT: a fresh or restarted Redis). Each script is the file `lua/<name>.lua`
 * preceded by the generated suffix table (src/store/keyspace/suffixes.ts) and the library `lua/lib/*.lua`; it
 * receives its keys as KEYS and its arguments as one msgpack-packed table (issue #18).
 *
 * One factory, {@link createRedis}, for the API, the workers, pub/sub and BullMQ: a single Redis for
 * `redis://` / `rediss://` URLs, an ioredis `Cluster` for `redis+cluster://host:port,host:port` (issue
 * #17; {@link parseRedisUrl}). Every key family carries a hash tag (`{g:<game>}`, `{w:<workspace>}`,
 * BullMQ queue names `{<queue>}`), so each Lua script and MULTI touches one slot.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { Cluster, Command, Redis, type RedisOptions } from 'ioredis';
import { watchConnection } from './connection-state.js';
import { luaSuffixPreamble } from './keyspace/suffixes.js';

const luaDir = new URL('./lua/', import.meta.url);

/** The project's Lua scripts, by command name (file `<kebab-case name>.lua`). */
const SCRIPTS = ['heartbeat', 'sweepServer', 'issueCommand', 'expireCommands', 'nudgeAdmit', 'banLookup', 'banSync', 'banWriteSlot', 'doorLookup', 'doorStore', 'raiseDoorsVersion', 'banCheckClaim', 'locateUser'] as const;

export type ScriptName = (typeof SCRIPTS)[number];

/** A script's named arguments: strings, numbers, booleans and arrays or maps of them (no null: Lua tables drop nil; no Buffer: Redis's cmsgpack rejects msgpack bin). */
export type ScriptArgs = Record<string, unknown>;

/**
 * One call of a script as its typed builder makes it (`lua/<name>.ts`, beside `lua/<name>.lua`): the
 * KEYS in the order the script reads them by index, and its named arguments.
 */
export interface ScriptCall {
  keys: string[];
  args: ScriptArgs;
}

/** A Redis client with the project's Lua commands available as `runScript`. */
export interface AppRedis extends Redis {
  /**
   * Runs script `name` with `keys` as KEYS (all in one Cluster slot) and `args` packed once with msgpack
   * as ARGV[1] (the script reads it as the table `A`). Resolves to the script's reply.
   *
   * With `opts.awaitReply` the script is exempt from the client's `commandTimeout`: once sent, it is
   * waited for until Redis answers (or the connection fails). For a script whose effects the caller
   * reports to a client: a script sent and timed out may still run when Redis gets to it, so a timeout
   * could only be answered with something untrue ("nothing stored", issue #32 item 3). A script not sent
   * (Redis unreachable) still fails fast, after `maxRetriesPerRequest`.
   */
  runScript(name: ScriptName, keys: string[], args: ScriptArgs, opts?: { awaitReply?: boolean }): Promise<unknown>;
}

// Plain msgpack maps and arrays (no msgpackr record extension): Redis's cmsgpack decodes them into tables.
const packr = new Packr({ useRecords: false });

function fileName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * The Lua library every script is prepended with, one file per concern, in this order (a file uses the
 * locals of those before it): the named arguments `A`, sharded hashes, replay claims, door-decision
 * fields, quota counters, user locations.
 */
const LUA_LIBRARY = ['args', 'sharded-hash', 'replay', 'door-fields', 'quota', 'user-locations', 'roster-open-time'] as const;

/** The source Redis runs for script `name`: suffix table, the library, the script itself. */
export function scriptSource(name: ScriptName): string {
  const lib = LUA_LIBRARY.map((f) => readFileSync(new URL(`lib/${f}.lua`, luaDir), 'utf8')).join('\n');
  return luaSuffixPreamble() + lib + '\n' + readFileSync(new URL(`${fileName(name)}.lua`, luaDir), 'utf8');
}

/** A script's source and its SHA-1 (the EVALSHA name), read once per process. */
interface LoadedScript {
  lua: string;
  sha: string;
}
let loaded: Map<ScriptName, LoadedScript> | undefined;
function loadedScripts(): Map<ScriptName, LoadedScript> {
  loaded ??= new Map(SCRIPTS.map((name) => {
    const lua = scriptSource(name);
    return [name, { lua, sha: createHash('sha1').update(lua).digest('hex') }];
  }));
  return loaded;
}

/**
 * Bounds on how long an API command waits for a dead Redis, so a request answers 503 within 1 s
 * (README "Dependency outages"): reconnect attempts at most {@link RECONNECT_MAX_DELAY_MS} apart, any
 * command gives up after {@link COMMAND_TIMEOUT_MS}, and once a single-Redis client has been connected a
 * command sent while it is disconnected fails at once instead of waiting in ioredis's offline queue
 * (issue #29: a request that sends several commands in turn used to wait for each; console pages waited
 * up to 0.95 s, heartbeats under load over 2 s). The offline queue stays for the first connection, so
 * boot code may send commands before Redis is ready.
 *
 * On a Cluster the same holds for the Cluster client's own offline queue: while it has no ready node map
 * (every node unreachable, or reconnecting after that) a command fails at once with "Cluster isn't
 * ready" instead of waiting, without any timeout, for the cluster to return (a 5 s outage held requests
 * for 9 s; test/faults/cluster-outage.fault.ts). A command sent to a node that then turns out dead is
 * retried by ioredis (redirections, failover delays) but its `commandTimeout` runs from its first send,
 * so it too gives up within {@link COMMAND_TIMEOUT_MS}. The node connections keep their offline queue
 * (ioredis forces it: a node's first commands are sent while it connects).
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
 * so a request never hangs on a dead Redis (`commandTimeoutMs`, default {@link COMMAND_TIMEOUT_MS}).
 * `autoPipelining` turns on ioredis's `enableAutoPipelining` (the commands sent in one event-loop tick go
 * out in one write; src/store/replica-ack.ts's client uses it). The API's main client runs without it: a
 * request's commands are a tick of their own (the flush runs on `process.nextTick`), so it batched nothing
 * across requests and cost a Pipeline object per request; without it the API spent 8–20 % less CPU per
 * heartbeat, bulk and cached door check (docs/benchmarks.md "Cheaper hot path"). Instead, the scripts of
 * all the requests of one event-loop turn are held for one write (`holdWritesForThisTurn`). Connection state changes are
 * logged once each (store/connection-state.ts).
 */
export function createRedis(url: string, opts: { forWorker?: boolean; name?: string; autoPipelining?: boolean; commandTimeoutMs?: number } = {}): AppRedis {
  const target = parseRedisUrl(url);
  const options: RedisOptions = {
    connectionName: opts.name,
    maxRetriesPerRequest: opts.forWorker ? null : 1,
    ...(opts.forWorker ? {} : { commandTimeout: opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS }),
    // A Redis still loading its data is asked again every 100 ms, not after its loading ETA (1 s at least,
    // ioredis's default): a command waiting for that connection (a Cluster node's, whose offline queue
    // ioredis keeps; a heartbeat script exempt from commandTimeout) is sent as soon as the load ends. A
    // cluster restarted under load held heartbeats 2.0 s this way (test/faults/cluster-outage.fault.ts).
    ...(opts.forWorker ? {} : { maxLoadingRetryTime: 100 }),
    // Reconnect quickly (ioredis's default backs off to 2 s): recovery is prompt once Redis returns.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, RECONNECT_MAX_DELAY_MS),
    enableAutoPipelining: opts.autoPipelining ?? false,
    lazyConnect: false,
  };
  const client = target.kind === 'cluster' ? createCluster(target, options, { forWorker: opts.forWorker ?? false }) : new Redis(url, options);
  // After the first connection a command sent while disconnected fails at once (RECONNECT_MAX_DELAY_MS's
  // doc); a Cluster client likewise while it has no ready node map (its offline queue has no timeout).
  if (!opts.forWorker) {
    if (client instanceof Redis) client.once('ready', () => (client.options.enableOfflineQueue = false));
    else failFastOnceConnected(client);
  }
  watchConnection(client, { name: opts.name ?? 'redis' });
  return withScripts(client);
}

/** How long a Cluster client waits for its masters' connections before it fails fast anyway, ms. */
const CLUSTER_WARM_UP_MS = 5_000;

/**
 * Switches a Cluster client's offline queue off once it is ready and its masters' connections are open.
 * The Cluster turns ready when one node has answered CLUSTER INFO, while the connections to the others
 * may still be opening, and with its offline queue off ioredis refuses a command whose node connection
 * is not ready ("Connection is closed."): on a busy machine the second command of a new client failed
 * that way (test/store/redis.test.ts on the cluster, in CI). So commands fail fast only once every master
 * is ready, or after {@link CLUSTER_WARM_UP_MS} (a master down at boot does not keep the queue on).
 */
function failFastOnceConnected(cluster: Cluster): void {
  cluster.once('ready', () => {
    const opening = cluster
      .nodes('master')
      .filter((node) => node.status !== 'ready')
      .map((node) => new Promise<void>((resolve) => node.once('ready', resolve)));
    const warmUp = new Promise<void>((resolve) => setTimeout(resolve, CLUSTER_WARM_UP_MS).unref());
    void Promise.race([Promise.all(opening), warmUp]).then(() => (cluster.options.enableOfflineQueue = false));
  });
}

/**
 * A command the client's `commandTimeout` does not cut off (ioredis arms that timer through
 * `Command.setTimeout` as it sends a command): see {@link AppRedis.runScript}'s `awaitReply`.
 */
class AwaitedCommand extends Command {
  override setTimeout(): void {
    // no timer: a sent script's outcome is known only from its reply
  }
}

/** Sockets whose writes are held until the current turn of the event loop ends. */
const heldSockets = new WeakSet<object>();

/**
 * Holds the client's socket writes until the check phase of this turn of the event loop (`setImmediate`),
 * so the scripts of every request handled in one poll phase reach Redis in one write, and Redis wakes
 * once for them, instead of once per script: on a busy core each wake-up is a context switch between
 * the API and Redis (docs/benchmarks.md "Door cache TTL and pushed invalidation, coalesced Redis writes").
 * A script waits at most for the rest of the turn's callbacks. A Cluster client (no single socket) is
 * left alone. Every script goes this way ({@link withScripts}); a hot plain command may too.
 */
export function holdWritesForThisTurn(client: Redis | Cluster): void {
  const socket = (client as Partial<Redis>).stream;
  if (!socket || client.status !== 'ready' || heldSockets.has(socket)) return;
  heldSockets.add(socket);
  socket.cork();
  setImmediate(() => {
    heldSockets.delete(socket);
    socket.uncork();
  });
}

/**
 * Adds `runScript` to `client` (a client of {@link createRedis}, or one node connection of
 * a Cluster, which ioredis creates without them: src/store/replica-ack.ts writes on those). Returns the
 * same object, typed as an {@link AppRedis}.
 *
 * Scripts run by EVALSHA with their hashes rather than through ioredis `defineCommand`: a client with
 * defined commands copies every one of them onto each Pipeline object it creates (auto-pipelining builds
 * one per request), which cost more CPU than the scripts' own argument building (docs/benchmarks.md
 * "Cheaper hot path").
 */
export function withScripts(client: Redis | Cluster): AppRedis {
  const app = client as AppRedis;
  const scripts = loadedScripts();
  app.runScript = async function runScript(name, keys, args, opts) {
    const { sha, lua } = scripts.get(name)!;
    const packed = packr.pack(args);
    holdWritesForThisTurn(this);
    const send = opts?.awaitReply
      ? (cmd: 'evalsha' | 'eval', first: string) => this.sendCommand(new AwaitedCommand(cmd, [first, keys.length, ...keys, packed], { replyEncoding: 'utf8' }))
      : (cmd: 'evalsha' | 'eval', first: string) => this[cmd](first, keys.length, ...keys, packed);
    try {
      return await send('evalsha', sha);
    } catch (err) {
      // Redis's script cache is empty after a restart or SCRIPT FLUSH: EVAL runs the script and caches it.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return send('eval', lua);
    }
  };
  return app;
}

/**
 * An ioredis Cluster with the options of a single client applied to every node connection, returned as
 * an {@link AppRedis} by {@link createRedis}: it has the same command API (commands, scripts by EVALSHA
 * routed by their first key's slot, `multi`/`pipeline` within one slot, pub/sub, `duplicate` for BullMQ). What a Cluster
 * does not have is given here: `commandQueue` (admission control reads its length) as the sum over the
 * nodes; and, except on BullMQ's connections (`forWorker`), a `pipeline()` that may span nodes
 * ({@link spreadPipeline}). BullMQ's connections also skip the ready check (see below).
 * Commands without keys (INFO, CONFIG GET, SCAN) go to one node; callers that must see every master use
 * `clusterMasters`.
 */
function createCluster(target: Extract<RedisTarget, { kind: 'cluster' }>, options: RedisOptions, opts: { forWorker: boolean }): Cluster {
  // No auto-pipelining on a Cluster: ioredis builds it on `pipeline()`, which the service's Cluster clients
  // replace with a node-spanning one ({@link spreadPipeline}).
  const { retryStrategy, enableAutoPipelining: _single, ...nodeOptions } = options;
  const cluster = new Cluster(target.nodes, {
    clusterRetryStrategy: retryStrategy,
    // Reads stay on masters: the hot path reads what it just wrote (rosters, replay keys, commands).
    scaleReads: 'master',
    // The ready check (CLUSTER INFO must say cluster_state:ok) stays on the API's clients. It is off on
    // BullMQ's (forWorker): ioredis's Cluster.connect() never settles when that check fails — it
    // reconnects on its own but leaves the promise pending — and BullMQ awaits connect() when its
    // watchdog resets a worker's blocking connection. A reset during a failover (cluster_state:fail
    // until the replica is promoted) then parked that worker for good: the flush stopped until the
    // process restarted (docs/running.md "Failover"; test/faults/cluster-failover.fault.ts). Without the check,
    // connect() resolves once the slot map is read, and commands sent before the promotion get
    // CLUSTERDOWN, which ioredis and BullMQ retry.
    enableReadyCheck: !opts.forWorker,
    // The API's clients do not retry a command whose node connection closed or that a node answered
    // CLUSTERDOWN (ioredis waits 100 ms and retries, up to `maxRedirections` times): each retry spent up to
    // the command's whole `commandTimeout`, and a request that sends two commands in turn took 1.6 s while
    // the nodes went down (test/faults/cluster-outage.fault.ts). The request answers 503 at once instead and
    // its client retries; a failover is not shortened by retrying, since a replica is promoted only after
    // the cluster's node timeout (seconds). BullMQ's connections keep ioredis's retries.
    ...(opts.forWorker ? {} : { retryDelayOnFailover: 0, retryDelayOnClusterDown: 0 }),
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
  if (!opts.forWorker) cluster.pipeline = spreadPipeline(cluster);
  return cluster;
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
