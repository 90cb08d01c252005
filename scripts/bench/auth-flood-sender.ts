/**
 * scripts/bench/auth-flood-sender.ts — the wrong-secret flood of `npm run bench:auth-flood`, in a process of
 * its own so that signing and sending the flood never delays the right key's requests in the measuring
 * process (whose latencies are charged from each request's due time). Not run directly.
 *
 * Usage:  tsx scripts/bench/auth-flood-sender.ts --port P --key-prefix K --rate R --duration S
 * Sends heartbeats signed with wrong secrets for the real key's public prefix `K` at R/s for S seconds
 * (open loop, 32 connections): prints `FLOOD START` when it begins (after start-up, so its compilation
 * is not charged to the right key) and `FLOOD {"<status>": count, …}` at the end.
 */
import { sign } from '../../src/auth/signature.js';
import { parseCli } from '../support/cli-args.js';
import { pacedLoad } from '../support/paced-load.js';

const cli = parseCli('usage: tsx scripts/bench/auth-flood-sender.ts --port P --key-prefix K --rate R --duration S', {
  options: { port: { type: 'string' }, 'key-prefix': { type: 'string' }, rate: { type: 'string' }, duration: { type: 'string' } },
});
const port = cli.number('port', 0, 1, 65_535);
const keyPrefix = cli.values['key-prefix'] ?? cli.fail('--key-prefix is required');
const rate = cli.number('rate', 200, 0.1, 100_000);
const duration = cli.number('duration', 15, 1, 3600);

let w = 0;
// Compiled and connected: the measuring process starts the right key's load on this line.
console.log('FLOOD START');
const result = await pacedLoad({
  port,
  rate,
  duration,
  connections: 32,
  next: () => {
    const secret = `wrong${++w}`.padEnd(43, 'x');
    const body = JSON.stringify({ externalServerId: `flood-${w}`, playerCount: 0, maxPlayers: 30, sdkVersion: 'bench', uptimeSeconds: w, players: [], events: [], acks: [] });
    const ts = String(Math.floor(Date.now() / 1000));
    return { method: 'POST', path: '/api/v1/game/heartbeat', body, headers: { authorization: `Bearer svc_live_${keyPrefix}.${secret}`, 'x-service-timestamp': ts, 'x-service-signature': sign(secret, ts, body), 'content-type': 'application/json' } };
  },
});
console.log(`FLOOD ${JSON.stringify(result.statuses)}`);
