/**
 * In-process Prometheus metrics of one API process (prom-client), exposed on the console listener's
 * `/metrics` (src/adapters/console/console-app.ts). Everything here is a counter or histogram updated in memory:
 * nothing on the request path touches Redis or Postgres for metrics. Cross-process figures (queue
 * depths, stream backlogs, commands by state, events flushed) are read at scrape time by
 * src/adapters/metrics/scrape-metrics.ts into the same registry.
 *
 * | metric | type | labels | meaning |
 * | --- | --- | --- | --- |
 * | `gis_http_requests_total` | counter | route, method, code | game listener requests (`code`: the HTTP status) |
 * | `gis_http_request_duration_seconds` | histogram | route, method, code | their latency, seconds |
 * | `gis_heartbeats_total` | counter | — | heartbeats accepted (200) |
 * | `gis_events_accepted_total` | counter | — | events inside accepted heartbeats |
 * | `gis_door_decisions_total` | counter | endpoint, decision | door decisions answered (check, bulk) |
 * | `gis_rate_limited_total` | counter | kind | requests answered 429 by a per-key quota, by quota kind |
 * | `gis_key_verifications_total` | counter | via, result | secrets checked without a cache hit: `via` argon2 or shared-digest, `result` ok or bad |
 * | `gis_key_verify_refused_total` | counter | reason | secrets refused without argon2: `prefix` or `overall` budget spent |
 * | `gis_admission_shed_total` | counter | class, reason | game requests refused 503 `overloaded` by admission control (src/limits/admission.ts): `class` heartbeat, doors or checks; `reason` in_flight, redis_queue or loop_lag |
 * | `gis_admission_in_flight` | gauge | class | admitted game requests not yet answered (read at scrape) |
 * | `gis_event_loop_lag_seconds` | gauge | — | the admission controller's event-loop lag estimate (read at scrape) |
 * | `gis_redis_persistence` | gauge | mode | 1 for the Redis persistence mode last read (src/store/redis-persistence.ts), 0 for the others |
 * | `process_*`, `nodejs_*` | — | — | prom-client's default process metrics |
 *
 * `route` is one of the game listener's paths (`/api/v1/game/heartbeat`, …, `/healthz`, `/readyz`) or
 * `unmatched`, so a scanner cannot blow up the label set. Every label has a fixed, small set of values:
 * none names a game, key or server (a series per game would grow with the fleet; which games are
 * throttled is the ingest health warning's job, `gis_ingest_warnings_open` and `admin health`).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { PERSISTENCE_MODES, type PersistenceMode } from '../../store/redis-persistence.js';
import type { RequestHandler } from 'express';
import type { VerifierObserver } from '../../auth/key-verifier.js';
import type { BudgetRefusal } from '../../auth/verify-budget.js';
import type { AdmissionController, AdmissionObserver, RequestClass, ShedReason } from '../../limits/admission.js';

/** Paths of the game listener that get their own `route` label value. */
/** One (route, method, code)'s request counter and latency histogram. */
interface HttpSeries {
  requests: { inc(): void };
  duration: { observe(seconds: number): void };
}

export const ROUTE_LABELS: ReadonlySet<string> = new Set([
  '/api/v1/game/heartbeat',
  '/api/v1/game/doors/check',
  '/api/v1/game/doors/bulk',
  '/api/v1/game/doors/manifest',
  '/api/v1/game/bans/check',
  '/healthz',
  '/readyz',
]);

