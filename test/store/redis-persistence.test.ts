/**
 * Issue #22, boot check (src/store/redis-persistence.ts; README "Durability"): the mode read from real
 * private redis-servers started with each persistence setting, REDIS_DURABILITY=required refusing what
 * is below AOF everysec (in-process and as real API and worker processes), re-reads after a runtime
 * change and after a restart, and what /readyz and /metrics show. Never touches the shared Redis's
 * configuration: every instance here is private (test/support/private-redis.ts).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { Redis } from 'ioredis';
import { createApp } from '../../src/app.js';
import { log } from '../../src/log.js';
import { ApiMetrics } from '../../src/adapters/metrics/api-metrics.js';
import {
  classifyPersistence,
  DurabilityRefusedError,
  PersistenceMonitor,
  readPersistence,
  type PersistenceMode,
  type PersistenceReport,
} from '../../src/store/redis-persistence.js';
import { Harness } from '../support/harness.js';
import { PrivateRedis, type PrivateRedisOptions } from '../support/private-redis.js';
import { ROOT, Stack } from '../support/stack.js';

/** The private instances, one per mode, by the mode they must read as. */
const SETUPS: Record<Exclude<PersistenceMode, never>, PrivateRedisOptions> = {
  none: { appendonly: false, save: '' },
  rdb: { appendonly: false, save: '900 1 300 10' },
  'aof-everysec': { appendonly: true, appendfsync: 'everysec' },
  'aof-always': { appendonly: true, appendfsync: 'always' },
  'aof-no': { appendonly: true, appendfsync: 'no' },
  unknown: { appendonly: true, appendfsync: 'everysec', extraArgs: ['--rename-command', 'CONFIG', ''] },
};
const MODES = Object.keys(SETUPS) as PersistenceMode[];

/** Runs the boot check of `durability` against `url` the way src/server.ts does; resolves to what start() did. */
async function boot(url: string, durability: 'required' | 'best-effort'): Promise<{ report?: PersistenceReport; refused?: DurabilityRefusedError }> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const monitor = new PersistenceMonitor(client, { processName: 'test', redisUrl: url, durability, recheckSeconds: 0 });
  try {
    return { report: await monitor.start() };
  } catch (err) {
    if (err instanceof DurabilityRefusedError) return { refused: err };
    throw err;
  } finally {
    monitor.stop();
    client.disconnect();
  }
}

