/**
 * Mocha root hooks: every test process talks to the test database (TEST_DATABASE_URL, default
 * postgresql://postgres@127.0.0.1:5432/gis_test, migrated by `npm test`'s pretest step) and to Redis
 * under a random key prefix, so tests never touch dev data. The prefix's keys are deleted afterwards;
 * each test file removes the workspaces it created (cascading to everything under them). Admission
 * control's event-loop lag signal is off (ADMISSION_MAX_LOOP_LAG_MS=0), and so is the flushers' yield to a
 * pressed API (FLUSH_YIELD_SECONDS=0), unless the environment sets them.
 */
import { randomBytes } from 'node:crypto';

process.env.DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/gis_test';
process.env.REDIS_PREFIX = `gistest-${randomBytes(4).toString('hex')}`;
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'error';
// Functional tests share a busy machine: the event-loop lag signal of admission control would shed their
// requests whenever another process takes the CPU. Off unless a run sets it; test/http/admission.test.ts
// builds its own controllers (in-flight, Redis queue and lag signals alike).
process.env.ADMISSION_MAX_LOOP_LAG_MS ??= '0';
// Likewise the flushers' yield to a pressed API (src/limits/flush-yield.ts): a test that keeps many
// requests in flight and then waits for its rows would wait out the hold. Off unless a run sets it;
// test/limits/flush-yield.test.ts builds its own.
process.env.FLUSH_YIELD_SECONDS ??= '0';
// Tests run on the shared Redis whatever its persistence (their data is disposable), so a
// REDIS_DURABILITY=required in the developer's shell must not stop the processes they start; the tests
// of the boot check pass `required` explicitly.
process.env.REDIS_DURABILITY = 'best-effort';
// Worker processes the tests start serve /metrics on any free port unless a test picks one: the default
// 3002 would collide between test files and with other runs on the machine.
process.env.WORKERS_METRICS_PORT ??= '0';

export const mochaHooks = {
  async afterAll(): Promise<void> {
    const { createRedis } = await import('../src/store/redis.js');
    const { deleteKeys } = await import('./support/redis-keys.js');
    // REDIS_URL may name a Redis Cluster (redis+cluster://…): deleteKeys scans every master.
    const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { name: 'test-cleanup' });
    await deleteKeys(redis, `${process.env.REDIS_PREFIX}:*`);
    await redis.quit();
  },
};
