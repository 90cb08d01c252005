/**
 * The nudge budget of one game's topic (spec: Limits, "Platform messaging receive budget: 40 + 80 x server
 * count per topic per minute"). Each publish is received by every live server, so with S servers the
 * topic may carry at most (40 + 80·S) / S publishes a minute; {@link NUDGE_BUDGET_SAFETY} keeps 10 % in
 * reserve for servers that subscribed before their first heartbeat. That is 108 a minute for one server,
 * 75 for ten, and never fewer than 72. Publishes are paced evenly (at least 60 s / budget apart: 556 ms
 * for one server, 834 ms from about 50 servers up), so a steady stream of commands gets a nudge about
 * every second rather than a burst that spends the minute's budget and then none. Enforced atomically in
 * Redis (`nudge-admit` Lua script, sliding window of {@link NUDGE_WINDOW_MS}), so every worker process
 * shares one budget per game.
 */
import { randomUUID } from 'node:crypto';
import type { AppRedis } from '../store/redis.js';
import { NUDGE_WINDOW_MS } from '../store/keys.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { nudgeAdmitCall } from '../store/lua/nudge-admit.js';

export const NUDGE_BUDGET_BASE = 40;
export const NUDGE_BUDGET_PER_SERVER = 80;
export const NUDGE_BUDGET_SAFETY = 0.9;

/** Publishes a game with `liveServers` live servers may send per minute (the formula the script applies). */
export function nudgesPerMinute(liveServers: number): number {
  if (liveServers < 1) return 0;
  return Math.max(1, Math.floor((NUDGE_BUDGET_SAFETY * (NUDGE_BUDGET_BASE + NUDGE_BUDGET_PER_SERVER * liveServers)) / liveServers));
}

/** Least time between two publishes on the topic of a game with `liveServers` live servers, ms. */
export function nudgeSpacingMs(liveServers: number): number {
  return Math.ceil(NUDGE_WINDOW_MS / Math.max(1, nudgesPerMinute(liveServers)));
}

export type Admission =
  /** The publish is recorded in the window; go ahead. */
  | { kind: 'admitted'; budget: number; servers: number }
  /** Too soon after the previous publish, or the window is full: try again after `retryAfterMs`. */
  | { kind: 'wait'; retryAfterMs: number; servers: number }
  /** No live server: nobody would receive a nudge. */
  | { kind: 'no_servers' };

/** Takes one publish from `gameId`'s budget at `nowMs` (ms), or says when there will be room. */
export async function admitNudge(redis: AppRedis, keySpace: KeySpace, gameId: string, nowMs: number): Promise<Admission> {
  const keys = keySpace.game(gameId);
  const call = nudgeAdmitCall(keys, {
    nowMs,
    windowMs: NUDGE_WINDOW_MS,
    budgetBase: NUDGE_BUDGET_BASE,
    budgetPerServer: NUDGE_BUDGET_PER_SERVER,
    safety: NUDGE_BUDGET_SAFETY,
    id: randomUUID(),
  });
  const [ok, value, servers] = (await redis.runScript('nudgeAdmit', call.keys, call.args)) as [number, number, number];
  if (ok === -1) return { kind: 'no_servers' };
  if (ok === 1) return { kind: 'admitted', budget: value, servers };
  return { kind: 'wait', retryAfterMs: value, servers };
}
