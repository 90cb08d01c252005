/**
 * Issue #31, revocation: disabling a moderator, changing their role or rotating their token takes effect
 * on the next request on every API process within the revocation budget (1 s, as key revocation in
 * test/ops/many-processes.test.ts: polled with that deadline, so it is the published invalidation that
 * acts, not a cache TTL), and closes that moderator's open live stream. Two real API processes
 * (src/server.ts, each with its console listener) on the test Redis and Postgres.
 */
import { expect } from 'chai';
import { freePort } from '../../scripts/support/free-port.js';
import { startNodeScript, type ManagedChild } from '../../scripts/support/child-process.js';
import { Harness, heartbeatBody, type TestGame } from '../support/harness.js';
import { openSse } from '../support/sse.js';
import { moderator, moderatorStore } from '../support/moderators.js';
import { rotateModeratorToken, setModeratorDisabled, setModeratorRole } from '../../src/auth/moderators/moderator-accounts.js';

/** Revocation must reach every process within this, ms (issue #31 item 5, "as key revocation"). */
const REVOCATION_BUDGET_MS = 1_000;
const OPERATOR = 'revocation-test-operator-token-0123456789';

describe('console revocation across two API processes (issue #31)', function () {
  this.timeout(180_000);
  let h: Harness;
  let g: TestGame;
  const consoles: { child: ManagedChild; url: string }[] = [];

  /** Status of `GET /live` (or `POST /commands` with `kick`) on console `url` with bearer `token`. */
  async function call(url: string, token: string, kick = false): Promise<number> {
    const res = await fetch(`${url}/console/api/games/${g.gameId}/${kick ? 'commands' : 'live'}`, {
      method: kick ? 'POST' : 'GET',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: kick ? JSON.stringify({ type: 'kick', target: { externalId: 'p1' }, payload: { reason: 'r' } }) : undefined,
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** The consoles (by index) that answered `want` for `token` before the deadline. */
  async function refusedWithinBudget(token: string, want: number, kick = false): Promise<number[]> {
    const deadline = Date.now() + REVOCATION_BUDGET_MS;
    const refused = new Set<number>();
    while (refused.size < consoles.length && Date.now() < deadline) {
      for (const [i, c] of consoles.entries()) if (!refused.has(i) && (await call(c.url, token, kick)) === want) refused.add(i);
    }
    return [...refused].sort();
  }

  before(async () => {
    h = new Harness();
    g = await h.game();
    await h.heartbeat(g, heartbeatBody(['p1'], { externalServerId: 'srv-1' }));
    for (const name of ['api-a', 'api-b']) {
      const [port, consolePort] = [await freePort(), await freePort()];
      const env = { LOG_LEVEL: 'warn', DB_POOL_SIZE: '3', HOST: '127.0.0.1', PORT: String(port), CONSOLE_PORT: String(consolePort), CONSOLE_TOKEN: OPERATOR };
      consoles.push({ child: startNodeScript(name, 'src/server.ts', { env, echo: 'none' }), url: `http://127.0.0.1:${consolePort}` });
    }
    await Promise.all(consoles.map((c) => c.child.waitForUrl(`${c.url}/healthz`, 90_000)));
  });
  after(async () => {
    await Promise.all(consoles.map((c) => c.child.stop()));
    await h?.close();
  });

  it('disabling refuses the token on every process within 1 s and closes the moderator’s open live stream', async () => {
    const m = await moderator(h, g.workspaceId, 'viewer');
    for (const c of consoles) expect(await call(c.url, m.token), c.child.output()).to.equal(200);
    const stream = await openSse(`${consoles[0]!.url}/console/api/games/${g.gameId}/live/stream`, { Authorization: `Bearer ${m.token}` });
    expect(stream.status).to.equal(200);
    await stream.waitFor((e) => e.event === 'hello', 'hello');
    await setModeratorDisabled(moderatorStore(h), m.id, true, 'test');
    expect(await refusedWithinBudget(m.token, 401), 'processes refusing the disabled moderator before the deadline').to.deep.equal([0, 1]);
    // The server ends the stream (a stream left open would hold this test until its timeout).
    await stream.ended;
    stream.close();
  });

  it('a role change applies on every process within 1 s', async () => {
    const m = await moderator(h, g.workspaceId, 'moderator');
    for (const c of consoles) expect(await call(c.url, m.token, true)).to.equal(201);
    await setModeratorRole(moderatorStore(h), m.id, 'viewer', 'test');
    expect(await refusedWithinBudget(m.token, 403, true), 'processes refusing the demoted moderator before the deadline').to.deep.equal([0, 1]);
  });

  it('a rotated token is refused on every process within 1 s; the new one works', async () => {
    const m = await moderator(h, g.workspaceId, 'viewer');
    for (const c of consoles) expect(await call(c.url, m.token)).to.equal(200);
    const rotated = await rotateModeratorToken(moderatorStore(h), m.id, 'test');
    expect(await refusedWithinBudget(m.token, 401), 'processes refusing the old token before the deadline').to.deep.equal([0, 1]);
    for (const c of consoles) expect(await call(c.url, rotated.token)).to.equal(200);
  });
});
