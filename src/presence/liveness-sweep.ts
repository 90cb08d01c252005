/**
 * Declares silent servers gone (spec: States › Other states). A server is gone once it has missed
 * `goneAfterMissedIntervals` of its own heartbeat intervals (default 3 × 20 s = 60 s); its open sessions
 * close at its last heartbeat time (the `sweepServer` Lua script, atomic per server). The same pass
 * copies last-heartbeat times of live servers and last-use times of keys into Postgres.
 */
import type { Db } from '../store/prisma.js';
import type { AppRedis } from '../store/redis.js';
import { MIN_INTERVAL_SECONDS } from '../games/game-service.js';
import type { KeySpace } from '../store/keyspace/key-space.js';
import { sweepServerCall } from '../store/lua/sweep-server.js';

export interface SweepResult {
  gone: string[];
  sessionsClosed: number;
  live: number;
}

/** Sweeps one game at server time `nowMs`. Idempotent; a late heartbeat always wins over the sweep. */
export async function sweepGame(redis: AppRedis, db: Db, keySpace: KeySpace, gameId: string, goneAfterMissedIntervals: number, nowMs: number): Promise<SweepResult> {
  const keys = keySpace.game(gameId);
  const result: SweepResult = { gone: [], sessionsClosed: 0, live: 0 };
  const earliestCutoff = nowMs - goneAfterMissedIntervals * MIN_INTERVAL_SECONDS * 1000;
  const candidates = await redis.zrangebyscore(keys.servers(), '-inf', String(earliestCutoff));
  for (const sid of candidates) {
    const iv = Number((await redis.hget(keys.server(sid), 'iv')) ?? 20) || 20;
    const cutoff = nowMs - goneAfterMissedIntervals * iv * 1000;
    const call = sweepServerCall(keys, { sid, cutoffMs: cutoff });
    const closed = Number(await redis.runScript('sweepServer', call.keys, call.args));
    if (closed >= 0) {
      result.gone.push(sid);
      result.sessionsClosed += closed;
    }
  }
  const live = await redis.zrange(keys.servers(), '0', '-1', 'WITHSCORES');
  const sids: string[] = [];
  const seen: Date[] = [];
  for (let i = 0; i + 1 < live.length; i += 2) {
    sids.push(live[i]!);
    seen.push(new Date(Number(live[i + 1])));
  }
  result.live = sids.length;
  if (sids.length) {
    await db.$executeRaw`
      UPDATE "GameServer" AS g SET "lastSeenAt" = v.seen
      FROM unnest(${sids}::text[], ${seen}::timestamptz[]) AS v(sid, seen)
      WHERE g."gameId" = ${gameId}::uuid AND g."externalServerId" = v.sid AND g."lastSeenAt" < v.seen`;
  }
  const used = await redis.hgetall(keys.keysUsed());
  for (const [keyId, ms] of Object.entries(used)) {
    const at = new Date(Number(ms));
    await db.apiKey.updateMany({ where: { id: keyId, gameId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: at } }] }, data: { lastUsedAt: at } });
  }
  return result;
}
