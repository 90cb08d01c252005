/**
 * The scrape-time metrics the operator alerts read (issue #17 "Operating it", ops/prometheus/alerts.yml):
 * `gis_dependency_up` (a Redis or Postgres node down) and `gis_ingest_warnings_open` (games persistently
 * throttled), scraped from the console listener's /metrics against the real Redis and Postgres, and
 * against a Redis and a Postgres that do not answer (the scrape still answers, within its bound).
 */
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { Harness } from '../support/harness.js';
import { createConsoleApp } from '../../src/adapters/console/console-app.js';
import { createConsoleServices, type ConsoleServices } from '../../src/adapters/console/console-services.js';
import { ApiMetrics } from '../../src/adapters/metrics/api-metrics.js';
import { registerScrapeMetrics } from '../../src/adapters/metrics/scrape-metrics.js';
import { buildOpenApiDocument } from '../../src/adapters/openapi/openapi-document.js';
import { THROTTLING_WARNING } from '../../src/limits/ingest-health.js';
import { createRedis, type AppRedis } from '../../src/store/redis.js';
import { createDb, type Db } from '../../src/store/prisma.js';

const TOKEN = 'test-operator-token-0123456789abcdef';
/** Ports in this project's helper range where nothing listens (a node that is down). */
const DEAD_REDIS = 'redis://127.0.0.1:4498';
const DEAD_POSTGRES = 'postgresql://postgres@127.0.0.1:4497/gis';

/** The value of the one sample of `metric` with exactly `labels` in Prometheus text `text`, or undefined. */
function sample(text: string, metric: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** A console app whose /metrics carries the scrape-time metrics over `redis` and `db`. */
function consoleOver(h: Harness, redis: AppRedis, db: Db): { app: Express; close: () => Promise<void> } {
  const services: ConsoleServices = createConsoleServices({ db, redis, keySpace: h.keySpace });
  const metrics = new ApiMetrics({ defaultMetrics: false });
  const closeScrape = registerScrapeMetrics(metrics.registry, { db, redis, keySpace: h.keySpace, queueNames: ['{flush-events}'] });
  const app = createConsoleApp({ services, token: TOKEN, metrics: metrics.registry, openapi: buildOpenApiDocument() });
  return { app, close: async () => { await services.close(); await closeScrape(); } };
}

describe('operator metrics on /metrics', () => {
  const h = new Harness();
  after(() => h.close());

  const scrape = async (app: Express) => {
    const res = await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(res.status).to.equal(200);
    return res.text;
  };

  it('reports Redis and Postgres up (1) when both answer', async () => {
    const c = consoleOver(h, h.redis, h.db);
    try {
      const text = await scrape(c.app);
      expect(sample(text, 'gis_dependency_up', 'dependency="redis"')).to.equal(1);
      expect(sample(text, 'gis_dependency_up', 'dependency="postgres"')).to.equal(1);
    } finally {
      await c.close();
    }
  });

  it('reports Redis and Postgres down (0) when neither answers, and still answers 200', async () => {
    const redis = createRedis(DEAD_REDIS, { name: 'dead-redis' });
    const db = createDb(DEAD_POSTGRES, 1);
    const c = consoleOver(h, redis, db);
    try {
      const text = await scrape(c.app);
      expect(sample(text, 'gis_dependency_up', 'dependency="redis"')).to.equal(0);
      expect(sample(text, 'gis_dependency_up', 'dependency="postgres"')).to.equal(0);
      // The queue gauges wait for Redis to come back; the scrape gives up on them and counts it. The
      // counter is rendered concurrently with the sources it counts, so the count shows from the next scrape.
      expect(sample(await scrape(c.app), 'gis_scrape_errors_total', 'source="queues"')).to.be.at.least(1);
    } finally {
      await c.close();
      redis.disconnect();
      await db.$disconnect();
    }
  });

  it('counts open ingest health warnings by kind: a persistently throttled game is one more, a resolved one is not', async () => {
    const c = consoleOver(h, h.redis, h.db);
    try {
      // The test database is shared by the test files of this run: compare with the count before.
      const before = sample(await scrape(c.app), 'gis_ingest_warnings_open', `kind="${THROTTLING_WARNING}"`);
      expect(before).to.be.a('number');
      const g = await h.game();
      const now = new Date();
      await h.db.ingestHealthWarning.create({ data: { gameId: g.gameId, kind: THROTTLING_WARNING, message: 'throttled for the test', firstAt: now, lastAt: now } });
      await h.db.ingestHealthWarning.create({ data: { gameId: g.gameId, kind: THROTTLING_WARNING, message: 'resolved for the test', firstAt: now, lastAt: now, resolvedAt: now } });
      expect(sample(await scrape(c.app), 'gis_ingest_warnings_open', `kind="${THROTTLING_WARNING}"`)).to.equal(before! + 1);
    } finally {
      await c.close();
    }
  });
});
