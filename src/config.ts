/**
 * Typed configuration, read from `process.env` once and validated with ajv (defaults and coercion).
 * Nothing else in the code base reads `process.env`: processes call {@link loadConfig} at boot and
 * pass the frozen result down; tests build their own with overrides.
 */
import { Ajv } from 'ajv';

export interface Config {
  /** PostgreSQL URL of the durable record. */
  databaseUrl: string;
  /**
   * Redis of the hot state (rosters, replay cache, command queues, streams, BullMQ): `redis://` or
   * `rediss://` for one Redis, `redis+cluster://[user:password@]host:port,host:port,…` for a Redis Cluster
   * (seed nodes; the client discovers the rest; src/store/redis.ts `parseRedisUrl`, issue #17).
   */
  redisUrl: string;
  /** Prefix of every Redis key this deployment writes; tests use a random one. */
  redisPrefix: string;
  /**
   * `LEGACY_LAYOUT_WRITES` (default false): write replay claims and user locations in the layout of the
   * versions before 2026-11-29 (hashes of concatenated tags; one hash of locations per game, naming
   * servers by externalServerId; roster open times in decimal ms) instead of the sharded sets and hashes
   * (naming servers by ordinal, open times in base 36, since 2026-11-30); every process reads all. Only for the first step of a rolling upgrade
   * from such a version, so the old processes still running see what the new ones write (docs/running.md
   * "Upgrading"; src/store/lua/lib/replay-claim.ts, user-location.ts). Until 2026-11-29 it was named
   * `REPLAY_LEGACY_WRITES` (replay claims only), which boot now refuses with a pointer to the new name.
   */
  legacyWrites: boolean;
  /** Port of the game listener (the five /api/v1/game endpoints plus health). */
  port: number;
  /** Interface the game listener binds to. */
  host: string;
  /**
   * Length of the game listener's queue of connections not yet accepted (`listen(2)` backlog; Linux caps
   * it at net.core.somaxconn). Node's default, 511, overflows when a fleet reconnects at once while the
   * event loop is busy: every dropped connection is retried by the client's kernel after 1, 3, 7 s
   * (docs/decisions.md "The listen backlog").
   */
  listenBacklog: number;
  logLevel: 'error' | 'warn' | 'info' | 'http' | 'debug';
  /** Maximum heartbeat/request body in bytes; larger gets 413 before parsing (spec: Limits, "not shown"). */
  maxEnvelopeBytes: number;
  /** A server missing this many intervals is declared gone; its sessions close at its last heartbeat. */
  goneAfterMissedIntervals: number;
  /** Connections in each process's Postgres pool (API + N workers must fit max_connections). */
  dbPoolSize: number;
  /** Comma-separated worker roles this worker process runs (`all` or names from src/queues/worker-roles.ts). */
  workerRoles: string[];
  /**
   * CPU niceness a worker process gives itself at boot (0–19; 0 = as the API). Flushing is throughput
   * work with seconds of slack; the request path has milliseconds, so where both share cores the API
   * should win them (README "Benchmarks").
   */
  workerNice: number;
  /**
   * Longest time in seconds the stream flushers hold off while an API process reports pressure
   * (src/limits/flush-yield.ts): a burst of requests (a fleet's join storm) gets the flush's CPU, and the
   * flush catches up after; past this the flushers run whatever the pressure. 0 = never hold off.
   * 0–300, default 30.
   */
  flushYieldSeconds: number;
  /**
   * Longest time in seconds a client may cache a door decision (spec: Limits, "Door cache TTL value: not
   * shown"); sent in the heartbeat `config`, in the manifest and, never longer, on every decision. A
   * change that could alter a decision reaches the clients before it: door and policy edits and schedule
   * or org-tree changes raise the doors version, a member's change pushes `refresh_permissions` to the
   * server they are on (src/doors/subject-invalidation.ts). 5–3600, default 300.
   */
  doorCacheTtlSeconds: number;
  /**
   * Seconds of one window of the service's shared decision cache and of the door-check quotas
   * (src/doors/decision-cache.ts, src/limits/quotas.ts): a cached decision is shared within its window
   * only, and the quotas count per window. 5–3600, at most `doorCacheTtlSeconds`; default 60 (or the
   * TTL when that is shorter).
   */
  doorDecisionWindowSeconds: number;
  /**
   * Days an access-log row (a grant or denial answered by the door endpoints) is kept; older rows are
   * deleted by the `prune-access-log` worker role (src/doors/access-log-retention.ts). 1–3650, default 30.
   */
  accessLogRetentionDays: number;
  /**
   * Port of a worker process's `/metrics` and `/healthz` (src/adapters/metrics/worker-metrics.ts); 0 = any free
   * port (logged). With `--processes N` the primary serves one aggregated endpoint on it.
   */
  workersMetricsPort: number;
  /** Interface the workers' metrics listener binds to; loopback by default, like the console. */
  workersMetricsHost: string;
  /** Port of the moderator console listener (page, /console/api, /metrics, /openapi.json); 0 = any free port. */
  consolePort: number;
  /** Interface the console binds to; loopback by default so it is never exposed by accident. */
  consoleHost: string;
  /**
   * Operator token of the console (`Authorization: Bearer <token>`), at least 24 characters; null when
   * unset, in which case the console generates one at boot (src/adapters/console/console-token.ts).
   */
  consoleToken: string | null;
  /**
   * The console's address as browsers reach it (`CONSOLE_PUBLIC_URL`, e.g. `https://mod.example.com`), or
   * null. Needed for OpenID Connect sign-in (the redirect URI is `<url>/console/auth/oidc/callback`); an
   * `https:` address marks the session cookie `Secure` even where TLS ends at a proxy.
   */
  consolePublicUrl: string | null;
  /**
   * OpenID Connect sign-in of the console (issue #31), or null when `OIDC_ISSUER` is unset (then
   * moderators sign in with their personal access token). All three variables go together.
   */
  oidc: { issuer: string; clientId: string; clientSecret: string } | null;
  /**
   * Admission control of the game listener (src/limits/admission.ts, README "Overload"): ceilings at which
   * heartbeats are refused with 503 `overloaded`; door manifest/bulk requests are refused at half of each,
   * door and ban checks at a quarter. `maxLoopLagMs` 0 turns the event-loop signal off.
   */
  admission: {
    /** Game requests in flight (admitted, not yet answered). */
    maxInFlight: number;
    /** Redis commands sent by this process and awaiting replies. */
    maxRedisQueue: number;
    /** Event-loop lag, ms. */
    maxLoopLagMs: number;
    /** Retry-After of a refusal: whole seconds drawn uniformly from [min, max]. */
    retryAfterMinSeconds: number;
    retryAfterMaxSeconds: number;
    /** Largest Retry-After while an overload lasts (the range doubles every 10 s of it), seconds. */
    retryAfterCapSeconds: number;
  };
  /**
   * What the processes demand of Redis persistence at boot (README "Durability";
   * src/store/redis-persistence.ts). `required`: the API and the workers refuse to start unless Redis
   * runs AOF with `appendfsync everysec` or `always` (so `none`, `rdb`, `aof-no` and `unknown` are
   * refused, each with the setting to change), and /readyz answers 503 if a later re-read finds less.
   * `best-effort` (default): they start on any Redis and report the mode (one log line, /readyz,
   * `gis_redis_persistence`), at warn when it is not durable. `npm run services:up` writes `required`
   * into .data/services.env when the Redis it chose has AOF.
   */
  redisDurability: RedisDurability;
  /**
   * Seconds between re-reads of the Redis persistence settings after boot (0 = boot and reconnects only).
   * A Redis restarted with another configuration, or a `CONFIG SET appendonly no`, shows up within this.
   */
  redisPersistenceRecheckSeconds: number;
  /**
   * WAIT-backed acknowledgement of heartbeats (docs/running.md "Failover"; src/store/replica-ack.ts). `replicas` 0
   * (default) is off: a heartbeat's 200 means its master ran the script, and a master failover can lose
   * what its replica had not yet received. `replicas` n ≥ 1: the 200 waits until n replicas of the
   * game's master confirm the write (`WAIT n timeoutMs`); fewer within `timeoutMs` milliseconds → 503
   * `unavailable` with Retry-After (the client sends it again). Needs a master with at least n replicas.
   */
  redisWait: {
    /** REDIS_WAIT_REPLICAS, 0–5. */
    replicas: number;
    /** REDIS_WAIT_TIMEOUT_MS, 10–5000 ms. */
    timeoutMs: number;
  };
}

