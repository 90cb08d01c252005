/**
 * Which errors count as "the dependency is unreachable" (503 `unavailable`, src/store/dependency-errors.ts):
 * the Redis Cluster errors of a master failover among them (issue #17: a failover answered one 500).
 */
import { expect } from 'chai';
import { isDependencyUnavailable } from '../../src/store/dependency-errors.js';

describe('dependency-unavailable errors', () => {
  for (const message of [
    'Too many Cluster redirections. Last error: Error: Connection is closed.',
    'CLUSTERDOWN The cluster is down',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    'Failed to refresh slots cache.',
    'None of startup nodes is available',
    'Command timed out',
  ]) {
    it(`is one for "${message}"`, () => {
      expect(isDependencyUnavailable(new Error(message))).to.equal(true);
    });
  }

  it('looks through the cause chain', () => {
    expect(isDependencyUnavailable(new Error('flush failed', { cause: new Error('CLUSTERDOWN Hash slot not served') }))).to.equal(true);
  });

  it('is not one for a script error or a constraint violation', () => {
    expect(isDependencyUnavailable(new Error('ERR Error running script: attempt to index a nil value'))).to.equal(false);
    expect(isDependencyUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).to.equal(false);
  });
});
