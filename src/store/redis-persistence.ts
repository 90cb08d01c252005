/**
 * What a 200 survives: the persistence of the Redis this process writes to, read at boot and re-read
 * while it runs (README "Durability"; issue #22). A heartbeat answered 200 is in Redis only until a
 * worker flushes it to Postgres, so how Redis keeps data across its own crash is what the 200 is worth.
 *
 * | mode | Redis settings | a Redis process crash (kill -9) loses | a host crash / power loss loses |
 * | --- | --- | --- | --- |
 * | `aof-always` | `appendonly yes`, `appendfsync always` | nothing | nothing |
 * | `aof-everysec` | `appendonly yes`, `appendfsync everysec` | only writes delayed behind a slow fsync (≤ 2 s) | the last ~1 s (≤ 2 s on a slow disk) |
 * | `aof-no` | `appendonly yes`, `appendfsync no` | as everysec | what the kernel has not written back (~30 s on Linux) |
 * | `rdb` | `appendonly no`, `save` points | everything since the last snapshot (minutes) | the same |
 * | `none` | `appendonly no`, `save ""` | every unflushed heartbeat | the same |
 * | `unknown` | `CONFIG GET` refused (managed Redis, renamed command, ACL) | — | — |
 *
 * Only `aof-everysec` and `aof-always` are durable in the README's sense ("a Redis crash loses at most
 * about the last second"); `REDIS_DURABILITY=required` (src/config.ts) refuses everything else.
 * Measured by test/faults/redis-durability.fault.ts (figures in docs/benchmarks.md).
 */
import type { Redis } from 'ioredis';
import type { RedisDurability } from '../config.js';
import { log } from '../log.js';

/** Every mode {@link classifyPersistence} reports; also the label values of `gis_redis_persistence`. */
export const PERSISTENCE_MODES = ['aof-always', 'aof-everysec', 'aof-no', 'rdb', 'none', 'unknown'] as const;
export type PersistenceMode = (typeof PERSISTENCE_MODES)[number];

/** Modes whose guarantee is the README's: a Redis crash loses at most about the last second. */
const DURABLE: ReadonlySet<PersistenceMode> = new Set(['aof-always', 'aof-everysec']);

/** What a 200 survives under each mode, for the log line and /readyz readers. */
export const GUARANTEES: Readonly<Record<PersistenceMode, string>> = {
  'aof-always': 'a 200 survives a Redis crash and a host crash',
  'aof-everysec': 'a 200 survives a Redis process crash; a host crash can lose about the last second (at most 2 s)',
  'aof-no': 'a 200 survives a Redis process crash; a host crash can lose what the kernel had not written (~30 s)',
  rdb: 'a Redis crash loses every heartbeat since the last snapshot that is not yet flushed to Postgres',
  none: 'a Redis restart loses every heartbeat not yet flushed to Postgres',
  unknown: 'unknown: Redis does not let this process read its persistence settings',
};

/** The Redis settings a mode is derived from, as CONFIG GET returned them (null: not read). */
export interface PersistenceSettings {
  appendonly: string | null;
  appendfsync: string | null;
  save: string | null;
}

/** One reading of Redis persistence. */
export interface PersistenceReport extends PersistenceSettings {
  mode: PersistenceMode;
  /** True for `aof-everysec` and `aof-always`. */
  durable: boolean;
  /** Why the mode is `unknown` (the server's refusal, or "not read yet"); absent otherwise. */
  detail?: string;
  /** When it was read (ISO 8601); null before the first successful read. */
  checkedAt: string | null;
}

/**
 * Mode of a set of settings: AOF wins over RDB (Redis loads the AOF when both are on), `save ""`
 * (or a missing value) means no snapshots.
 */
export function classifyPersistence(s: PersistenceSettings): PersistenceMode {
  if (s.appendonly === null) return 'unknown';
  if (s.appendonly === 'yes') {
    if (s.appendfsync === 'always') return 'aof-always';
    if (s.appendfsync === 'everysec') return 'aof-everysec';
    if (s.appendfsync === 'no') return 'aof-no';
    return 'unknown';
  }
  return s.save !== null && s.save.trim() !== '' ? 'rdb' : 'none';
}

/** True when `mode` meets `REDIS_DURABILITY=required`. */
export function isDurable(mode: PersistenceMode): boolean {
  return DURABLE.has(mode);
}

