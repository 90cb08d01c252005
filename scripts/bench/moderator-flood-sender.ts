/**
 * scripts/bench/moderator-flood-sender.ts — the wrong-token flood of `npm run bench:moderator-flood`, in a
 * process of its own (as scripts/bench/auth-flood-sender.ts, and for the same reason: the attacker's
 * sending must not delay the measuring process). Not run directly.
 *
 * Usage:  tsx scripts/bench/moderator-flood-sender.ts --port P --token-prefix K --rate R --mode bearer|signin [--path /console/api/…]
 * Sends personal access tokens `gmod_<K>.<wrong secret>` (the real token's public prefix, a different
 * secret each time) at R/s until SIGTERM (the loop and the `FLOOD` lines: scripts/bench/flood.ts):
 * - `bearer`: `GET <path>` with `Authorization: Bearer …` (a script or bot guessing the token);
 * - `signin`: `POST /console/api/session` with `{"token": …}` (failed sign-ins from the page's form).
 */
import { parseCli } from '../support/cli-args.js';
import type { PacedRequest } from '../support/paced-load.js';
import { runFloodSender } from './flood.js';

const cli = parseCli('usage: tsx scripts/bench/moderator-flood-sender.ts --port P --token-prefix K --rate R --mode bearer|signin [--path P]', {
  options: { port: { type: 'string' }, 'token-prefix': { type: 'string' }, rate: { type: 'string' }, mode: { type: 'string' }, path: { type: 'string' } },
});
const port = cli.number('port', 0, 1, 65_535);
const tokenPrefix = cli.values['token-prefix'] ?? cli.fail('--token-prefix is required');
const rate = cli.number('rate', 200, 0.1, 100_000);
const mode = cli.values.mode;
if (mode !== 'bearer' && mode !== 'signin') cli.fail('--mode is bearer or signin');
const path = cli.values.path ?? '/console/api/session';

let w = 0;

/** The next wrong token's request: the secret is 43 characters of the token alphabet, so it parses and reaches the verifier. */
function next(): PacedRequest {
  const token = `gmod_${tokenPrefix}.${`wrong${++w}`.padEnd(43, 'x')}`;
  if (mode === 'bearer') return { method: 'GET', path, headers: { authorization: `Bearer ${token}` } };
  return { method: 'POST', path: '/console/api/session', body: JSON.stringify({ token }), headers: { 'content-type': 'application/json' } };
}

await runFloodSender(port, rate, next);
