/**
 * How far the flushers are behind, read from the per-game Redis streams at the time of asking (used by
 * the console's health panel and by the metrics scrape; nothing on the request path).
 *
 * Flushers XACK and XDEL an entry only after its rows are committed in Postgres (src/store/streams.ts),
 * so every entry still in a stream is unflushed: the backlog is the stream length, and the flush lag is
 * the age of the oldest entry (a stream entry id starts with its Redis-clock time in ms).
 */
import type { Redis } from 'ioredis';
import { GameKeys } from '../store/keys.js';
import type { KeySpace } from '../store/keyspace/key-space.js';

/** The streams the workers drain, by the name metrics and the console use. */
export const FLUSHED_STREAMS = {
  events: (k: GameKeys) => k.eventStream(),
  sessions: (k: GameKeys) => k.sessionStream(),
  command_log: (k: GameKeys) => k.commandLog(),
  access_log: (k: GameKeys) => k.accessStream(),
} as const;

export type StreamName = keyof typeof FLUSHED_STREAMS;

/** Backlog of one stream. */
export interface StreamBacklog {
  /** Entries not yet flushed. */
  entries: number;
  /** Seconds since the oldest unflushed entry was written; 0 when the stream is empty. */
  lagSeconds: number;
}

/**
 * Backlog of every flushed stream of each game in `gameIds`, at `nowMs` (ms), in one pipeline.
 * @throws the Redis client's error when Redis is unreachable.
 */
export async function streamBacklogs(redis: Redis, keySpace: KeySpace, gameIds: readonly string[], nowMs: number): Promise<Map<string, Record<StreamName, StreamBacklog>>> {
  const names = Object.keys(FLUSHED_STREAMS) as StreamName[];
  const pipe = redis.pipeline();
  for (const gameId of gameIds) {
    const keys = keySpace.game(gameId);
    for (const name of names) {
      const key = FLUSHED_STREAMS[name](keys);
      pipe.xlen(key);
      pipe.xrange(key, '-', '+', 'COUNT', 1);
    }
  }
  const replies = gameIds.length ? ((await pipe.exec()) ?? []) : [];
  const out = new Map<string, Record<StreamName, StreamBacklog>>();
  let i = 0;
  for (const gameId of gameIds) {
    const perStream = {} as Record<StreamName, StreamBacklog>;
    for (const name of names) {
      const [lenErr, len] = replies[i++] ?? [null, 0];
      const [rangeErr, range] = replies[i++] ?? [null, []];
      if (lenErr) throw lenErr;
      if (rangeErr) throw rangeErr;
      const oldestId = (range as [string, string[]][])[0]?.[0];
      const oldestMs = oldestId ? Number(oldestId.split('-')[0]) : nowMs;
      perStream[name] = { entries: Number(len), lagSeconds: Math.max(0, (nowMs - oldestMs) / 1000) };
    }
    out.set(gameId, perStream);
  }
  return out;
}
