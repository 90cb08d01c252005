/**
 * Express app factory for the game listener: exactly the five `/api/v1/game/` endpoints plus
 * `/healthz` and `/readyz` (spec: Endpoints). Stateless: everything it knows lives in Redis and Postgres,
 * apart from the key-verification cache. Used by src/server.ts and by the tests (supertest).
 */
import express, { type Express } from 'express';
import type { Db } from './store/prisma.js';
import type { AppRedis } from './store/redis.js';
import type { Config } from './config.js';
import type { KeyVerifier } from './auth/key-verifier.js';
import type { PersistenceStatus } from './store/redis-persistence.js';
import type { ReplicaAck } from './store/replica-ack.js';
import { HeartbeatService } from './presence/heartbeat-service.js';
import { requestId } from './adapters/http/request-id.js';
import { rawBody } from './adapters/http/raw-body.js';
import { errorHandler, notFoundHandler } from './adapters/http/error-handler.js';
import { heartbeatRoute } from './adapters/http/routes/heartbeat.js';
import { doorBulkRoute, doorCheckRoute, doorManifestRoute } from './adapters/http/routes/doors.js';
import { DoorAccessService } from './doors/door-access-service.js';
import { DoorsVersionReader } from './doors/doors-version.js';
import { healthRoutes } from './adapters/http/routes/health.js';
import { bansCheckRoute } from './adapters/http/routes/bans-check.js';
import { Blocklist } from './bans/blocklist.js';
import type { ApiMetrics } from './adapters/metrics/api-metrics.js';
import { countRateLimited, ObservedDoorAccessService, ObservedHeartbeatService } from './adapters/metrics/observed-services.js';
import { AdmissionController, type AdmissionObserver } from './limits/admission.js';
import { PressureReporter } from './limits/flush-yield.js';
import { admit, admitHeartbeat } from './adapters/http/admission.js';
import type { KeySpace } from './store/keyspace/key-space.js';
import type { KeyRecords } from './auth/key-records.js';

export interface AppDeps {
  config: Readonly<Config>;
  /** The process's Redis key space (src/store/keyspace/key-space.ts), built once at boot from `config`. */
  keySpace: KeySpace;
  redis: AppRedis;
  db: Db;
  verifier: KeyVerifier;
  /** In-process metrics (src/adapters/metrics/api-metrics.ts), rendered by the console listener; none in most tests. */
  metrics?: ApiMetrics;
  /**
   * Admission control of the game endpoints (src/limits/admission.ts); default: one built from
   * `config.admission` over this app's Redis client. The caller closes it at shutdown.
   */
  admission?: AdmissionController;
  /** The Redis persistence check (src/store/redis-persistence.ts) shown by /readyz; src/server.ts passes its monitor. */
  persistence?: PersistenceStatus;
  /**
   * WAIT-backed acknowledgement of heartbeats (REDIS_WAIT_REPLICAS ≥ 1, src/store/replica-ack.ts); absent
   * (the default, setting 0), a heartbeat's 200 follows its script's reply. The caller closes its client.
   */
  replicaAck?: ReplicaAck;
  /**
   * The keys' Redis records (src/auth/key-records.ts); given, /readyz also requires that they were
   * copied from Postgres at least once (src/server.ts passes them; most tests do not).
   */
  keyRecords?: KeyRecords;
}

/**
 * The admission controller of `deps`, or a new one from its config (queue length of its Redis clients,
 * shed counts into its metrics, pressure reported to the flushers: src/limits/flush-yield.ts).
 */
export function admissionFor(deps: AppDeps): AdmissionController {
  if (deps.admission) return deps.admission;
  const ack = deps.replicaAck;
  const queued = ack ? () => deps.redis.commandQueue.length + ack.queueLength : () => deps.redis.commandQueue.length;
  const pressure = new PressureReporter(deps.redis, deps.keySpace);
  const observer: AdmissionObserver = {
    shed: (cls, reason) => deps.metrics?.shed(cls, reason),
    pressed: () => pressure.report(),
  };
  const controller = new AdmissionController(deps.config.admission, queued, observer);
  deps.metrics?.watchAdmission(controller);
  return controller;
}

/** The game surface's path prefix (spec: Endpoints). */
const GAME = '/api/v1/game';

/** Builds the game listener app: the five game endpoints, health, then 404 and the error envelope. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  if (deps.metrics) app.use(deps.metrics.http());

  // Admission first (a refused request costs no body read), then raw bytes: Content-Type/Encoding 415,
  // over the limit 413, before any parsing; the signature covers the body exactly as sent
  // (src/adapters/http/raw-body.ts).
  const admission = admissionFor(deps);
  const raw = rawBody(deps.config.maxEnvelopeBytes);
  const heartbeats = deps.metrics
    ? new ObservedHeartbeatService(deps.redis, deps.keySpace, deps.metrics, deps.replicaAck)
    : new HeartbeatService(deps.redis, deps.keySpace, deps.replicaAck);
  const doorsVersions = new DoorsVersionReader(deps.redis, deps.db, deps.keySpace);
  const heartbeatDoors = { doorCacheTtlSeconds: deps.config.doorCacheTtlSeconds, versions: doorsVersions };
  // The five game endpoints sit on the app itself, ahead of the health router, heartbeat first (nearly
  // all of the traffic): a nested router's layers cost a measurable share of a cached door check.
  const heartbeatAdmission = admitHeartbeat(admission);
  app.post(`${GAME}/heartbeat`, heartbeatAdmission.before, raw, heartbeatAdmission.after, heartbeatRoute({ verifier: deps.verifier, heartbeats, doors: heartbeatDoors }));
  const doorDeps = { db: deps.db, redis: deps.redis, keySpace: deps.keySpace, doorCacheTtlSeconds: deps.config.doorCacheTtlSeconds, doorDecisionWindowSeconds: deps.config.doorDecisionWindowSeconds };
  const doors = deps.metrics ? new ObservedDoorAccessService(doorDeps, deps.metrics) : new DoorAccessService(doorDeps);
  app.post(`${GAME}/doors/check`, admit(admission, 'checks'), raw, doorCheckRoute({ verifier: deps.verifier, doors }));
  app.post(`${GAME}/doors/bulk`, admit(admission, 'doors'), raw, doorBulkRoute({ verifier: deps.verifier, doors }));
  app.get(`${GAME}/doors/manifest`, admit(admission, 'doors'), raw, doorManifestRoute({ verifier: deps.verifier, doors }));
  const blocklist = new Blocklist(deps.redis, deps.db, deps.keySpace);
  app.post(`${GAME}/bans/check`, admit(admission, 'checks'), raw, bansCheckRoute({ verifier: deps.verifier, redis: deps.redis, keySpace: deps.keySpace, blocklist, doors }));
  app.use(healthRoutes(deps));

  app.use(notFoundHandler);
  if (deps.metrics) app.use(countRateLimited(deps.metrics));
  app.use(errorHandler(deps.config.maxEnvelopeBytes));
  return app;
}