/**
 * Server replies that mean "ask again soon", not "CONFIG is not allowed": loading the dataset at start,
 * a busy script, a replica without its master, a cluster slot moving.
 */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/;

/** A Redis error reply (ioredis `ReplyError`); anything else is the connection failing. */
function isRefusal(err: unknown): err is Error {
  return err instanceof Error && err.name === 'ReplyError' && !TRANSIENT_REPLY.test(err.message);
}

/**
 * Reads `appendonly`, `appendfsync` and `save` with one `CONFIG GET` each (three commands in parallel:
 * Redis before 7 takes one parameter per CONFIG GET). A server that refuses CONFIG (renamed or disabled
 * command, ACL without `+config`) gives mode `unknown` with the refusal in `detail`.
 * @throws the client's error when Redis cannot be reached or answers a transient error (LOADING, BUSY…):
 *   the caller retries; a reading is never made up from a connection failure.
 */
export async function readPersistence(redis: Redis): Promise<PersistenceReport> {
  const get = async (name: keyof PersistenceSettings): Promise<string | null> => {
    const reply = (await redis.call('CONFIG', 'GET', name)) as string[];
    return reply.length >= 2 ? String(reply[1]) : null;
  };
  const checkedAt = new Date().toISOString();
  try {
    const [appendonly, appendfsync, save] = await Promise.all([get('appendonly'), get('appendfsync'), get('save')]);
    const settings = { appendonly, appendfsync, save };
    const mode = classifyPersistence(settings);
    return { mode, durable: isDurable(mode), ...settings, checkedAt };
  } catch (err) {
    if (!isRefusal(err)) throw err;
    return { mode: 'unknown', durable: false, appendonly: null, appendfsync: null, save: null, detail: `CONFIG GET refused: ${err.message}`, checkedAt };
  }
}

/** The process refused to start: Redis persistence is below `REDIS_DURABILITY=required`. */
export class DurabilityRefusedError extends Error {
  override readonly name = 'DurabilityRefusedError';
  constructor(readonly report: PersistenceReport, message: string) {
    super(message);
  }
}

/**
 * Why `report` does not meet `REDIS_DURABILITY=required`, naming the setting to change; null when it
 * does. `where` names the Redis (host:port, never credentials).
 */
export function requirementProblem(report: PersistenceReport, where: string): string | null {
  const escape = 'or set REDIS_DURABILITY=best-effort to run without that guarantee';
  const fix = `turn on AOF on that Redis (appendonly yes with appendfsync everysec, e.g. CONFIG SET appendonly yes and the same in its redis.conf), ${escape}`;
  switch (report.mode) {
    case 'aof-always':
    case 'aof-everysec':
      return null;
    case 'aof-no':
      return `Redis at ${where} runs AOF with appendfsync no (the kernel decides when it reaches the disk): set appendfsync everysec (CONFIG SET appendfsync everysec and in its redis.conf), ${escape}`;
    case 'rdb':
      return `Redis at ${where} keeps only RDB snapshots (save "${report.save ?? ''}", appendonly no): a crash loses everything since the last one; ${fix}`;
    case 'none':
      return `Redis at ${where} keeps nothing on disk (appendonly no, save ""): a restart loses every heartbeat not yet flushed to Postgres; ${fix}`;
    case 'unknown':
      return `Redis at ${where} does not let this process read its persistence (${report.detail ?? 'CONFIG GET refused'}); if the provider keeps AOF on, set REDIS_DURABILITY=best-effort`;
  }
}

/** host:port of a Redis URL, without credentials, for log lines and messages. */
export function redisLocation(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'the configured Redis';
  }
}

/** What /readyz needs to know: the latest reading and the policy (a {@link PersistenceMonitor}). */
export interface PersistenceStatus {
  readonly current: PersistenceReport;
  readonly durability: RedisDurability;
}

export interface PersistenceMonitorOptions {
  /** `api` or `workers`: named in the log line. */
  processName: string;
  /** REDIS_URL of `redis` (only host:port is ever printed). */
  redisUrl: string;
  durability: RedisDurability;
  /** Seconds between re-reads after boot; 0 = boot and reconnects only. */
  recheckSeconds: number;
  /** Called with every reading whose mode differs from the previous one (and with the first). */
  onChange?: (report: PersistenceReport) => void;
}

