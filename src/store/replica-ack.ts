/**
 * WAIT-backed acknowledgement (issue #17 "Failover"; docs/running.md "Failover", setting `REDIS_WAIT_REPLICAS`).
 *
 * Redis replication is asynchronous: a master answers a write before its replicas have it, so a master
 * that dies and is replaced by its replica can take writes it acknowledged with it. With this on, a
 * write whose answer promises stored data (the heartbeat's script) is followed by `WAIT numreplicas
 * timeout`, and the caller answers 200 only when at least `replicas` replicas confirmed it within
 * `timeoutMs`; otherwise {@link UnreplicatedWriteError} (503 `unavailable` with Retry-After: the client
 * keeps its events and sends them again; eventIds make the resend safe).
 *
 * What WAIT covers, and how that is kept true here:
 *  - WAIT has no key and covers the writes made earlier **on the connection it is sent on** (Redis
 *    remembers, per client connection, the replication offset of its last write). So the write and the
 *    WAIT go on one connection, the WAIT after the write's reply. On a Cluster that is the connection to
 *    the master owning the key's slot: the write is sent there directly (ioredis's node connection for
 *    the slot, from the Cluster's slot map), not through the Cluster's routing, which would retry a
 *    failed command on another node.
 *  - A connection that was replaced between the write and the WAIT's reply (a reconnect; ioredis resends
 *    unanswered commands on the new socket, where WAIT would see none of the earlier writes and succeed
 *    at once) must not confirm anything: the socket the write's reply came on is remembered and the WAIT
 *    counts only if its reply came on the same socket.
 *  - WAIT blocks its connection until it returns, so the writes of concurrent requests queue behind it.
 *    One WAIT at a time per connection covers every write answered before it was sent; requests whose
 *    write was answered meanwhile share the next one (a replica outage then costs one timeout per batch,
 *    not per request). The client is this module's own ({@link createReplicaAck}), so a blocked WAIT
 *    never delays door or ban checks on the API's main connection.
 *  - With auto-pipelining on a single Redis the same holds: the pipeline keeps the order of the commands
 *    on the one connection, and the WAIT is only sent once the write's reply is in.
 */
import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import { UnavailableError } from '../errors.js';
import { log } from '../log.js';
import { COMMAND_TIMEOUT_MS, createRedis, withScripts, type AppRedis } from './redis.js';

/** The setting: `replicas` replicas (REDIS_WAIT_REPLICAS, ≥ 1 when on) within `timeoutMs` (REDIS_WAIT_TIMEOUT_MS). */
export interface ReplicaAckSettings {
  replicas: number;
  timeoutMs: number;
}

/** 503 `unavailable` (Retry-After 1–5 s): the write was made but not confirmed on enough replicas in time. */
export class UnreplicatedWriteError extends UnavailableError {
  /**
   * @param detail what happened, for the log.
   * @param lagging true when WAIT answered with too few replicas (the topology is fine, a replica lags);
   *   false when the connection or the slot's master is in question.
   */
  constructor(readonly detail: string, readonly lagging = false) {
    super('the data is not yet confirmed on a replica; send it again after the Retry-After delay');
  }
}

/**
 * The {@link ReplicaAck} of an API process for `settings` (config `redisWait`), over a client of its own
 * named `api-ack` on `redisUrl`; undefined when the setting is off (replicas 0). Its commands may queue
 * behind a WAIT, so their timeout is the API's usual one plus the WAIT's. The caller quits `client`.
 */
export function createReplicaAck(redisUrl: string, settings: ReplicaAckSettings): ReplicaAck | undefined {
  if (settings.replicas === 0) return undefined;
  return new ReplicaAck(createRedis(redisUrl, { name: 'api-ack', autoPipelining: true, commandTimeoutMs: COMMAND_TIMEOUT_MS + settings.timeoutMs }), settings);
}

/** The socket of a connection (a new one after every reconnect). */
function socketOf(redis: Redis): unknown {
  return redis.stream;
}

interface Waiter {
  socket: unknown;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** One WAIT in flight at a time on one connection; callers whose write was answered meanwhile share the next. */
class WaitBatcher {
  private queued: Waiter[] = [];
  private inFlight = false;

  constructor(private readonly redis: Redis, private readonly settings: ReplicaAckSettings) {}

  /** Resolves once a WAIT sent after this call, answered on `socket`, counted enough replicas. @throws {UnreplicatedWriteError} */
  confirm(socket: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ socket, resolve, reject });
      if (!this.inFlight) this.send();
    });
  }

  private send(): void {
    const batch = this.queued;
    this.queued = [];
    this.inFlight = true;
    const { replicas, timeoutMs } = this.settings;
    this.redis.wait(replicas, timeoutMs).then(
      (acked) => {
        const socket = socketOf(this.redis);
        for (const w of batch) {
          if (w.socket !== socket) w.reject(new UnreplicatedWriteError('the connection was replaced between the write and WAIT'));
          else if (acked < replicas) w.reject(new UnreplicatedWriteError(`WAIT ${replicas} ${timeoutMs}: ${acked} replica(s) confirmed`, true));
          else w.resolve();
        }
      },
      (err: unknown) => {
        for (const w of batch) w.reject(new UnreplicatedWriteError(`WAIT failed: ${err instanceof Error ? err.message : String(err)}`));
      },
    ).finally(() => {
      this.inFlight = false;
      if (this.queued.length) this.send();
    });
  }
}

