/**
 * scripts/bench/moderator-flood-sender.ts — the wrong-token flood of `npm run bench:moderator-flood`, in a
 * process of its own (as scripts/bench/auth-flood-sender.ts, and for the same reason: the attacker's
 * sending must not delay the measuring process). Not run directly.
 *
 * Usage:  tsx scripts/bench/moderator-flood-sender.ts --port P --token-prefix K --rate R --mode bearer|signin [--path /console/api/…]
 * Sends personal access tokens `gmod_<K>.<wrong secret>` (the real token's public prefix, a different
 * secret each time) at R/s (open loop, 32 connections) until SIGTERM, in 1 s slices:
 * - `bearer`: `GET <path>` with `Authorization: Bearer …` (a script or bot guessing the token);
 * - `signin`: `POST /console/api/session` with `{"token": …}` (failed sign-ins from the page's form).
 * Prints `FLOOD START` once it sends and, on SIGTERM, `FLOOD {"<status>": count, …, "errors": n}`.
 */
import { parseCli } from '../support/cli-args.js';
import { pacedLoad, type PacedRequest } from '../support/paced-load.js';

const cli = parseCli('usage: tsx scripts/bench/moderator-flood-sender.ts --port P --token-prefix K --rate R --mode bearer|signin [--path P]', {
  options: { port: { type: 'string' }, 'token-prefix': { type: 'string' }, rate: { type: 'string' }, mode: { type: 'string' }, path: { type: 'string' } },
});
const port = cli.number('port', 0, 1, 65_535);
const tokenPrefix = cli.values['token-prefix'] ?? cli.fail('--token-prefix is required');
const rate = cli.number('rate', 200, 0.1, 100_000);
const mode = cli.values.mode;
if (mode !== 'bearer' && mode !== 'signin') cli.fail('--mode is bearer or signin');
const path = cli.values.path ?? '/console/api/session';

let stop = false;
process.once('SIGTERM', () => (stop = true));
const totals: Record<string, number> = {};
let w = 0;

/** The next wrong token's request: the secret is 43 characters of the token alphabet, so it parses and reaches the verifier. */
function next(): PacedRequest {
  const token = `gmod_${tokenPrefix}.${`wrong${++w}`.padEnd(43, 'x')}`;
  if (mode === 'bearer') return { method: 'GET', path, headers: { authorization: `Bearer ${token}` } };
  return { method: 'POST', path: '/console/api/session', body: JSON.stringify({ token }), headers: { 'content-type': 'application/json' } };
}

console.log('FLOOD START');
while (!stop) {
  const slice = await pacedLoad({ port, rate, duration: 1, connections: 32, stopped: () => stop, next });
  for (const [status, n] of Object.entries(slice.statuses)) totals[status] = (totals[status] ?? 0) + n;
  if (slice.errors) totals.errors = (totals.errors ?? 0) + slice.errors;
}
console.log(`FLOOD ${JSON.stringify(totals)}`);
process.exit(0);
