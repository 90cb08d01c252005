/**
 * Command expiry and Redis↔Postgres reconciliation, run by the `expire-commands` worker role every second
 * (spec: States › Command lifecycle, "not yet acked → expired, surfaced to the issuing moderator").
 *
 * Expiry: the issuer adds `<gameId>:<commandId>` to the global index scored by expiresAt; each run takes
 * the due members, runs the `expire-commands` Lua script once per game (it expires everything due in that
 * game, whatever the index said), then removes the members it handled. Both steps are idempotent, so
 * overlapping runs of several worker processes, or a run killed halfway, change nothing twice.
 *
 * Reconciliation, the safety net behind "Redis and Postgres agree after a worker restart": Postgres rows
 * still open well past their expiry are compared with their Redis hash. Open in Redis → expire them now
 * (the index entry was lost); terminal in Redis → copy that transition to Postgres (its stream entry was
 * lost); no Redis state at all (a crash between the issuer's two writes, or lost Redis data) → `expired`
 * with reason {@link NO_LIVE_STATE}, because such a command can no longer be delivered.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { applyCommandTransitions, type CommandTransitionRow } from './command-log-flusher.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { expireCommandsCall } from '../store/lua/expire-commands.js';

/** Due index members handled per round, and commands one script call looks at. */
const BATCH = 500;
/** Most index members one run handles; the next run (a second later) continues. */
const MAX_PER_RUN = 20_000;
/** How long past its expiry an open Postgres row waits before reconciliation steps in, ms. */
export const RECONCILE_GRACE_MS = 60_000;
/** Reason recorded for a command expired by reconciliation because Redis had no state for it. */
export const NO_LIVE_STATE = 'no live state';

const OPEN = ['pending', 'dispatched'];

/** Runs the game's expiry script until nothing due is left; returns how many commands it expired. */
export async function expireGame(redis: AppRedis, keySpace: KeySpace, gameId: string, nowMs: number): Promise<number> {
  const keys = keySpace.game(gameId);
  let expired = 0;
  for (let more = 1; more; ) {
    const call = expireCommandsCall(keys, { nowMs, batch: BATCH });
    const [n, m] = (await redis.runScript('expireCommands', call.keys, call.args)) as [number, number];
    expired += n;
    more = m;
  }
  return expired;
}

/**
 * Expires every command whose expiresAt ≤ `nowMs` (ms) and that is neither acked nor failed, in every
 * game with due commands. Marks those games active so the command-log flusher records the transitions
 * within a second. Idempotent.
 * @returns how many commands were expired and in which games.
 */
export async function expireDueCommands(redis: AppRedis, keySpace: KeySpace, nowMs: number): Promise<{ expired: number; games: string[] }> {
  const global = keySpace.global;
  const index = global.commandExpiryIndex();
  const touched = new Set<string>();
  let expired = 0;
  for (let handled = 0; handled < MAX_PER_RUN; ) {
    const members = await redis.zrangebyscore(index, '-inf', nowMs, 'LIMIT', 0, BATCH);
    if (!members.length) break;
    const games = new Set(members.map((m) => m.slice(0, m.indexOf(':'))));
    for (const gameId of games) {
      const n = await expireGame(redis, keySpace, gameId, nowMs);
      if (n) touched.add(gameId);
      expired += n;
    }
    await redis.zrem(index, ...members);
    handled += members.length;
    if (members.length < BATCH) break;
  }
  if (touched.size) await redis.zadd(global.activeGames(), ...[...touched].flatMap((g) => [nowMs, g]));
  return { expired, games: [...touched] };
}

/**
 * Brings Postgres rows that are still pending/dispatched more than {@link RECONCILE_GRACE_MS} after their
 * expiry in line with Redis (see the module comment). At most `limit` rows per call, oldest expiry first.
 * @returns how many rows it looked at and how many it changed or had expired.
 */
export async function reconcileCommands(db: Db, redis: AppRedis, keySpace: KeySpace, nowMs: number, limit = 500): Promise<{ checked: number; fixed: number }> {
  const rows = await db.command.findMany({
    where: { status: { in: OPEN }, expiresAt: { lt: new Date(nowMs - RECONCILE_GRACE_MS) } },
    select: { id: true, gameId: true, expiresAt: true },
    orderBy: { expiresAt: 'asc' },
    take: limit,
  });
  if (!rows.length) return { checked: 0, fixed: 0 };
  const pipeline = redis.pipeline();
  for (const r of rows) pipeline.hmget(keySpace.game(r.gameId).command(r.id), 'status', 'doneAt', 'reason', 'server');
  const live = (await pipeline.exec()) ?? [];

  const byGame = new Map<string, CommandTransitionRow[]>();
  const expireIn = new Set<string>();
  rows.forEach((r, i) => {
    const [status, doneAt, reason, server] = (live[i]?.[1] ?? []) as (string | null)[];
    let row: CommandTransitionRow | null = null;
    if (!status) row = { id: r.id, status: 'expired', server: '', at: r.expiresAt, reason: NO_LIVE_STATE };
    else if (OPEN.includes(status)) expireIn.add(r.gameId);
    else row = { id: r.id, status, server: server ?? '', at: new Date(Number(doneAt) || r.expiresAt.getTime()), reason: reason || null };
    if (row) byGame.set(r.gameId, [...(byGame.get(r.gameId) ?? []), row]);
  });
  let fixed = 0;
  for (const [gameId, transitions] of byGame) {
    await applyCommandTransitions(db, gameId, transitions);
    fixed += transitions.length;
  }
  for (const gameId of expireIn) fixed += await expireGame(redis, keySpace, gameId, nowMs);
  if (expireIn.size) await redis.zadd(keySpace.global.activeGames(), ...[...expireIn].flatMap((g) => [nowMs, g]));
  return { checked: rows.length, fixed };
}
