/**
 * Typed configuration, read from `process.env` once and validated with ajv (defaults and coercion).
 * Nothing else in the code base reads `process.env`: processes call {@link loadConfig} at boot and
 * pass the frozen result down; tests build their own with overrides.
 */
import { Ajv } from 'ajv';

export interface Config {
  /** PostgreSQL URL of the durable record. */
  databaseUrl: string;
  /** Redis URL of the hot state (rosters, replay cache, command queues, streams, BullMQ). */
  redisUrl: string;
  /** Prefix of every Redis key this deployment writes; tests use a random one. */
  redisPrefix: string;
  /** Port of the game listener (the five /api/v1/game endpoints plus health). */
  port: number;
  /** Interface the game listener binds to. */
  host: string;
  logLevel: 'error' | 'warn' | 'info' | 'http' | 'debug';
  /** Maximum heartbeat/request body in bytes; larger gets 413 before parsing (spec: Limits, "not shown"). */
  maxEnvelopeBytes: number;
  /** A server missing this many intervals is declared gone; its sessions close at its last heartbeat. */
  goneAfterMissedIntervals: number;
  /** Connections in each process's Postgres pool (API + N workers must fit max_connections). */
  dbPoolSize: number;
  /** Comma-separated worker roles this worker process runs (`all` or names from workers/queues.ts). */
  workerRoles: string[];
  /**
   * CPU niceness a worker process gives itself at boot (0–19; 0 = as the API). Flushing is throughput
   * work with seconds of slack; the request path has milliseconds, so where both share cores the API
   * should win them (README "Benchmarks").
   */
  workerNice: number;
  /**
   * Longest time in seconds a door decision may be cached, by the service and by clients (spec: Limits,
   * "Door cache TTL value: not shown"); sent in the heartbeat `config` and on every decision.
   */
  doorCacheTtlSeconds: number;
  /**
   * Days an access-log row (a grant or denial answered by the door endpoints) is kept; older rows are
   * deleted by the `prune-access-log` worker role (src/doors/access-log-retention.ts). 1–3650, default 30.
   */
  accessLogRetentionDays: number;
  /** Port of the moderator console listener (page, /console/api, /metrics, /openapi.json); 0 = any free port. */
  consolePort: number;
  /** Interface the console binds to; loopback by default so it is never exposed by accident. */
  consoleHost: string;
  /**
   * Operator token of the console (`Authorization: Bearer <token>`), at least 24 characters; null when
   * unset, in which case the console generates one at boot (src/console/console-token.ts).
   */
  consoleToken: string | null;
}

const schema = {
  type: 'object',
  properties: {
    DATABASE_URL: { type: 'string', pattern: '^postgres(ql)?://', default: 'postgresql://postgres@127.0.0.1:5432/gis' },
    REDIS_URL: { type: 'string', pattern: '^rediss?://', default: 'redis://127.0.0.1:6379' },
    REDIS_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,32}$', default: 'gis' },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3000 },
    HOST: { type: 'string', minLength: 1, default: '0.0.0.0' },
    LOG_LEVEL: { enum: ['error', 'warn', 'info', 'http', 'debug'], default: 'info' },
    MAX_ENVELOPE_BYTES: { type: 'integer', minimum: 1024, maximum: 16777216, default: 524288 },
    GONE_AFTER_MISSED_INTERVALS: { type: 'integer', minimum: 2, maximum: 20, default: 3 },
    DB_POOL_SIZE: { type: 'integer', minimum: 1, maximum: 100, default: 5 },
    WORKER_ROLES: { type: 'string', pattern: '^[a-z,-]+$', default: 'all' },
    WORKER_NICE: { type: 'integer', minimum: 0, maximum: 19, default: 10 },
    DOOR_CACHE_TTL_SECONDS: { type: 'integer', minimum: 5, maximum: 3600, default: 60 },
    ACCESS_LOG_RETENTION_DAYS: { type: 'integer', minimum: 1, maximum: 3650, default: 30 },
    CONSOLE_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3001 },
    CONSOLE_HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    CONSOLE_TOKEN: { type: 'string', minLength: 24, maxLength: 256, pattern: '^[\\x21-\\x7e]+$' },
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
  return Object.freeze({
    databaseUrl: String(v.DATABASE_URL),
    redisUrl: String(v.REDIS_URL),
    redisPrefix: String(v.REDIS_PREFIX),
    port: Number(v.PORT),
    host: String(v.HOST),
    logLevel: v.LOG_LEVEL as Config['logLevel'],
    maxEnvelopeBytes: Number(v.MAX_ENVELOPE_BYTES),
    goneAfterMissedIntervals: Number(v.GONE_AFTER_MISSED_INTERVALS),
    dbPoolSize: Number(v.DB_POOL_SIZE),
    workerRoles: String(v.WORKER_ROLES).split(',').filter(Boolean),
    workerNice: Number(v.WORKER_NICE),
    doorCacheTtlSeconds: Number(v.DOOR_CACHE_TTL_SECONDS),
    accessLogRetentionDays: Number(v.ACCESS_LOG_RETENTION_DAYS),
    consolePort: Number(v.CONSOLE_PORT),
    consoleHost: String(v.CONSOLE_HOST),
    consoleToken: v.CONSOLE_TOKEN === undefined ? null : String(v.CONSOLE_TOKEN),
  });
}
