/** Boot-time configuration (src/config.ts): the worker niceness and Redis durability settings, admission control. */
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

  it('WORKERS_METRICS_PORT defaults to 3002 on loopback and takes 0 (any free port)', () => {
    expect(loadConfig({})).to.include({ workersMetricsPort: 3002, workersMetricsHost: '127.0.0.1' });
    expect(loadConfig({ WORKERS_METRICS_PORT: '0', WORKERS_METRICS_HOST: '0.0.0.0' })).to.include({ workersMetricsPort: 0, workersMetricsHost: '0.0.0.0' });
    expect(() => loadConfig({ WORKERS_METRICS_PORT: '70000' })).to.throw(ConfigError, /WORKERS_METRICS_PORT/);
  });

  it('HTTP_LISTEN_BACKLOG defaults to 4096 and takes 1 to 65535', () => {
    expect(loadConfig({}).listenBacklog).to.equal(4096);
    expect(loadConfig({ HTTP_LISTEN_BACKLOG: '511' }).listenBacklog).to.equal(511);
    expect(() => loadConfig({ HTTP_LISTEN_BACKLOG: '0' })).to.throw(ConfigError, /HTTP_LISTEN_BACKLOG/);
    expect(() => loadConfig({ HTTP_LISTEN_BACKLOG: '70000' })).to.throw(ConfigError, /HTTP_LISTEN_BACKLOG/);
  });

  it('admission control: defaults, overrides, and a Retry-After range whose min exceeds its max is refused', () => {
    expect(loadConfig({}).admission).to.deep.equal({ maxInFlight: 512, maxRedisQueue: 2000, maxLoopLagMs: 200, retryAfterMinSeconds: 2, retryAfterMaxSeconds: 8, retryAfterCapSeconds: 60 });
    expect(loadConfig({ ADMISSION_MAX_LOOP_LAG_MS: '0', ADMISSION_MAX_IN_FLIGHT: '64' }).admission).to.include({ maxLoopLagMs: 0, maxInFlight: 64 });
    const refused = (env: Record<string, string>): string => {
      try {
        loadConfig(env);
      } catch (e) {
        if (e instanceof ConfigError) return e.problems.join('\n');
        throw e;
      }
      return '';
    };
    expect(refused({ ADMISSION_RETRY_AFTER_MIN_SECONDS: '9', ADMISSION_RETRY_AFTER_MAX_SECONDS: '3' })).to.match(/^ADMISSION_RETRY_AFTER_MIN_SECONDS must not exceed/m);
    expect(refused({ ADMISSION_MAX_IN_FLIGHT: '2' })).to.match(/^ADMISSION_MAX_IN_FLIGHT /m);
  });
  it('REDIS_DURABILITY defaults to best-effort and takes required; the re-read interval defaults to 60 s, 0 = boot only', () => {
    expect(loadConfig({}).redisDurability).to.equal('best-effort');
    expect(loadConfig({ REDIS_DURABILITY: 'required' }).redisDurability).to.equal('required');
    expect(loadConfig({ REDIS_DURABILITY: 'best-effort' }).redisDurability).to.equal('best-effort');
    expect(loadConfig({}).redisPersistenceRecheckSeconds).to.equal(60);
    expect(loadConfig({ REDIS_PERSISTENCE_RECHECK_SECONDS: '0' }).redisPersistenceRecheckSeconds).to.equal(0);
  });

  it('REDIS_WAIT_REPLICAS defaults to 0 (off) with a 500 ms REDIS_WAIT_TIMEOUT_MS; both take their values', () => {
    expect(loadConfig({}).redisWait).to.deep.equal({ replicas: 0, timeoutMs: 500 });
    expect(loadConfig({ REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '250' }).redisWait).to.deep.equal({ replicas: 1, timeoutMs: 250 });
  });

  it('LEGACY_LAYOUT_WRITES defaults to false (the new layouts) and takes true for an upgrade\'s first step', () => {
    expect(loadConfig({}).legacyWrites).to.equal(false);
    expect(loadConfig({ LEGACY_LAYOUT_WRITES: 'true' }).legacyWrites).to.equal(true);
    expect(loadConfig({ LEGACY_LAYOUT_WRITES: 'false' }).legacyWrites).to.equal(false);
  });

  it('refuses the old name REPLAY_LEGACY_WRITES and names the new one', () => {
    for (const value of ['true', 'false']) {
      expect(() => loadConfig({ REPLAY_LEGACY_WRITES: value })).to.throw(ConfigError, /LEGACY_LAYOUT_WRITES/);
    }
  });

  const badValues = [
    ['LEGACY_LAYOUT_WRITES', 'yes'],
    ['REDIS_DURABILITY', 'strict'],
    ['REDIS_DURABILITY', 'REQUIRED'],
    ['REDIS_PERSISTENCE_RECHECK_SECONDS', '-1'],
    ['REDIS_PERSISTENCE_RECHECK_SECONDS', 'often'],
    ['REDIS_WAIT_REPLICAS', '-1'],
    ['REDIS_WAIT_REPLICAS', '6'],
    ['REDIS_WAIT_REPLICAS', 'all'],
    // 0 would be WAIT's "block forever"
    ['REDIS_WAIT_TIMEOUT_MS', '0'],
    ['REDIS_WAIT_TIMEOUT_MS', '5001'],
  ] as const;
  for (const [name, bad] of badValues) {
    it(`refuses ${name}=${bad} naming the variable`, () => {
      let err: unknown;
      try {
        loadConfig({ [name]: bad });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).problems.join('\n')).to.match(new RegExp(`^${name} `, 'm'));
    });
  }

  it('console sign-in (issue #31): OIDC off by default; the three OIDC variables go together and need CONSOLE_PUBLIC_URL; the secret is never echoed', () => {
    expect(loadConfig({}).oidc).to.equal(null);
    expect(loadConfig({}).consolePublicUrl).to.equal(null);
    const oidc = { OIDC_ISSUER: 'https://apis.roblox.com/oauth/', OIDC_CLIENT_ID: 'abc', OIDC_CLIENT_SECRET: 's3cr3t-value', CONSOLE_PUBLIC_URL: 'https://mod.example.com' };
    expect(loadConfig(oidc).oidc).to.deep.equal({ issuer: 'https://apis.roblox.com/oauth/', clientId: 'abc', clientSecret: 's3cr3t-value' });
    const problem = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (e) {
        if (e instanceof ConfigError) return e.problems.join('\n');
      }
      return null;
    };
    expect(problem({ OIDC_ISSUER: 'https://idp.example' })).to.match(/go together/);
    expect(problem({ ...oidc, CONSOLE_PUBLIC_URL: '' })).to.match(/CONSOLE_PUBLIC_URL/);
    expect(problem({ ...oidc, CONSOLE_PUBLIC_URL: 'https://mod.example.com/path' })).to.match(/^CONSOLE_PUBLIC_URL /m);
    const bad = problem({ ...oidc, OIDC_CLIENT_SECRET: 'x'.repeat(2000) });
    expect(bad).to.match(/^OIDC_CLIENT_SECRET .*\[redacted\]/m);
  });
});
