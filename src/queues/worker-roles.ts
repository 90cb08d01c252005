/**
 * The typed registry of worker roles: one BullMQ queue per role, each driven by a job scheduler with a
 * stable, versioned id (so redeploys never duplicate repeatables), or, for roles without a schedule, fed
 * by jobs that producers add (`publish-nudges`: src/commands/nudge-queue.ts). Queue names carry their own hash tag
 * so each queue's keys stay in one Redis Cluster slot (BullMQ's Cluster guidance).
 */
import { NUDGE_QUEUE } from '../commands/nudge-queue.js';
import { PLATFORM_BANS_QUEUE } from '../bans/platform-write-queue.js';

export interface RoleSpec {
  /** BullMQ queue name. */
  queue: string;
  /** Scheduler period in ms; absent for roles fed by producers. */
  everyMs?: number;
  /** Scheduler id, stable: upserting it updates a changed period in place (a new id would add a second scheduler). */
  schedulerId?: string;
  /** Jobs one process runs at once; default 1. */
  concurrency?: number;
}

export const ROLES = {
  // Four times a second: at ~2,000 heartbeats/s a once-a-second flush is a 10,000-row burst on a shared
  // machine; four smaller ones took the API's median latency at that load from ~9 ms to 3–6 ms and the
  // flush lag's maximum from ~1 s to under 0.5 s (scripts/bench/heartbeat.ts).
  'flush-events': { queue: '{flush-events}', everyMs: 250, schedulerId: 'flush-events:v1' },
  'flush-sessions': { queue: '{flush-sessions}', everyMs: 1000, schedulerId: 'flush-sessions:v1' },
  'flush-command-log': { queue: '{flush-command-log}', everyMs: 1000, schedulerId: 'flush-command-log:v1' },
  'flush-access-log': { queue: '{flush-access-log}', everyMs: 1000, schedulerId: 'flush-access-log:v1' },
  'sweep-liveness': { queue: '{sweep-liveness}', everyMs: 5000, schedulerId: 'sweep-liveness:v1' },
  'expire-commands': { queue: '{expire-commands}', everyMs: 1000, schedulerId: 'expire-commands:v1' },
  // Each job is one HTTP publish of one game: several at once so one slow platform call delays no other game.
  'publish-nudges': { queue: NUDGE_QUEUE, concurrency: 8 },
  // One job per (game, user) restriction write; waits are delays, not held slots. Rate limits: src/bans/platform-write-limits.ts.
  'platform-bans': { queue: PLATFORM_BANS_QUEUE, concurrency: 16 },
  // Shifts and payout accrual from stored sessions (src/derived/live-derivation.ts).
  'derive-shifts': { queue: '{derive-shifts}', everyMs: 5000, schedulerId: 'derive-shifts:v1' },
  // Twice a minute so every UTC minute gets a sample despite scheduling jitter (the newer one wins).
  'sample-concurrency': { queue: '{sample-concurrency}', everyMs: 30_000, schedulerId: 'sample-concurrency:v1' },
  // Persistent throttling → ingest health warnings (src/limits/ingest-health.ts); it reads minute buckets.
  'ingest-health': { queue: '{ingest-health}', everyMs: 60_000, schedulerId: 'ingest-health:v1' },
  // Access-log retention (ACCESS_LOG_RETENTION_DAYS, src/doors/access-log-retention.ts): every 10 minutes
  // deletes what aged out since, in 5,000-row batches within the job budget.
  'prune-access-log': { queue: '{prune-access-log}', everyMs: 600_000, schedulerId: 'prune-access-log:v1' },
} as const satisfies Record<string, RoleSpec>;

export type RoleName = keyof typeof ROLES;

/** Roles named in config (`WORKER_ROLES`, `all` = every role). @throws Error on an unknown name. */
export function resolveRoles(names: string[]): RoleName[] {
  if (names.includes('all')) return Object.keys(ROLES) as RoleName[];
  const bad = names.filter((n) => !(n in ROLES));
  if (bad.length) throw new Error(`unknown worker role(s): ${bad.join(', ')}; known: ${Object.keys(ROLES).join(', ')}`);
  return names as RoleName[];
}

/** Default options of every scheduled job: no unbounded growth of finished jobs. */
export const JOB_OPTIONS = {
  removeOnComplete: true,
  removeOnFail: 100,
  attempts: 1,
} as const;