/** Latency buckets, seconds: the heartbeat path answers in about a millisecond when healthy. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The in-process metrics of one API process (table in the module comment) and their registry. */
export class ApiMetrics implements VerifierObserver, AdmissionObserver {
  /** The registry `/metrics` renders (one per process; tests make their own). */
  readonly registry = new Registry();
  readonly httpRequests = new Counter({ name: 'gis_http_requests_total', help: 'Game listener requests by route, method and HTTP status code', labelNames: ['route', 'method', 'code'] as const, registers: [this.registry] });
  readonly httpDuration = new Histogram({ name: 'gis_http_request_duration_seconds', help: 'Game listener request latency in seconds by route, method and HTTP status code', labelNames: ['route', 'method', 'code'] as const, buckets: LATENCY_BUCKETS, registers: [this.registry] });
  readonly heartbeats = new Counter({ name: 'gis_heartbeats_total', help: 'Heartbeats accepted (answered 200)', registers: [this.registry] });
  readonly eventsAccepted = new Counter({ name: 'gis_events_accepted_total', help: 'Player events inside accepted heartbeats (before deduplication by eventId)', registers: [this.registry] });
  readonly doorDecisions = new Counter({ name: 'gis_door_decisions_total', help: 'Door decisions answered by endpoint and result', labelNames: ['endpoint', 'decision'] as const, registers: [this.registry] });
  readonly keyVerifications = new Counter({ name: 'gis_key_verifications_total', help: 'Key secrets checked without a process-cache hit, by how (argon2 or shared-digest) and result', labelNames: ['via', 'result'] as const, registers: [this.registry] });
  readonly keyVerifyRefused = new Counter({ name: 'gis_key_verify_refused_total', help: 'Unrecognised key secrets refused without argon2 because the per-prefix or per-process budget was spent', labelNames: ['reason'] as const, registers: [this.registry] });
  readonly admissionShed = new Counter({ name: 'gis_admission_shed_total', help: 'Game requests refused 503 overloaded by admission control, by request class and signal', labelNames: ['class', 'reason'] as const, registers: [this.registry] });
  readonly rateLimited = new Counter({ name: 'gis_rate_limited_total', help: 'Requests answered 429 by a per-key quota, by quota kind', labelNames: ['kind'] as const, registers: [this.registry] });
  readonly redisPersistence = new Gauge({ name: 'gis_redis_persistence', help: 'Redis persistence mode last read by this process: 1 for the current mode (aof-always, aof-everysec, aof-no, rdb, none, unknown), 0 for the others', labelNames: ['mode'] as const, registers: [this.registry] });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Sets `gis_redis_persistence`: 1 for `mode`, 0 for every other mode (so a change is visible as a flip). */
  setRedisPersistence(mode: PersistenceMode): void {
    for (const m of PERSISTENCE_MODES) this.redisPersistence.set({ mode: m }, m === mode ? 1 : 0);
  }

  /** {@link VerifierObserver}: counts a secret check. */
  verified(via: 'argon2' | 'shared-digest', ok: boolean): void {
    this.keyVerifications.inc({ via, result: ok ? 'ok' : 'bad' });
  }

  /** {@link AdmissionObserver}: counts a shed request. */
  shed(cls: RequestClass, reason: ShedReason): void {
    this.admissionShed.inc({ class: cls, reason });
  }

  /** Exposes `controller`'s requests in flight and event-loop lag as gauges read at scrape time. */
  watchAdmission(controller: AdmissionController): void {
    new Gauge({
      name: 'gis_admission_in_flight',
      help: 'Admitted game requests not yet answered, by request class',
      labelNames: ['class'] as const,
      registers: [this.registry],
      collect() {
        for (const cls of ['heartbeat', 'doors', 'checks'] as const) this.set({ class: cls }, controller.inFlightOf(cls));
      },
    });
    new Gauge({
      name: 'gis_event_loop_lag_seconds',
      help: 'Event-loop lag estimate of the admission controller, seconds (0 while idle)',
      registers: [this.registry],
      collect() {
        this.set(controller.loopLagMs / 1000);
      },
    });
  }

  /** {@link VerifierObserver}: counts a secret refused for budget. */
  refused(reason: BudgetRefusal): void {
    this.keyVerifyRefused.inc({ reason });
  }

  /** Middleware timing every request of the game listener; mount it first. */
  http(): RequestHandler {
    return (req, res, next) => {
      const start = process.hrtime.bigint();
      res.once('finish', () => {
        const path = req.originalUrl.split('?', 1)[0] ?? '';
        const series = this.httpSeries(ROUTE_LABELS.has(path) ? path : 'unmatched', req.method, res.statusCode);
        series.requests.inc();
        series.duration.observe(Number(process.hrtime.bigint() - start) / 1e9);
      });
      next();
    };
  }

  /**
   * The request counter and latency histogram of one (route, method, code), kept once made: prom-client
   * hashes a label object on every `inc`/`observe` otherwise (~2 % of the API's busy time in a
   * bench:fleet profile). Bounded: routes are the known ones or `unmatched`, methods and codes few.
   */
  private httpSeries(route: string, method: string, code: number): HttpSeries {
    const id = `${route} ${method} ${code}`;
    let series = this.httpSeriesById.get(id);
    if (!series) {
      const labels = { route, method, code: String(code) };
      series = { requests: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.httpSeriesById.set(id, series);
    }
    return series;
  }
  private readonly httpSeriesById = new Map<string, HttpSeries>();
}