/** Replies of a node that no longer serves the slot: the slot map is stale (after a failover, a reshard). */
const REDIRECTED = /^(MOVED|ASK) /;

/**
 * Writes whose 200 waits for replicas ({@link ReplicaAckSettings}). One per API process, over a client of
 * its own; see the file header for what WAIT covers and how.
 */
export class ReplicaAck {
  private readonly batchers = new WeakMap<Redis, WaitBatcher>();
  private readonly scripted = new WeakSet<Redis>();
  /** Whether the last confirmation failed: the change is logged once each way, not once per request. */
  private failing = false;

  /**
   * @param client a client of {@link createRedis} used only by this object (single Redis or Cluster);
   *   its command timeout must exceed `settings.timeoutMs`, since commands queue behind a blocked WAIT.
   */
  constructor(readonly client: AppRedis, readonly settings: ReplicaAckSettings) {
    if (!(settings.replicas >= 1) || !(settings.timeoutMs >= 1)) throw new Error('ReplicaAck needs replicas ≥ 1 and timeoutMs ≥ 1');
  }

  /** Commands this object's connections have sent and not yet had answered (admission control adds them). */
  get queueLength(): number {
    return this.client.commandQueue.length;
  }

  /**
   * Runs `write` on the connection of the master that owns `slotKey`'s slot and, when `needsAck(result)`
   * (default: always), waits until `settings.replicas` replicas have everything written on that connection
   * so far. Resolves to `write`'s result.
   * @param slotKey any key of the write (all its keys share one slot).
   * @param write sends the write on the connection it is given, nothing else; it must not wait on timers
   *   after the reply (the socket the reply came on is read when it resolves).
   * @throws {UnreplicatedWriteError} (503) when fewer replicas confirmed within the timeout, the
   *   connection changed, WAIT failed, or the slot's master is unknown or moved; errors of `write` itself
   *   propagate (a dependency outage is a 503 of its own, src/store/dependency-errors.ts).
   */
  async write<T>(slotKey: string, write: (redis: AppRedis) => Promise<T>, needsAck: (result: T) => boolean = () => true): Promise<T> {
    const redis = this.connectionFor(slotKey);
    let result: T;
    try {
      result = await write(redis);
    } catch (err) {
      // The node may be gone or no longer own the slot (a failover): the next request asks the fresh map.
      this.refreshSlotMap();
      if (err instanceof Error && REDIRECTED.test(err.message)) throw new UnreplicatedWriteError(`the write was redirected: ${err.message}`);
      throw err;
    }
    if (!needsAck(result)) return result;
    const socket = socketOf(redis); // the socket the reply just came on (no timer has run since)
    let batcher = this.batchers.get(redis);
    if (!batcher) this.batchers.set(redis, (batcher = new WaitBatcher(redis, this.settings)));
    try {
      await batcher.confirm(socket);
    } catch (err) {
      if (!(err instanceof UnreplicatedWriteError && err.lagging)) this.refreshSlotMap();
      this.report(err);
      throw err;
    }
    if (this.failing) {
      this.failing = false;
      log.info('writes confirmed by replicas again', { replicas: this.settings.replicas });
    }
    return result;
  }

  private report(err: unknown): void {
    if (this.failing) return;
    this.failing = true;
    log.warn('writes not confirmed by replicas: heartbeats answer 503 until they are', {
      replicas: this.settings.replicas,
      timeoutMs: this.settings.timeoutMs,
      detail: err instanceof UnreplicatedWriteError ? err.detail : String(err),
    });
  }

  /** The connection a write of `slotKey` goes on: the client itself, or on a Cluster the slot master's node connection. */
  private connectionFor(slotKey: string): AppRedis {
    const client = this.client as unknown as Redis | Cluster;
    if (!(client instanceof Cluster)) return this.client;
    const nodeKey = client.slots[calculateSlot(slotKey)]?.[0];
    const node = nodeKey ? client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey) : undefined;
    if (!node) {
      this.refreshSlotMap();
      throw new UnreplicatedWriteError(`no master known for the slot of ${slotKey}`);
    }
    if (!this.scripted.has(node)) {
      withScripts(node);
      this.scripted.add(node);
    }
    return node as AppRedis;
  }

  /** On a Cluster, asks for a fresh slot map (the next request finds the new master); ioredis runs one refresh at a time. */
  private refreshSlotMap(): void {
    const client = this.client as unknown as Redis | Cluster;
    if (client instanceof Cluster) client.refreshSlotsCache();
  }
}
