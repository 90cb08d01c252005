/** Boot-time configuration (src/config.ts): the worker niceness setting. */
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.js';

describe('config', () => {
  it('WORKER_NICE defaults to 10 and takes 0 to 19', () => {
    expect(loadConfig({}).workerNice).to.equal(10);
    expect(loadConfig({ WORKER_NICE: '0' }).workerNice).to.equal(0);
    expect(loadConfig({ WORKER_NICE: '19' }).workerNice).to.equal(19);
  });

  for (const bad of ['20', '-1', 'low']) {
    it(`refuses WORKER_NICE=${bad} naming the variable`, () => {
      let err: unknown;
      try {
        loadConfig({ WORKER_NICE: bad });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).problems.join('\n')).to.match(/^WORKER_NICE /m);
    });
  }
});