/** Runs `script` (src/server.ts or workers/index.ts) as the npm scripts do; resolves with its exit code and output. */
function runEntry(script: string, env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(path.join(ROOT, 'node_modules/.bin/node'), ['--import', 'tsx', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The JSON log lines of `output`. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('Redis persistence boot check (issue #22)', function () {
  this.timeout(120_000);
  const instances = {} as Record<PersistenceMode, PrivateRedis>;
  const wasSilent = log.silent;

  before(async () => {
    // The monitors here log their readings (warn and error lines by design); the processes' lines are
    // checked in their own output below.
    log.silent = true;
    await Promise.all(MODES.map(async (m) => (instances[m] = await PrivateRedis.create(SETUPS[m]))));
  });
  after(async () => {
    log.silent = wasSilent;
    await Promise.all(Object.values(instances).map((r) => r.destroy()));
  });

  describe('classifyPersistence', () => {
    it('prefers AOF over snapshots and reads appendfsync; save "" without AOF is none', () => {
      expect(classifyPersistence({ appendonly: 'yes', appendfsync: 'always', save: '3600 1' })).to.equal('aof-always');
      expect(classifyPersistence({ appendonly: 'yes', appendfsync: 'everysec', save: '' })).to.equal('aof-everysec');
      expect(classifyPersistence({ appendonly: 'yes', appendfsync: 'no', save: '' })).to.equal('aof-no');
      expect(classifyPersistence({ appendonly: 'no', appendfsync: 'always', save: '3600 1' })).to.equal('rdb');
      expect(classifyPersistence({ appendonly: 'no', appendfsync: 'everysec', save: '' })).to.equal('none');
      expect(classifyPersistence({ appendonly: 'no', appendfsync: 'everysec', save: null })).to.equal('none');
      expect(classifyPersistence({ appendonly: null, appendfsync: null, save: null })).to.equal('unknown');
    });
  });

  describe('readPersistence against redis-servers started with each setting', () => {
    for (const mode of MODES) {
      it(`reads ${mode}`, async () => {
        const client = new Redis(instances[mode].url);
        try {
          const r = await readPersistence(client);
          expect(r.mode).to.equal(mode);
          expect(r.durable).to.equal(mode === 'aof-everysec' || mode === 'aof-always');
          expect(r.checkedAt).to.be.a('string');
          if (mode === 'unknown') expect(r.detail).to.match(/CONFIG GET refused: ERR unknown command/);
          else expect(r.detail).to.equal(undefined);
          if (mode === 'rdb') expect(r.save).to.equal('900 1 300 10');
        } finally {
          client.disconnect();
        }
      });
    }

    it('throws (does not report a mode) when Redis cannot be reached', async () => {
      const r = await PrivateRedis.create(SETUPS['aof-always']);
      await r.destroy();
      const client = new Redis(r.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
      client.on('error', () => undefined);
      let err: unknown;
      await readPersistence(client).catch((e: unknown) => (err = e));
      client.disconnect();
      expect(err).to.be.instanceOf(Error);
    });
  });

  describe('REDIS_DURABILITY=required', () => {
    const fixes: Record<string, RegExp> = {
      none: /keeps nothing on disk \(appendonly no, save ""\).*appendonly yes.*REDIS_DURABILITY=best-effort/,
      rdb: /only RDB snapshots \(save "900 1 300 10".*appendonly yes.*REDIS_DURABILITY=best-effort/,
      'aof-no': /appendfsync no.*set appendfsync everysec.*REDIS_DURABILITY=best-effort/,
      unknown: /does not let this process read its persistence \(CONFIG GET refused.*set REDIS_DURABILITY=best-effort/,
    };
    for (const [mode, fix] of Object.entries(fixes)) {
      it(`refuses ${mode}, naming the setting to change`, async () => {
        const { refused } = await boot(instances[mode as PersistenceMode].url, 'required');
        expect(refused, 'refused').to.be.instanceOf(DurabilityRefusedError);
        expect(refused!.report.mode).to.equal(mode);
        expect(refused!.message).to.match(/^refusing to start: REDIS_DURABILITY=required, but Redis at 127\.0\.0\.1:\d+ /);
        expect(refused!.message).to.match(fix);
      });
    }
    for (const mode of ['aof-everysec', 'aof-always'] as const) {
      it(`starts on ${mode}`, async () => {
        const { report, refused } = await boot(instances[mode].url, 'required');
        expect(refused).to.equal(undefined);
        expect(report!.mode).to.equal(mode);
      });
    }

    it('best-effort starts on every mode and reports it', async () => {
      for (const mode of MODES) {
        const { report, refused } = await boot(instances[mode].url, 'best-effort');
        expect(refused, mode).to.equal(undefined);
        expect(report!.mode).to.equal(mode);
      }
    });
  });

  describe('re-reads', () => {
    it('sees a CONFIG SET at runtime on refresh, and reports the change once', async () => {
      const r = await PrivateRedis.create(SETUPS['aof-everysec']);
      const client = new Redis(r.url);
      const changes: PersistenceMode[] = [];
      const monitor = new PersistenceMonitor(client, { processName: 'test', redisUrl: r.url, durability: 'best-effort', recheckSeconds: 0, onChange: (x) => changes.push(x.mode) });
      try {
        await monitor.start();
        await client.call('CONFIG', 'SET', 'appendfsync', 'always');
        expect((await monitor.refresh()).mode).to.equal('aof-always');
        await client.call('CONFIG', 'SET', 'appendonly', 'no');
        expect((await monitor.refresh()).mode).to.equal('none');
        expect((await monitor.refresh()).mode).to.equal('none');
        expect(changes).to.deep.equal(['aof-everysec', 'aof-always', 'none']);
      } finally {
        monitor.stop();
        client.disconnect();
        await r.destroy();
      }
    });

    it('reads again when the client reconnects to a Redis restarted with other settings', async () => {
      const r = await PrivateRedis.create(SETUPS['aof-everysec']);
      const client = new Redis(r.url, { retryStrategy: () => 100 });
      client.on('error', () => undefined);
      const monitor = new PersistenceMonitor(client, { processName: 'test', redisUrl: r.url, durability: 'best-effort', recheckSeconds: 0 });
      try {
        expect((await monitor.start()).mode).to.equal('aof-everysec');
        await r.stop();
        await r.start({ appendonly: false, save: '' });
        const until = Date.now() + 20_000;
        while (monitor.current.mode !== 'none' && Date.now() < until) await new Promise((res) => setTimeout(res, 100));
        expect(monitor.current.mode).to.equal('none');
      } finally {
        monitor.stop();
        client.disconnect();
        await r.destroy();
      }
    });
  });

  describe('/readyz and /metrics', () => {
    it('/readyz carries the reading; under required a later reading below AOF everysec answers 503', async () => {
      const r = await PrivateRedis.create(SETUPS['aof-everysec']);
      const h = new Harness({ REDIS_URL: r.url });
      const metrics = new ApiMetrics({ defaultMetrics: false });
      const monitor = new PersistenceMonitor(h.redis, { processName: 'test', redisUrl: r.url, durability: 'required', recheckSeconds: 0, onChange: (x) => metrics.setRedisPersistence(x.mode) });
      try {
        await monitor.start();
        const app = createApp({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, verifier: h.verifier, metrics, persistence: monitor });
        const ok = await request(app).get('/readyz');
        expect(ok.status).to.equal(200);
        expect(ok.body.redisPersistence).to.include({ mode: 'aof-everysec', durable: true, durability: 'required' });
        expect(ok.body.redisPersistence.checkedAt).to.be.a('string');
        const text = await metrics.registry.metrics();
        expect(text).to.include('gis_redis_persistence{mode="aof-everysec"} 1');
        expect(text).to.include('gis_redis_persistence{mode="none"} 0');

        await h.redis.call('CONFIG', 'SET', 'appendonly', 'no');
        await monitor.refresh();
        const down = await request(app).get('/readyz');
        expect(down.status).to.equal(503);
        expect(down.body.error.code).to.equal('unavailable');
        expect(down.body.error.message).to.equal('not ready: redis persistence is none, below REDIS_DURABILITY=required');
        expect(down.body.dependencies).to.deep.equal({ redis: 'up', postgres: 'up' });
        expect(down.body.redisPersistence).to.include({ mode: 'none', durable: false });
        const after = await metrics.registry.metrics();
        expect(after).to.include('gis_redis_persistence{mode="none"} 1');
        expect(after).to.include('gis_redis_persistence{mode="aof-everysec"} 0');
      } finally {
        monitor.stop();
        await h.close();
        await r.destroy();
      }
    });

    it('/readyz under best-effort stays 200 on a Redis without persistence and says so', async () => {
      const h = new Harness({ REDIS_URL: instances.none.url });
      const monitor = new PersistenceMonitor(h.redis, { processName: 'test', redisUrl: instances.none.url, durability: 'best-effort', recheckSeconds: 0 });
      try {
        await monitor.start();
        const app = createApp({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, verifier: h.verifier, persistence: monitor });
        const res = await request(app).get('/readyz');
        expect(res.status).to.equal(200);
        expect(res.body.redisPersistence).to.include({ mode: 'none', durable: false, durability: 'best-effort' });
      } finally {
        monitor.stop();
        await h.close();
      }
    });
  });

  describe('the real processes', () => {
    it('API and workers exit 1 under required on a Redis without persistence, with one line naming the fix', async () => {
      const env = { REDIS_URL: instances.none.url, REDIS_DURABILITY: 'required', LOG_LEVEL: 'info', PORT: '0', CONSOLE_PORT: '0' };
      const [api, workers] = await Promise.all([runEntry('src/server.ts', env), runEntry('workers/index.ts', env)]);
      for (const [name, run] of [['api', api], ['workers', workers]] as const) {
        expect(run.code, `${name}: ${run.output}`).to.equal(1);
        const lines = jsonLines(run.output);
        const reading = lines.filter((l) => l.message === 'redis persistence');
        expect(reading, name).to.have.length(1);
        expect(reading[0]).to.include({ process: name, mode: 'none', durable: false, appendonly: 'no', save: '', durability: 'required', level: 'error' });
        const refusal = lines.filter((l) => String(l.message).startsWith('refusing to start'));
        expect(refusal, name).to.have.length(1);
        expect(refusal[0]!.message).to.match(/REDIS_DURABILITY=required.*appendonly yes/);
        expect(lines.some((l) => l.message === 'game listener up' || l.message === 'workers up'), name).to.equal(false);
      }
    });

    it('under required on AOF everysec: one log line per process, /readyz and /metrics show aof-everysec', async () => {
      const stack = await Stack.start({ env: { REDIS_URL: instances['aof-everysec'].url, REDIS_DURABILITY: 'required', LOG_LEVEL: 'info' } });
      try {
        const ready = await fetch(`${stack.url}/readyz`);
        expect(ready.status).to.equal(200);
        expect(((await ready.json()) as { redisPersistence: unknown }).redisPersistence).to.include({ mode: 'aof-everysec', durable: true, durability: 'required' });
        const metrics = await fetch(`${stack.consoleUrl}/metrics`, { headers: { Authorization: `Bearer ${stack.consoleToken}` } });
        const text = await metrics.text();
        expect(text).to.include('gis_redis_persistence{mode="aof-everysec"} 1');
        for (const other of ['aof-always', 'aof-no', 'rdb', 'none', 'unknown']) expect(text).to.include(`gis_redis_persistence{mode="${other}"} 0`);
        const until = Date.now() + 20_000;
        const readings = () => stack.output.filter((l) => l.includes('"message":"redis persistence"'));
        while (readings().length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
        const parsed = readings().map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>);
        expect(parsed.map((l) => l.process).sort()).to.deep.equal(['api', 'workers']);
        for (const l of parsed) expect(l).to.include({ level: 'info', mode: 'aof-everysec', appendonly: 'yes', appendfsync: 'everysec', durable: true });
      } finally {
        await stack.stop();
      }
    });
  });
});