/** Pause between boot attempts while Redis cannot be reached, ms. */
const BOOT_RETRY_MS = 1_000;

/**
 * Reads Redis persistence at boot, logs one structured line (`redis persistence`, with mode, settings,
 * policy and guarantee) and one more each time the mode changes; re-reads every `recheckSeconds` and
 * whenever the client reconnects (a restarted Redis may come back with another configuration).
 * A re-read that cannot reach Redis keeps the last reading. Used by src/server.ts and workers/index.ts;
 * /readyz and `gis_redis_persistence` show {@link current}.
 */
export class PersistenceMonitor implements PersistenceStatus {
  private report: PersistenceReport = { mode: 'unknown', durable: false, appendonly: null, appendfsync: null, save: null, detail: 'not read yet', checkedAt: null };
  private timer: NodeJS.Timeout | null = null;
  private readonly onReady = () => void this.refresh().catch(() => undefined);
  private stopped = false;

  constructor(
    private readonly redis: Redis,
    private readonly opts: PersistenceMonitorOptions,
  ) {}

  /** The latest reading (mode `unknown`, detail "not read yet", before the first). */
  get current(): PersistenceReport {
    return this.report;
  }

  /** The policy this process runs under. */
  get durability(): RedisDurability {
    return this.opts.durability;
  }

  /**
   * The boot check. Under `required` it waits until Redis answers (retrying every second; one warn line
   * while it waits) and then throws {@link DurabilityRefusedError} unless the mode is durable. Under
   * `best-effort` one attempt: if Redis is unreachable the mode stays `unknown` ("not read yet") and is
   * read when the client connects. Either way it then starts the re-reads.
   * @throws {DurabilityRefusedError} under `required`, naming the setting to change.
   */
  async start(): Promise<PersistenceReport> {
    let waitingLogged = false;
    for (;;) {
      try {
        this.accept(await readPersistence(this.redis));
        break;
      } catch (err) {
        if (this.opts.durability === 'best-effort') {
          this.report = { ...this.report, detail: 'not read yet: Redis unreachable; read when it connects' };
          this.logReading('warn');
          this.opts.onChange?.(this.report);
          break;
        }
        if (!waitingLogged) log.warn('waiting for Redis to read its persistence settings (REDIS_DURABILITY=required)', { process: this.opts.processName, redis: redisLocation(this.opts.redisUrl), err: String(err) });
        waitingLogged = true;
        await new Promise((r) => setTimeout(r, BOOT_RETRY_MS));
      }
    }
    if (this.opts.durability === 'required') {
      const problem = requirementProblem(this.report, redisLocation(this.opts.redisUrl));
      if (problem) throw new DurabilityRefusedError(this.report, `refusing to start: REDIS_DURABILITY=required, but ${problem}`);
    }
    this.redis.on('ready', this.onReady);
    if (this.opts.recheckSeconds > 0) {
      this.timer = setInterval(this.onReady, this.opts.recheckSeconds * 1000);
      this.timer.unref();
    }
    return this.report;
  }

  /**
   * Reads the settings now and applies the result (log line and `onChange` when the mode changed).
   * @throws the client's error when Redis is unreachable (the last reading is kept).
   */
  async refresh(): Promise<PersistenceReport> {
    this.accept(await readPersistence(this.redis));
    return this.report;
  }

  /** Stops the re-reads. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.redis.off('ready', this.onReady);
  }

  private accept(next: PersistenceReport): void {
    if (this.stopped) return;
    const changed = next.mode !== this.report.mode || this.report.checkedAt === null;
    this.report = next;
    if (!changed) return;
    const required = this.opts.durability === 'required';
    this.logReading(next.durable ? 'info' : required ? 'error' : 'warn');
    this.opts.onChange?.(next);
  }

  private logReading(level: 'info' | 'warn' | 'error'): void {
    const r = this.report;
    log.log(level, 'redis persistence', {
      process: this.opts.processName,
      redis: redisLocation(this.opts.redisUrl),
      mode: r.mode,
      durable: r.durable,
      appendonly: r.appendonly,
      appendfsync: r.appendfsync,
      save: r.save,
      ...(r.detail ? { detail: r.detail } : {}),
      durability: this.opts.durability,
      guarantee: GUARANTEES[r.mode],
    });
  }
}
