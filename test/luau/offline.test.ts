/**
 * Issue #19: the Luau SDK under lua5.2 when the service cannot be reached (spec: bans/check "failing open
 * is the recommended default" with a switch; Door failMode; Errors 5xx/network: backoff with jitter and
 * queue locally; a malformed key refused locally). Runs sdk/luau/test/offline.lua against a closed port.
 */
import { expect } from 'chai';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { runLua } from './lua-runner.js';

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('Luau SDK: service unreachable (lua5.2)', function () {
  this.timeout(60_000);

  it('fails bans open by default and closed on request, applies door failMode and forced state, backs off, keeps events', async () => {
    const out = runLua('test/offline.lua', [], { GIS_BASE_URL: `http://127.0.0.1:${await closedPort()}` }).trim().split('\n').map((l) => l.replaceAll('\t', ' '));
    expect(out.filter((l) => !l.startsWith('OTHER')).slice(0, 4)).to.deep.equal(['BAN false fail_open', 'BAN true fail_closed', 'DOOR false fail_closed fail_mode', 'FORCED true forced_unlocked forced 0']);
    const problems = out.filter((l) => l.startsWith('PROBLEM'));
    expect(problems).to.have.length(3);
    // Backoff ceilings 0.2, 0.4, 0.8 s with equal jitter: each delay lies in [ceiling/2, ceiling].
    problems.forEach((line, i) => {
      const [, kind, delay] = line.split(' ');
      const ceiling = 0.2 * 2 ** i;
      expect(kind).to.equal('network');
      expect(Number(delay)).to.be.within(ceiling / 2, ceiling);
    });
    expect(out).to.include('OTHER ban_check_failed'); // the unanswered check is reported, not silent
    expect(out).to.include('QUEUED 1');
    expect(out.at(-1)).to.match(/^BADKEY false .*svc_live_<prefix>\.<secret>/);
  });
});
