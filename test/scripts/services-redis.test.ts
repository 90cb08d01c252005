/**
 * Issue #22, default stack (scripts/services/ `up`): a Redis without durable persistence is never
 * adopted silently. Runs against private redis-servers given as an explicit REDIS_URL, the path that
 * starts nothing and writes nothing under .data/ (the default-URL path, which starts the project-local
 * AOF Redis beside a volatile one, is exercised by `npm run demo` on this machine). The settings that
 * project-local Redis starts with are checked on one started in a temporary directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ServiceError } from '../../scripts/services/common.js';
import { describePersistence, ensureRedis, startLocalRedis } from '../../scripts/services/redis.js';
import { freePort } from '../../scripts/support/free-port.js';
import type { Targets } from '../../scripts/services/targets.js';
import { PrivateRedis } from '../support/private-redis.js';

function targets(redisUrl: string): Targets {
  return { redisUrl, redisExplicit: true, databaseUrl: 'postgresql://unused/x', databaseExplicit: true, databaseVar: 'DATABASE_URL' };
}

describe('services:up and Redis persistence (issue #22)', function () {
  this.timeout(30_000);
  let volatile: PrivateRedis;
  let durable: PrivateRedis;

  before(async () => {
    [volatile, durable] = await Promise.all([PrivateRedis.create({ appendonly: false, save: '' }), PrivateRedis.create({ appendonly: true, appendfsync: 'everysec' })]);
  });
  after(async () => {
    await Promise.all([volatile.destroy(), durable.destroy()]);
  });

  it('refuses an explicit REDIS_URL without persistence, naming the setting and --allow-volatile-redis', async () => {
    let err: unknown;
    await ensureRedis(targets(volatile.url), { test: false, allowVolatile: false }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(ServiceError);
    const message = (err as ServiceError).message;
    expect(message).to.include(`${volatile.url} answers, persistence none (appendonly no, save "")`);
    expect(message).to.include('CONFIG SET appendonly yes');
    expect(message).to.include('--allow-volatile-redis');
  });

  it('uses it with --allow-volatile-redis, and says so', async () => {
    const choice = await ensureRedis(targets(volatile.url), { test: false, allowVolatile: true });
    expect(choice.url).to.equal(volatile.url);
    expect(choice.persistence.mode).to.equal('none');
    expect(choice.message).to.match(/WARNING: using it anyway \(--allow-volatile-redis\)/);
  });

  it('uses it for the tests (--test), naming its persistence', async () => {
    const choice = await ensureRedis(targets(volatile.url), { test: true, allowVolatile: false });
    expect(choice.persistence.mode).to.equal('none');
    expect(choice.message).to.include('persistence none (appendonly no, save ""); used by the tests anyway');
  });

  it('adopts a Redis with AOF everysec as it is', async () => {
    const choice = await ensureRedis(targets(durable.url), { test: false, allowVolatile: false });
    expect(choice.url).to.equal(durable.url);
    expect(choice.persistence.mode).to.equal('aof-everysec');
    expect(describePersistence(choice.persistence)).to.equal('persistence aof-everysec');
  });

  it('starts the project-local Redis with AOF everysec, no RDB snapshots and noeviction', async () => {
    // redis-server's default save points would fork a snapshot every 60 s under load (docs/benchmarks.md "No RDB snapshots")
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gis-services-redis-'));
    const port = await freePort();
    const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await startLocalRedis({ host: '127.0.0.1', port, dir });
      const get = async (name: string) => (await redis.config('GET', name))[1];
      expect(await get('appendonly')).to.equal('yes');
      expect(await get('appendfsync')).to.equal('everysec');
      expect(await get('save')).to.equal('');
      expect(await get('maxmemory-policy')).to.equal('noeviction');
    } finally {
      await redis.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
      redis.disconnect();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
