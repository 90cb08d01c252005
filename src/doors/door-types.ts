/**
 * Shapes shared by the door modules (spec: Resources › Door; issue #5). A door's definition and its
 * policies are loaded from Postgres into a {@link DoorCatalog} entry; a {@link Decision} is what one
 * evaluation yields and what the decision cache stores.
 */
import { FAIL_MODES, FORCED_STATES } from '../schemas/doors.js';
import type { CompiledWindow, TimeWindow } from './time-window.js';

export const DOOR_EFFECTS = ['allow', 'deny'] as const;
/** `allow` or `deny`: a door's default behaviour and a policy's effect. */
export type Effect = (typeof DOOR_EFFECTS)[number];

/** What the integration does when the service is unreachable (spec: Door › failMode). */
export type FailMode = (typeof FAIL_MODES)[number];

/** Spec: States › Door forced state. `locked`/`unlocked` override policy until returned to `auto`. */
export type ForcedState = (typeof FORCED_STATES)[number];

export const SUBJECT_TYPES = ['positions', 'units', 'organizations', 'users', 'everyone'] as const;
/** Who a policy targets (spec: Door › policy). */
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/**
 * Optional conditions of a policy (stored as `DoorPolicy.conditions` JSON). Every present condition must
 * hold for the policy to apply; `{}` means none.
 */
export interface PolicyConditions {
  /** true: the member must be clocked in (an open shift); false: must not be. */
  clockedIn?: boolean;
  /** An operation of this type must be in progress for the member (see subject-context.ts). */
  operationType?: string;
  /** The member must hold no active record of this type (non-members hold none). */
  noActiveRecordType?: string;
  timeWindow?: TimeWindow;
  /** Whole days since the member joined the workspace; non-members never meet it. */
  minTenureDays?: number;
}

/**
 * {@link PolicyConditions} as evaluated: the time window parsed once when policies are loaded
 * (src/doors/time-window.ts `compileWindow`).
 */
export interface CompiledConditions extends Omit<PolicyConditions, 'timeWindow'> {
  timeWindow?: CompiledWindow;
}

/** A policy as evaluated (subject ids in a Set for O(1) membership). */
export interface PolicyDef {
  id: string;
  effect: Effect;
  priority: number;
  /** ms since the epoch: the second tie-breaker (older first). */
  createdAtMs: number;
  subjectType: SubjectType;
  subjectIds: ReadonlySet<string>;
  includeDescendants: boolean;
  conditions: CompiledConditions;
}

/** A door as evaluated: policies already sorted in tie order (see evaluate.ts). */
export interface DoorDef {
  id: string;
  key: string;
  name: string;
  kind: string;
  defaultEffect: Effect;
  failMode: FailMode;
  forcedState: ForcedState;
  policies: readonly PolicyDef[];
}

/** The outcome of evaluating one door for one user. */
export interface Decision {
  decision: Effect;
  /**
   * Short machine-ish reason for moderators: `forced_locked`, `forced_unlocked`, `policy_deny:<id>`,
   * `policy_allow:<id>`, `default_allow`, `default_deny`.
   */
  reason: string;
  /** The deciding policy, or null for forced states and defaults. */
  policyId: string | null;
  /** Until when (ms since the epoch) the decision may be served from a cache. */
  expiresAtMs: number;
}
