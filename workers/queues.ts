/**
 * The typed registry of worker roles: one BullMQ queue per role, each driven by a job scheduler with a
 * stable, versioned id (so redeploys never duplicate repeatables). Queue names carry their own hash tag
 * so each queue's keys stay in one Redis Cluster slot (BullMQ's Cluster guidance).
 */
export interface RoleSpec {
  /** BullMQ queue name. */
  queue: string;
  /** Scheduler period in ms. */
  everyMs: number;
  /** Scheduler id; bump the version when the schedule changes. */
  schedulerId: string;
}

export const ROLES = {
  'flush-events': { queue: '{flush-events}', everyMs: 1000, schedulerId: 'flush-events:v1' },
  'flush-sessions': { queue: '{flush-sessions}', everyMs: 1000, schedulerId: 'flush-sessions:v1' },
  'flush-command-log': { queue: '{flush-command-log}', everyMs: 1000, schedulerId: 'flush-command-log:v1' },
  'sweep-liveness': { queue: '{sweep-liveness}', everyMs: 5000, schedulerId: 'sweep-liveness:v1' },
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
