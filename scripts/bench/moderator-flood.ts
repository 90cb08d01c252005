/**
 * scripts/bench/moderator-flood.ts — the real moderator's latency while wrong tokens and failed sign-ins
 * flood their token's public prefix (issue #31, item 6: "200 wrong tokens/s or failed sign-ins against
 * one account from elsewhere never stop the real moderator (p99 within 2× of quiet, as measured for
 * server keys)"; not a test). The moderator counterpart of `npm run bench:auth-flood`, same method.
 *
 * Usage:  npm run bench:moderator-flood -- [--duration 20] [--rate 50] [--flood 200] [--rounds 3] [--warmup 3] [--prefix gisbench-modflood]
 *
 * Creates a workspace, game and two moderator accounts, and runs `--rounds` rounds of three phases
 * against the console listener of an API process (src/server.ts) under a dedicated Redis prefix. Every
 * phase starts on a freshly started API, so the real token is not in the process cache at its start
 * (only its shared digest in Redis, as for any process that has not served it yet); after `--warmup` s of
 * unmeasured requests with the second account's token (a fresh process compiles its hot path on its first
 * requests), the real token calls `GET /console/api/games/:id/health` at `--rate`/s for `--duration` s:
 *   1. quiet: the real token alone;
 *   2. wrong-tokens: while `--flood`/s requests on the same route carry wrong secrets on its prefix;
 *   3. failed-sign-ins: while `--flood`/s `POST /console/api/session` carry wrong secrets on its prefix.
 * The flood comes from scripts/bench/moderator-flood-sender.ts, a process of its own at nice 19 (see
 * scripts/bench/flood.ts for why). Prints, per phase and round, the real token's statuses and p50/p99/max,
 * the statuses the flood got; per round the ratio of each flooded p99 to that round's quiet p99; and the
 * median of those ratios (target ≤ 2). Removes what it created afterwards.
 */
import { createGame } from '../../src/games/game-service.js';
import { VerifiedDigests } from '../../src/auth/verified-digests.js';
import { addModerator } from '../../src/auth/moderators/moderator-accounts.js';
import { parseModeratorToken } from '../../src/auth/moderators/moderator-token.js';
import { freePort } from '../support/free-port.js';
import { pacedLoad } from '../support/paced-load.js';
import { median, openFloodBench, runFloodRounds, showRatios, startFlood, stopFlood } from './flood.js';

const consolePort = await freePort();
const bench = await openFloodBench({
  script: 'bench:moderator-flood',
  defaultPrefix: 'gisbench-modflood',
  healthPort: consolePort,
  apiEnv: async () => ({ PORT: String(await freePort()), CONSOLE_PORT: String(consolePort), CONSOLE_TOKEN: 'bench-moderator-flood-operator-0123456789' }),
});
const { duration, rate, floodRate, rounds, warmup, db, redis, keySpace } = bench;

try {
  const game = await createGame(db, { workspaceId: bench.workspaceId, name: 'bench game' });
  const store = { db, redis, keySpace, digests: new VerifiedDigests(redis, keySpace) };
  const real = await addModerator(store, { workspaceId: bench.workspaceId, name: 'real moderator', role: 'viewer' }, 'bench');
  const warmAccount = await addModerator(store, { workspaceId: bench.workspaceId, name: 'warm-up', role: 'viewer' }, 'bench');
  const tokenPrefix = parseModeratorToken(real.token)!.prefix;
  const path = `/console/api/games/${game.id}/health`;
  const calls = (token: string, seconds: number) =>
    pacedLoad({ port: consolePort, rate, duration: seconds, connections: 4, next: () => ({ method: 'GET', path, headers: { authorization: `Bearer ${token}` } }) });

  const floodArgs = (mode: 'bearer' | 'signin') => ['--port', String(consolePort), '--token-prefix', tokenPrefix, '--rate', String(floodRate), '--mode', mode, '--path', path];
  const { p99s, ratios } = await runFloodRounds({
    rounds,
    phases: ['quiet', 'wrong-tokens', 'failed-sign-ins'] as const,
    measuredName: 'real token',
    floodName: 'wrong tokens',
    run: async (phase) => {
      await bench.restartApi();
      const sender = phase === 'quiet' ? null : await startFlood('scripts/bench/moderator-flood-sender.ts', floodArgs(phase === 'wrong-tokens' ? 'bearer' : 'signin'));
      if (warmup > 0) await calls(warmAccount.token, warmup);
      const measured = await calls(real.token, duration);
      return { measured, flood: sender ? await stopFlood(sender) : null };
    },
  });
  console.log(`p99 ratio flooded/quiet, median of ${rounds} rounds: wrong tokens ${median(ratios['wrong-tokens']).toFixed(2)} (rounds ${showRatios(ratios['wrong-tokens'])}), ` +
    `failed sign-ins ${median(ratios['failed-sign-ins']).toFixed(2)} (rounds ${showRatios(ratios['failed-sign-ins'])}) (target ≤ 2)`);
  console.log(`BENCH moderator_flood quiet_p99_ms=${median(p99s.quiet).toFixed(1)} wrong_tokens_p99_ratio=${median(ratios['wrong-tokens']).toFixed(2)} failed_sign_ins_p99_ratio=${median(ratios['failed-sign-ins']).toFixed(2)} rounds=${rounds}`);
} finally {
  await bench.close();
}