/** REDIS_DURABILITY values; see {@link Config.redisDurability}. */
export const REDIS_DURABILITY_VALUES = ['required', 'best-effort'] as const;
export type RedisDurability = (typeof REDIS_DURABILITY_VALUES)[number];

const schema = {
  type: 'object',
  properties: {
    DATABASE_URL: { type: 'string', pattern: '^postgres(ql)?://', default: 'postgresql://postgres@127.0.0.1:5432/gis' },
    REDIS_URL: { type: 'string', pattern: '^(rediss?|redis\\+cluster)://', default: 'redis://127.0.0.1:6379' },
    REDIS_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,32}$', default: 'gis' },
    LEGACY_LAYOUT_WRITES: { type: 'boolean', default: false },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3000 },
    HOST: { type: 'string', minLength: 1, default: '0.0.0.0' },
    HTTP_LISTEN_BACKLOG: { type: 'integer', minimum: 1, maximum: 65535, default: 4096 },
    LOG_LEVEL: { enum: ['error', 'warn', 'info', 'http', 'debug'], default: 'info' },
    MAX_ENVELOPE_BYTES: { type: 'integer', minimum: 1024, maximum: 16777216, default: 524288 },
    GONE_AFTER_MISSED_INTERVALS: { type: 'integer', minimum: 2, maximum: 20, default: 3 },
    DB_POOL_SIZE: { type: 'integer', minimum: 1, maximum: 100, default: 5 },
    WORKER_ROLES: { type: 'string', pattern: '^[a-z,-]+$', default: 'all' },
    WORKER_NICE: { type: 'integer', minimum: 0, maximum: 19, default: 10 },
    FLUSH_YIELD_SECONDS: { type: 'integer', minimum: 0, maximum: 300, default: 30 },
    DOOR_CACHE_TTL_SECONDS: { type: 'integer', minimum: 5, maximum: 3600, default: 300 },
    DOOR_DECISION_WINDOW_SECONDS: { type: 'integer', minimum: 5, maximum: 3600 },
    ACCESS_LOG_RETENTION_DAYS: { type: 'integer', minimum: 1, maximum: 3650, default: 30 },
    CONSOLE_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3001 },
    WORKERS_METRICS_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3002 },
    WORKERS_METRICS_HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    CONSOLE_HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    CONSOLE_TOKEN: { type: 'string', minLength: 24, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' },
    CONSOLE_PUBLIC_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    OIDC_ISSUER: { type: 'string', pattern: '^https?://' },
    OIDC_CLIENT_ID: { type: 'string', minLength: 1, maxLength: 512 },
    OIDC_CLIENT_SECRET: { type: 'string', minLength: 1, maxLength: 1024 },
    ADMISSION_MAX_IN_FLIGHT: { type: 'integer', minimum: 4, maximum: 100000, default: 512 },
    ADMISSION_MAX_REDIS_QUEUE: { type: 'integer', minimum: 4, maximum: 1000000, default: 2000 },
    ADMISSION_MAX_LOOP_LAG_MS: { type: 'integer', minimum: 0, maximum: 60000, default: 200 },
    ADMISSION_RETRY_AFTER_MIN_SECONDS: { type: 'integer', minimum: 1, maximum: 600, default: 2 },
    ADMISSION_RETRY_AFTER_MAX_SECONDS: { type: 'integer', minimum: 1, maximum: 600, default: 8 },
    ADMISSION_RETRY_AFTER_CAP_SECONDS: { type: 'integer', minimum: 1, maximum: 600, default: 60 },
    REDIS_DURABILITY: { enum: REDIS_DURABILITY_VALUES, default: 'best-effort' },
    REDIS_PERSISTENCE_RECHECK_SECONDS: { type: 'integer', minimum: 0, maximum: 86400, default: 60 },
    REDIS_WAIT_REPLICAS: { type: 'integer', minimum: 0, maximum: 5, default: 0 },
    REDIS_WAIT_TIMEOUT_MS: { type: 'integer', minimum: 10, maximum: 5000, default: 500 },
  },
  additionalProperties: true,
} as const;

