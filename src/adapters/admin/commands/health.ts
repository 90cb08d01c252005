/**
 * `admin health --game G`: the ingest health of one game (issue #7; spec: Events, "Persistent throttling
 * of one game appears in the workspace as an ingest health warning visible to the operator"): its open
 * warnings and those resolved in the last day (src/limits/ingest-health.ts), its 429s per minute over the
 * last ten minutes, the quotas its keys get (src/limits/quotas.ts), the flush backlog of its streams, and
 * its dead letters: rows Postgres refused, set aside so they block nothing (src/store/dead-letters.ts).
 */
import { describeThrottling, isPersistent, listHealthWarnings, PERSISTENT_MINUTES, throttleHistory } from '../../../limits/ingest-health.js';
import { BAN_CHECK_QUOTA, DOOR_BULK_QUOTA, DOOR_CHECK_QUOTA, heartbeatQuota, manifestQuota } from '../../../limits/quotas.js';
import { streamBacklogs } from '../../../runtime/stream-backlog.js';
import { DeadLetters } from '../../../store/dead-letters.js';
import { THROTTLE_HISTORY_MINUTES } from '../../../store/keys.js';
import type { AdminCommand } from '../command.js';
import { formatDate, formatFields, formatTable } from '../format.js';
import { requireGame } from './games.js';

/**
 * `health --game G` → `{ gameId, warnings: [{ id, kind, message, firstAt, lastAt, count, resolvedAt }],
 * throttling: { persistent, throttledMinutes, total, minutes: [{ minute, throttled, by }] }, quotas: {
 * heartbeatPerServerPerMinute, manifestPerMinute, doorCheckPerUserDoorPerTtl, doorBulkPerUserPerTtl,
 * banCheckPerUserPerMinute, doorCacheTtlSeconds, doorDecisionWindowSeconds } (the two door quotas count per
 * decision window, the names kept from when it was the TTL), streams: { events|sessions|command_log|access_log:
 * { entries, lagSeconds } }, deadLetters: { bySource: { events|sessions|command_log|access_log: n }, total, kept,
 * latest: [{ id, at, source, entryId, reason, row, cut }] } }` (the five newest, rows cut to 300
 * characters). Exit 0 whatever the health (it is a report, not a probe).
 * @throws {NotFoundError} unknown game.
 */
const health: AdminCommand = {
  group: 'health',
  name: '',
  summary: 'Ingest health of a game: warnings, recent throttling, quotas, flush backlog, dead letters',
  options: { game: { type: 'string', required: true, valueName: 'ID', description: 'game id' } },
  async run(ctx) {
    const gameId = ctx.args.uuid('game');
    const db = ctx.db();
    await requireGame(db, gameId);
    const game = await db.game.findUniqueOrThrow({ where: { id: gameId }, select: { heartbeatIntervalSeconds: true } });
    const liveServers = await ctx.redis().zcard(ctx.keySpace.game(gameId).servers());
    const [warnings, minutes, backlogs, deadLetters] = await Promise.all([
      listHealthWarnings(db, gameId, ctx.nowMs),
      throttleHistory(ctx.redis(), ctx.keySpace, gameId, ctx.nowMs),
      streamBacklogs(ctx.redis(), ctx.keySpace, [gameId], ctx.nowMs),
      new DeadLetters(ctx.redis(), ctx.keySpace).summary(gameId),
    ]);
    const throttledMinutes = minutes.filter((m) => m.throttled > 0).length;
    const quotas = {
      heartbeatPerServerPerMinute: heartbeatQuota(game.heartbeatIntervalSeconds),
      manifestPerMinute: manifestQuota(liveServers),
      doorCheckPerUserDoorPerTtl: DOOR_CHECK_QUOTA,
      doorBulkPerUserPerTtl: DOOR_BULK_QUOTA,
      banCheckPerUserPerMinute: BAN_CHECK_QUOTA,
      doorCacheTtlSeconds: ctx.config.doorCacheTtlSeconds,
      doorDecisionWindowSeconds: ctx.config.doorDecisionWindowSeconds,
    };
    const streams = backlogs.get(gameId)!;
    const throttling = { persistent: isPersistent(minutes), throttledMinutes, total: minutes.reduce((n, m) => n + m.throttled, 0), minutes };
    const open = warnings.filter((w) => !w.resolvedAt);
    return {
      json: { gameId, warnings, throttling, quotas, streams, deadLetters },
      text: [
        open.length ? `${open.length} open warning(s):` : 'no open ingest health warnings',
        formatTable(['KIND', 'SINCE', 'LAST', 'SEEN', 'MESSAGE'], open.map((w) => [w.kind, w.firstAt, w.lastAt, w.count, w.message]), ''),
        ...warnings.filter((w) => w.resolvedAt).map((w) => `resolved ${formatDate(w.resolvedAt!)}: ${w.kind}: ${w.message}`),
        '',
        `throttling, last ${THROTTLE_HISTORY_MINUTES} minutes (persistent at ${PERSISTENT_MINUTES}+ throttled minutes): ${describeThrottling(minutes)}`,
        '',
        formatFields([
          ['heartbeats per server', `${quotas.heartbeatPerServerPerMinute}/min (interval ${game.heartbeatIntervalSeconds} s)`],
          ['manifest per key', `${quotas.manifestPerMinute}/min (${liveServers} live servers)`],
          ['door checks', `${quotas.doorCheckPerUserDoorPerTtl} per user and door per ${quotas.doorDecisionWindowSeconds} s`],
          ['door bulk', `${quotas.doorBulkPerUserPerTtl} per user per ${quotas.doorDecisionWindowSeconds} s`],
          ['ban checks', `${quotas.banCheckPerUserPerMinute} per user per minute`],
        ]),
        '',
        formatTable(['STREAM', 'UNFLUSHED', 'OLDEST (S)', 'DEAD LETTERS'], Object.entries(streams).map(([name, s]) => [name, s.entries, s.lagSeconds.toFixed(1), deadLetters.bySource[name as keyof typeof deadLetters.bySource] ?? 0])),
        '',
        deadLetters.total
          ? `${deadLetters.total} row(s) refused by Postgres and set aside (${deadLetters.kept} kept), newest first:`
          : 'no dead letters',
        formatTable(['AT', 'STREAM', 'ENTRY', 'REASON'], deadLetters.latest.map((d) => [d.at, d.source, d.entryId, d.reason]), ''),
      ].filter((line, i, all) => line !== '' || all[i - 1] !== '').join('\n'),
    };
  },
};

export const healthCommands: AdminCommand[] = [health];
