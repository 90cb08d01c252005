/**
 * Issue #19/#28: the Luau SDK under real Luau (virtual time) when the service cannot be reached (spec: bans/check "failing open
 * is the recommended default" with a switch; Door failMode; Errors 5xx/network: backoff with jitter and
 * queue locally; a malformed key refused locally). Runs sdk/luau/test/offline.luau, where every request
 * fails as the platform fails it when nothing answers.
 */
import { expect } from 'chai';
import { runLuau } from './luau-runner.js';

describe('Luau SDK: service unreachable (real Luau)', function () {
  this.timeout(60_000);

  it('fails bans open by default and closed on request, applies door failMode and forced state, backs off, keeps events', () => {
    const out = runLuau('test/offline.luau').trim().split('\n').map((l) => l.replaceAll('\t', ' '));
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