/** Raised with one line per bad variable; entry points print it and exit non-zero. */
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/**
 * Validates `env` (default `process.env`) and returns a frozen {@link Config}.
 * @throws {ConfigError} listing every missing or malformed variable.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<Config> {
  // renamed when it came to cover user locations too: an upgrade that kept the old name would write the new layouts unseen
  if (env.REPLAY_LEGACY_WRITES !== undefined) throw new ConfigError(['REPLAY_LEGACY_WRITES is now LEGACY_LAYOUT_WRITES (docs/running.md "Upgrading")']);
  const ajv = new Ajv({ useDefaults: true, coerceTypes: true, allErrors: true });
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(schema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') copy[name] = value;
  }
  const validate = ajv.compile(schema);
  if (!validate(copy)) {
    throw new ConfigError(
      (validate.errors ?? []).map((e) => {
        const name = e.instancePath.slice(1);
        // Never echo a credential, even a malformed one.
        const got = /TOKEN|SECRET|PASSWORD/.test(name) ? '[redacted]' : JSON.stringify(copy[name]);
        return `${name || 'env'} ${e.message ?? 'is invalid'} (got ${got})`;
      }),
    );
  }
  const v = copy as Record<string, string | number>;
  // Cross-field rules.
  if (Number(v.ADMISSION_RETRY_AFTER_MIN_SECONDS) > Number(v.ADMISSION_RETRY_AFTER_MAX_SECONDS)) {
    throw new ConfigError([
      `ADMISSION_RETRY_AFTER_MIN_SECONDS must not exceed ADMISSION_RETRY_AFTER_MAX_SECONDS (got ${v.ADMISSION_RETRY_AFTER_MIN_SECONDS} > ${v.ADMISSION_RETRY_AFTER_MAX_SECONDS})`,
    ]);
  }
  // A window longer than the TTL would let a compliant client re-check a door more often than its quota counts.
  const doorWindow = v.DOOR_DECISION_WINDOW_SECONDS === undefined ? Math.min(60, Number(v.DOOR_CACHE_TTL_SECONDS)) : Number(v.DOOR_DECISION_WINDOW_SECONDS);
  if (doorWindow > Number(v.DOOR_CACHE_TTL_SECONDS)) {
    throw new ConfigError([`DOOR_DECISION_WINDOW_SECONDS must not exceed DOOR_CACHE_TTL_SECONDS (got ${doorWindow} > ${v.DOOR_CACHE_TTL_SECONDS})`]);
  }
  const oidcVars = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'].filter((n) => v[n] !== undefined);
  if (oidcVars.length !== 0 && oidcVars.length !== 3) throw new ConfigError(['OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together (set all three or none)']);
  if (oidcVars.length === 3 && v.CONSOLE_PUBLIC_URL === undefined) throw new ConfigError(['OIDC sign-in needs CONSOLE_PUBLIC_URL (the redirect URI is built from it)']);
  return Object.freeze({
    databaseUrl: String(v.DATABASE_URL),
    redisUrl: String(v.REDIS_URL),
    redisPrefix: String(v.REDIS_PREFIX),
    legacyWrites: (v.LEGACY_LAYOUT_WRITES as unknown) === true,
    port: Number(v.PORT),
    host: String(v.HOST),
    listenBacklog: Number(v.HTTP_LISTEN_BACKLOG),
    logLevel: v.LOG_LEVEL as Config['logLevel'],
    maxEnvelopeBytes: Number(v.MAX_ENVELOPE_BYTES),
    goneAfterMissedIntervals: Number(v.GONE_AFTER_MISSED_INTERVALS),
    dbPoolSize: Number(v.DB_POOL_SIZE),
    workerRoles: String(v.WORKER_ROLES).split(',').filter(Boolean),
    workerNice: Number(v.WORKER_NICE),
    flushYieldSeconds: Number(v.FLUSH_YIELD_SECONDS),
    doorCacheTtlSeconds: Number(v.DOOR_CACHE_TTL_SECONDS),
    doorDecisionWindowSeconds: doorWindow,
    accessLogRetentionDays: Number(v.ACCESS_LOG_RETENTION_DAYS),
    workersMetricsPort: Number(v.WORKERS_METRICS_PORT),
    workersMetricsHost: String(v.WORKERS_METRICS_HOST),
    consolePort: Number(v.CONSOLE_PORT),
    consoleHost: String(v.CONSOLE_HOST),
    consoleToken: v.CONSOLE_TOKEN === undefined ? null : String(v.CONSOLE_TOKEN),
    consolePublicUrl: v.CONSOLE_PUBLIC_URL === undefined ? null : String(v.CONSOLE_PUBLIC_URL),
    oidc: oidcVars.length === 3 ? Object.freeze({ issuer: String(v.OIDC_ISSUER), clientId: String(v.OIDC_CLIENT_ID), clientSecret: String(v.OIDC_CLIENT_SECRET) }) : null,
    admission: Object.freeze({
      maxInFlight: Number(v.ADMISSION_MAX_IN_FLIGHT),
      maxRedisQueue: Number(v.ADMISSION_MAX_REDIS_QUEUE),
      maxLoopLagMs: Number(v.ADMISSION_MAX_LOOP_LAG_MS),
      retryAfterMinSeconds: Number(v.ADMISSION_RETRY_AFTER_MIN_SECONDS),
      retryAfterMaxSeconds: Number(v.ADMISSION_RETRY_AFTER_MAX_SECONDS),
      retryAfterCapSeconds: Number(v.ADMISSION_RETRY_AFTER_CAP_SECONDS),
    }),
    redisDurability: v.REDIS_DURABILITY as RedisDurability,
    redisPersistenceRecheckSeconds: Number(v.REDIS_PERSISTENCE_RECHECK_SECONDS),
    redisWait: Object.freeze({ replicas: Number(v.REDIS_WAIT_REPLICAS), timeoutMs: Number(v.REDIS_WAIT_TIMEOUT_MS) }),
  });
}
