/**
 * The game listener's services with in-process metrics added (src/adapters/metrics/api-metrics.ts): the same
 * classes, subclassed, so the routes and the services stay unaware of metrics and nothing is added on the
 * request path but a counter increment. createApp uses these when it is given an {@link ApiMetrics}.
 */
import type { ErrorRequestHandler } from 'express';
import { HeartbeatService, type HeartbeatInput, type RecordedHeartbeat } from '../../presence/heartbeat-service.js';
import { DoorAccessService, type AnsweredDecision, type DoorAccessDeps, type DoorBulkAnswer, type DoorCaller, type DoorCheckAnswer } from '../../doors/door-access-service.js';
import type { AppRedis } from '../../store/redis.js';
import type { ReplicaAck } from '../../store/replica-ack.js';
import { QuotaExceededError } from '../../limits/quota-error.js';
import type { ApiMetrics } from './api-metrics.js';
import type { KeySpace } from '../../store/keyspace/key-space.js';
import type { Lookup } from '../../doors/decision-cache.js';

/** Counts accepted heartbeats and the events they carried. */
export class ObservedHeartbeatService extends HeartbeatService {
  constructor(redis: AppRedis, keySpace: KeySpace, private readonly metrics: ApiMetrics, ack?: ReplicaAck) {
    super(redis, keySpace, ack);
  }

  override async record(input: HeartbeatInput): Promise<RecordedHeartbeat> {
    const recorded = await super.record(input);
    this.metrics.heartbeats.inc();
    if (input.body.events.length) this.metrics.eventsAccepted.inc(input.body.events.length);
    return recorded;
  }
}

/** Counts door decisions answered by check and bulk, by result. */
export class ObservedDoorAccessService extends DoorAccessService {
  constructor(deps: DoorAccessDeps, private readonly metrics: ApiMetrics) {
    super(deps);
  }

  override async check(caller: DoorCaller, input: { doorKey: string; externalId: string; externalServerId?: string | null }, nowMs: number): Promise<DoorCheckAnswer> {
    const answer = await super.check(caller, input, nowMs);
    this.counted('check', [answer.answered]);
    return answer;
  }

  /** Counts the decisions of doors/bulk and of a bans/check with `includeDoors` (both answer through here). */
  override async bulkFrom(caller: DoorCaller, found: Lookup, input: { externalId: string; externalServerId?: string | null }, nowMs: number): Promise<DoorBulkAnswer> {
    const answer = await super.bulkFrom(caller, found, input, nowMs);
    this.counted('bulk', answer.decisions);
    return answer;
  }

  private counted(endpoint: string, decisions: AnsweredDecision[]): void {
    let deny = 0;
    for (const d of decisions) if (d.decision === 'deny') deny++;
    const allow = decisions.length - deny;
    if (allow) this.metrics.doorDecisions.inc({ endpoint, decision: 'allow' }, allow);
    if (deny) this.metrics.doorDecisions.inc({ endpoint, decision: 'deny' }, deny);
  }
}

/** Error middleware (before the error handler) counting 429s of per-key quotas by kind (no game label: see api-metrics.ts). */
export function countRateLimited(metrics: ApiMetrics): ErrorRequestHandler {
  return (err, _req, _res, next) => {
    if (err instanceof QuotaExceededError) metrics.rateLimited.inc({ kind: err.quota });
    next(err);
  };
}
