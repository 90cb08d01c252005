/**
 * Applies one accepted heartbeat to the hot state in a single Redis round trip (the `heartbeat` Lua
 * script, its call built by src/store/lua/heartbeat.ts): replay check, server refresh, roster reconciliation into session transitions, event
 * buffering, acks/failures, and command delivery (spec: POST heartbeat, Events, Command lifecycle).
 * When it returns, the request's events and roster are in Redis: the 200 promise of the spec (and, with
 * REDIS_WAIT_REPLICAS, on that many of the master's replicas too).
 */
import type { AppRedis } from '../store/redis.js';
import type { ReplicaAck } from '../store/replica-ack.js';
import type { GlobalKeys } from '../store/keys.js';
import { heartbeatCall } from '../store/lua/heartbeat.js';
import { ReplayError } from '../errors.js';
import type { HeartbeatRequest } from '../schemas/heartbeat.js';
import { log } from '../log.js';
import { heartbeatQuota, KIND_TAGS, MINUTE_WINDOW_SECONDS } from '../limits/quotas.js';
import { QuotaExceededError } from '../limits/quota-error.js';
import { ThrottleMarks } from '../limits/throttle-marks.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** Whether a heartbeat script's reply stored anything (a replayed or throttled heartbeat stored nothing and needs no replica confirmation). */
function storedSomething(reply: unknown): boolean {
  const status = (reply as string[])[0];
  return status !== 'replay' && status !== 'limited';
}

export interface HeartbeatInput {
  gameId: string;
  keyId: string;
  signature: string;
  /** The request's signed timestamp, s: how long its replay claim is kept (src/store/lua/lib/replay-claim.ts; absent: as long as any). */
  signedAtSeconds?: number;
  heartbeatIntervalSeconds: number;
  /** Whether the key has the `commands` scope: without it no command is delivered (spec: Endpoints). */
  deliverCommands: boolean;
  body: HeartbeatRequest;
  /** Server time in ms. */
  nowMs: number;
}

/** What {@link HeartbeatService.record} returns for an accepted heartbeat. */
export interface RecordedHeartbeat {
  /** Command entries to deliver, each a JSON string, oldest first. */
  commands: string[];
  /** The game's doors version from Redis; null when Redis does not hold it (yet). */
  doorsVersion: number | null;
}

export class HeartbeatService {
  private readonly lastMarked = new Map<string, number>();
  private readonly globalKeys: GlobalKeys;
  private readonly throttled: ThrottleMarks;

  /**
   * @param ack when set (REDIS_WAIT_REPLICAS ≥ 1), a heartbeat is answered only once its write is on that
   *   many replicas (else `UnreplicatedWriteError`, 503); absent, the script's reply is the answer.
   */
  constructor(private readonly redis: AppRedis, private readonly keySpace: KeySpace, private readonly ack?: ReplicaAck) {
    this.globalKeys = keySpace.global;
    this.throttled = new ThrottleMarks(redis, keySpace);
  }

  /**
   * Records the heartbeat. Returns the command entries to deliver, each already a JSON string (shape:
   * `commandEntrySchema` in src/schemas/heartbeat.ts), oldest first, and the game's doors version as Redis
   * holds it (null when Redis has none yet: see src/doors/doors-version.ts).
   * @throws {ReplayError} 409 when the signature was seen in the last 600 s (src/store/lua/lib/replay-claim.ts).
   * @throws {QuotaExceededError} 429 with Retry-After when this (key, server) is over its heartbeat quota
   *   (src/limits/quotas.ts); nothing of the request is stored.
   * @throws {UnreplicatedWriteError} (src/store/replica-ack.ts) 503 with Retry-After, only with a {@link ReplicaAck}: the heartbeat
   *   was stored on the master but not confirmed on enough replicas in time (the client sends it again).
   */
  async record(input: HeartbeatInput): Promise<RecordedHeartbeat> {
    const { body } = input;
    const keys = this.keySpace.game(input.gameId);
    const rows: [string, string, string | null][] = [];
    const userIds = new Set<string>();
    for (const p of body.players) {
      rows.push([p.externalId, p.username, p.team ?? null]);
      userIds.add(p.externalId);
    }
    const sid = body.externalServerId;
    const { keys: scriptKeys, args: scriptArgs } = heartbeatCall(keys, {
      sid,
      nowMs: input.nowMs,
      keyId: input.keyId,
      signature: input.signature,
      signedAtSeconds: input.signedAtSeconds,
      meta: {
        scopeId: body.externalScopeId ?? '',
        playerCount: body.playerCount,
        maxPlayers: body.maxPlayers,
        sdkVersion: body.sdkVersion,
        uptimeSeconds: body.uptimeSeconds,
        region: body.region ?? '',
        intervalSeconds: input.heartbeatIntervalSeconds,
      },
      rosterJson: JSON.stringify(rows),
      userIds: [...userIds],
      eventsJson: body.events.length ? JSON.stringify(body.events) : '',
      acks: body.acks,
      failures: body.failures ?? [],
      deliverCommands: input.deliverCommands,
      quota: { tag: KIND_TAGS.heartbeat, field: sid, quota: heartbeatQuota(input.heartbeatIntervalSeconds), perServer: 0, windowSeconds: MINUTE_WINDOW_SECONDS, who: sid },
    });
    // With REDIS_WAIT_REPLICAS (src/store/replica-ack.ts) the script runs on the slot master's connection
    // and is followed by WAIT unless it stored nothing. Either way a sent script is waited for however late
    // its reply: answering 503 on the client's command timeout told the game server "nothing stored" for
    // a roster Redis then reconciled anyway (issue #32 item 3).
    const awaited = { awaitReply: true };
    const result = (
      this.ack
        ? await this.ack.write(keys.base, (redis) => redis.runScript('heartbeat', scriptKeys, scriptArgs, awaited), storedSomething)
        : await this.redis.runScript('heartbeat', scriptKeys, scriptArgs, awaited)
    ) as string[];
    if (result[0] === 'replay') throw new ReplayError('replayed_signature', 'this signature was already used; re-sign with a fresh timestamp');
    if (result[0] === 'limited') {
      this.throttled.mark(input.gameId, input.nowMs);
      throw new QuotaExceededError(input.gameId, 'heartbeat', Number(result[1]));
    }
    this.markActive(input.gameId, input.nowMs);
    return { commands: result.slice(2), doorsVersion: result[1] ? Number(result[1]) : null };
  }

  /**
   * Tells the flushers this game has fresh stream entries: at most once a second per game per process,
   * off the request's critical path (the flushers also rescan every game periodically, so a lost mark
   * only delays a flush).
   */
  private markActive(gameId: string, nowMs: number): void {
    const last = this.lastMarked.get(gameId) ?? 0;
    if (nowMs - last < 1000) return;
    this.lastMarked.set(gameId, nowMs);
    this.redis.zadd(this.globalKeys.activeGames(), nowMs, gameId).catch((err: unknown) => {
      log.warn('could not mark game active', { gameId, err: String(err) });
    });
  }
}
