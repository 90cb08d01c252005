/**
 * scripts/bench/auth-flood.ts — the right key's latency while wrong secrets flood its public prefix (issue
 * #16; not a test).
 *
 * Usage:  npm run bench:auth-flood -- [--duration 20] [--rate 50] [--flood 200] [--rounds 3] [--warmup 3] [--prefix gisbench-auth]
 *
 * Creates a workspace, game and key, and runs `--rounds` rounds of three phases against the API
 * (src/server.ts, Node 24 of node_modules/.bin) on a free port under a dedicated Redis prefix. Every phase
 * starts on a freshly started API process, so the key is never in the process cache at its start (the
 * cold case the issue measured), and the right key then sends heartbeats at `--rate`/s for `--duration` s:
 *   1. baseline: the right key alone;
 *   2. flood: while wrong secrets on the same prefix arrive at `--flood`/s;
 *   3. flood-restart: the flood is already running when the API is restarted (its first requests after
 *      the restart race the right key's).
 * The flood comes from scripts/bench/auth-flood-sender.ts, a process of its own at the lowest CPU
 * priority (nice 19): an attacker's signing and sending runs on the attacker's machine, not on the
 * service's, and on this 2-core box an equally ranked sender takes CPU the API needs. Interleaving the
 * phases in rounds pairs each flooded phase with a baseline measured minutes, not a quarter of an hour,
 * apart (the machine's speed drifts up to 2x).
 * A freshly started API compiles and optimises its hot path on its first requests (stalls of up to
 * ~200 ms measured here), so before each measurement `--warmup` s of heartbeats signed with a second key
 * of the game, unmeasured, warm it; the right key itself stays out of the new process's cache.
 * Prints, per phase and round, the right key's statuses and p50/p99/max; per round the ratio of each
 * flooded p99 to that round's baseline p99; and the median of those ratios (the target: ≤ 2).
 * Removes what it created afterwards.
 */
import { createGame } from '../../src/games/game-service.js';
import { createKey } from '../../src/auth/key-service.js';
import { VerifiedDigests } from '../../src/auth/verified-digests.js';
import { sign } from '../../src/auth/signature.js';
import { freePort } from '../support/free-port.js';
import type { ManagedChild } from '../support/child-process.js';
import { pacedLoad, type PacedRequest } from '../support/paced-load.js';
import { median, openFloodBench, runFloodRounds, showRatios, startFlood, stopFlood } from './flood.js';

const HB = '/api/v1/game/heartbeat';

const port = await freePort();
const bench = await openFloodBench({ script: 'bench:auth-flood', defaultPrefix: 'gisbench-auth', healthPort: port, apiEnv: async () => ({ PORT: String(port), CONSOLE_PORT: String(await freePort()) }) });
const { duration, rate, floodRate, rounds, warmup, db, redis, keySpace } = bench;

/** A signed heartbeat with `key`/`secret`; `n` keeps every body distinct (no replay collisions). */
function heartbeat(key: string, secret: string, n: number): PacedRequest {
  const body = JSON.stringify({ externalServerId: `bench-${n}`, playerCount: 0, maxPlayers: 30, sdkVersion: 'bench', uptimeSeconds: n, players: [], events: [], acks: [] });
  const ts = String(Math.floor(Date.now() / 1000));
  return { method: 'POST', path: HB, body, headers: { authorization: `Bearer ${key}`, 'x-service-timestamp': ts, 'x-service-signature': sign(secret, ts, body), 'content-type': 'application/json' } };
}

try {
  const game = await createGame(db, { workspaceId: bench.workspaceId, name: 'bench game' });
  const key = await createKey(db, game.id, ['heartbeat'], 'bench-auth-flood', new VerifiedDigests(redis, keySpace));
  const secret = key.key.split('.')[1]!;
  let n = 0;
  const good = () => pacedLoad({ port, rate, duration, connections: 4, next: () => heartbeat(key.key, secret, ++n) });
  const warmKey = await createKey(db, game.id, ['heartbeat'], 'bench-auth-flood warm-up', new VerifiedDigests(redis, keySpace));
  const warmSecret = warmKey.key.split('.')[1]!;
  /** Unmeasured heartbeats of the second key: the fresh API's compilation is not charged to the right key. */
  const warm = async () => {
    if (warmup > 0) await pacedLoad({ port, rate, duration: warmup, connections: 4, next: () => heartbeat(warmKey.key, warmSecret, ++n) });
  };
  const floodArgs = ['--port', String(port), '--key-prefix', key.prefix, '--rate', String(floodRate)];
  const { p99s, ratios } = await runFloodRounds({
    rounds,
    phases: ['baseline', 'flood', 'flood-restart'] as const,
    measuredName: 'right key',
    floodName: 'wrong secrets',
    run: async (phase) => {
      let sender: ManagedChild | null = null;
      if (phase === 'flood-restart') sender = await startFlood('scripts/bench/auth-flood-sender.ts', floodArgs);
      await bench.restartApi();
      if (phase === 'flood') sender = await startFlood('scripts/bench/auth-flood-sender.ts', floodArgs);
      await warm();
      const measured = await good();
      return { measured, flood: sender ? await stopFlood(sender) : null };
    },
  });
  console.log(`p99 ratio flooded/baseline, median of ${rounds} rounds: flood ${median(ratios.flood).toFixed(2)} (rounds ${showRatios(ratios.flood)}), ` +
    `flood-restart ${median(ratios['flood-restart']).toFixed(2)} (rounds ${showRatios(ratios['flood-restart'])}) (target ≤ 2)`);
  console.log(`BENCH auth_flood base_p99_ms=${median(p99s.baseline).toFixed(1)} flood_p99_ratio=${median(ratios.flood).toFixed(2)} restart_p99_ratio=${median(ratios['flood-restart']).toFixed(2)} rounds=${rounds}`);
} finally {
  await bench.close();
}
