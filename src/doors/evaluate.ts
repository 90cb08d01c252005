/**
 * Door evaluation (spec: Door › evaluation order "deny wins; then highest priority; then the door's
 * default"; issue #5). Pure: the same door, context and instant always give the same decision.
 *
 * 1. Forced `locked` → deny `forced_locked`; forced `unlocked` → allow `forced_unlocked`. Policies are
 *    not looked at.
 * 2. A policy applies when its subject matches the user and every one of its conditions holds.
 * 3. Any applicable deny → deny `policy_deny:<id>`. Otherwise the applicable allow with the highest
 *    priority → allow `policy_allow:<id>`. Otherwise the default → `default_allow` / `default_deny`.
 *
 * Ties (README "Doors › tie rules"): a deny beats every allow whatever the priorities. Ties only decide
 * which policy is *named*, never the effect: among applicable policies of the winning effect the one
 * named is the highest priority, then the oldest (`createdAt`), then the smallest id (string order).
 * Policies are kept sorted in that order ({@link comparePolicies}), so the first applicable deny and the
 * first applicable allow are the ones named.
 *
 * Cache lifetime: a decision is valid until `min(now + ttlMs, next boundary)`, where the boundaries are
 * the instants at which a time-dependent condition of any policy whose subject matches could flip: a
 * time window opening or closing, an operation of a named type starting or ending, a record of a named
 * type starting or expiring, the member reaching a tenure threshold. Changes that are not time-driven
 * (positions, clock-in, records issued or revoked, the schedule, doors and policies) are handled by the
 * cache keys' versions, not here.
 */
import type { CompiledConditions, Decision, DoorDef, PolicyDef } from './door-types.js';
import type { SubjectContext } from './subject-context.js';
import { inTimeWindow, nextWindowChange } from './time-window.js';

const DAY_MS = 86_400_000;

/** Tie order of policies: priority descending, then createdAt ascending, then id ascending. */
export function comparePolicies(a: PolicyDef, b: PolicyDef): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.createdAtMs !== b.createdAtMs) return a.createdAtMs - b.createdAtMs;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** True when the policy's subject covers the user of `ctx` (time-independent). */
export function subjectMatches(p: PolicyDef, ctx: SubjectContext): boolean {
  switch (p.subjectType) {
    case 'everyone':
      return true;
    case 'users':
      return p.subjectIds.has(ctx.externalId);
    case 'positions':
      return intersects(p.subjectIds, ctx.positionIds);
    case 'units':
      return intersects(p.subjectIds, p.includeDescendants ? ctx.unitIds : ctx.directUnitIds);
    case 'organizations':
      return intersects(p.subjectIds, ctx.organizationIds);
  }
}

function intersects(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const x of small) if (large.has(x)) return true;
  return false;
}

function recordActive(ctx: SubjectContext, type: string, nowMs: number): boolean {
  return ctx.records.some((r) => r.type === type && r.issuedAtMs <= nowMs && (r.expiresAtMs === null || r.expiresAtMs > nowMs));
}

function operationRunning(ctx: SubjectContext, type: string, nowMs: number): boolean {
  return ctx.operations.some((o) => o.type === type && o.startsAtMs <= nowMs && o.endsAtMs > nowMs);
}

/** True when every condition in `c` holds for `ctx` at `nowMs`. */
export function conditionsHold(c: CompiledConditions, ctx: SubjectContext, nowMs: number): boolean {
  if (c.clockedIn !== undefined && ctx.clockedIn !== c.clockedIn) return false;
  if (c.minTenureDays !== undefined && (ctx.joinedAtMs === null || nowMs < ctx.joinedAtMs + c.minTenureDays * DAY_MS)) return false;
  if (c.noActiveRecordType !== undefined && recordActive(ctx, c.noActiveRecordType, nowMs)) return false;
  if (c.operationType !== undefined && !operationRunning(ctx, c.operationType, nowMs)) return false;
  if (c.timeWindow !== undefined && !inTimeWindow(c.timeWindow, nowMs)) return false;
  return true;
}

/** `next`, or `t` when `t` lies in (nowMs, next). (A module function: closures cost per call on this path.) */
function earlier(next: number, t: number | null, nowMs: number): number {
  return t !== null && t > nowMs && t < next ? t : next;
}

/** The earliest instant in (nowMs, limitMs) at which a condition of `c` may flip; `limitMs` when none. */
function nextBoundary(c: CompiledConditions, ctx: SubjectContext, nowMs: number, limitMs: number): number {
  let next = limitMs;
  if (c.minTenureDays !== undefined && ctx.joinedAtMs !== null) next = earlier(next, ctx.joinedAtMs + c.minTenureDays * DAY_MS, nowMs);
  if (c.noActiveRecordType !== undefined) {
    for (const r of ctx.records) {
      if (r.type !== c.noActiveRecordType) continue;
      next = earlier(earlier(next, r.issuedAtMs, nowMs), r.expiresAtMs, nowMs);
    }
  }
  if (c.operationType !== undefined) {
    for (const o of ctx.operations) {
      if (o.type !== c.operationType) continue;
      next = earlier(earlier(next, o.startsAtMs, nowMs), o.endsAtMs, nowMs);
    }
  }
  if (c.timeWindow !== undefined) next = earlier(next, nextWindowChange(c.timeWindow, nowMs, next - nowMs), nowMs);
  return next;
}

/**
 * Decides `door` for the user of `ctx` at `nowMs` (epoch ms). The result may be cached until
 * `expiresAtMs` ≤ `nowMs + ttlMs`. `door.policies` must be in {@link comparePolicies} order.
 */
export function evaluateDoor(door: DoorDef, ctx: SubjectContext, nowMs: number, ttlMs: number): Decision {
  const cap = nowMs + ttlMs;
  if (door.forcedState === 'locked') return { decision: 'deny', reason: 'forced_locked', policyId: null, expiresAtMs: cap };
  if (door.forcedState === 'unlocked') return { decision: 'allow', reason: 'forced_unlocked', policyId: null, expiresAtMs: cap };
  let deny: PolicyDef | undefined;
  let allow: PolicyDef | undefined;
  let expiresAtMs = cap;
  for (const p of door.policies) {
    if (!subjectMatches(p, ctx)) continue;
    expiresAtMs = nextBoundary(p.conditions, ctx, nowMs, expiresAtMs);
    if ((p.effect === 'deny' ? deny : allow) || !conditionsHold(p.conditions, ctx, nowMs)) continue;
    if (p.effect === 'deny') deny = p;
    else allow = p;
  }
  if (deny) return { decision: 'deny', reason: `policy_deny:${deny.id}`, policyId: deny.id, expiresAtMs };
  if (allow) return { decision: 'allow', reason: `policy_allow:${allow.id}`, policyId: allow.id, expiresAtMs };
  return { decision: door.defaultEffect, reason: `default_${door.defaultEffect}`, policyId: null, expiresAtMs };
}
