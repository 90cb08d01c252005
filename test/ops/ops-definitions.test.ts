/**
 * The operator's definitions name only what the service exports (issue #17 "Operating it"): every PromQL
 * expression of the alert rules (ops/prometheus/alerts.yml) and of the Grafana dashboard
 * (ops/grafana/dashboard.json) reads metrics that an API process's /metrics actually lists. The process is
 * built as src/server.ts builds it (game app with metrics and admission control, console listener with
 * the scrape-time and live-feed metrics) over the real Redis and Postgres, and scraped over HTTP; the
 * worker processes' endpoint (src/adapters/metrics/worker-metrics.ts, job gis-workers) is built as workers/index.ts
 * builds it and its names count as exported too.
 * promtool checks the rules' syntax and behaviour (`npm run lint:alerts`); this test checks their names.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import request from 'supertest';
import { load } from 'js-yaml';
import { Harness } from '../support/harness.js';
import { admissionFor, createApp } from '../../src/app.js';
import { ApiMetrics } from '../../src/adapters/metrics/api-metrics.js';
import { startConsole, type ConsoleListener } from '../../src/adapters/console/console-server.js';
import { serveWorkerMetrics, WorkerMetrics, type MetricsServer } from '../../src/adapters/metrics/worker-metrics.js';

const TOKEN = 'test-operator-token-0123456789abcdef';
/** Series Prometheus adds itself to every scrape target, not exported by the service. */
const PROMETHEUS_OWN = new Set(['up']);
/** PromQL words that look like metric names: aggregation modifiers, set and logical operators, `bool`, `offset`. */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * Metric names an expression reads: identifiers that are not function calls, keywords, label names of
 * grouping clauses, numbers or durations. Strings, label matchers `{…}`, ranges `[…]` and grouping lists
 * `by (…)` are removed first, so a label value or label name is never taken for a metric.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w.])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (call || KEYWORDS.has(name!.toLowerCase())) continue;
    names.add(name!);
  }
  return [...names];
}

/**
 * Series names a Prometheus text exposition makes available: every `# TYPE` family (so counters with no
 * sample yet count too), with `_bucket`, `_sum`, `_count` for histograms and `_sum`, `_count` for summaries.
 */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name! + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name! + s);
  }
  return names;
}

interface RuleFile { groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[] }
interface Dashboard { panels: { id: number; title: string; type: string; datasource?: unknown; targets?: { expr: string; refId: string }[] }[] }

const alerts = load(readFileSync(new URL('../../ops/prometheus/alerts.yml', import.meta.url), 'utf8')) as RuleFile;
const dashboard = JSON.parse(readFileSync(new URL('../../ops/grafana/dashboard.json', import.meta.url), 'utf8')) as Dashboard;

describe('alert rules and dashboard name only exported metrics', () => {
  const h = new Harness({ CONSOLE_PORT: '0', CONSOLE_HOST: '127.0.0.1', CONSOLE_TOKEN: TOKEN });
  let listener: ConsoleListener;
  let exported: Set<string>;
  let exposition: string;
  let closeAdmission: () => void;
  const metrics = new ApiMetrics();
  let workerMetrics: WorkerMetrics;
  let workerServer: MetricsServer;

  before(async () => {
    metrics.setRedisPersistence('none');
    const admission = admissionFor({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, verifier: h.verifier, metrics });
    closeAdmission = () => admission.close();
    createApp({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, verifier: h.verifier, metrics, admission });
    listener = await startConsole({ config: h.config, keySpace: h.keySpace, redis: h.redis, db: h.db, metrics });
    const res = await request(`http://127.0.0.1:${listener.port}`).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(res.status).to.equal(200);
    exported = exportedNames(res.text);
    exposition = res.text;
    workerMetrics = new WorkerMetrics();
    workerMetrics.setRedisPersistence('none');
    workerMetrics.watchStreams({ db: h.db, redis: h.redis, keySpace: h.keySpace });
    workerServer = await serveWorkerMetrics(workerMetrics, '127.0.0.1', 0, () => ({}));
    const workers = await request(`http://127.0.0.1:${workerServer.port}`).get('/metrics');
    expect(workers.status).to.equal(200);
    for (const name of exportedNames(workers.text)) exported.add(name);
  });
  after(async () => {
    await workerServer.close();
    await workerMetrics.close();
    closeAdmission();
    await listener.close();
    await h.close();
  });

  it('finds metric names in PromQL and nothing else', () => {
    expect(metricNames('histogram_quantile(0.99, sum by (le) (rate(gis_x_bucket{route="/a b",status=~"5.."}[5m]))) > 0.25').sort()).to.deep.equal(['gis_x_bucket']);
    expect(metricNames('max by (stream) (a) > 10 and max by (stream) (deriv(b[10m])) > 0 unless on (x) c offset 5m').sort()).to.deep.equal(['a', 'b', 'c']);
    expect(metricNames('up{job="gis-api"} == 0')).to.deep.equal(['up']);
  });

  it('every alert rule reads metrics /metrics lists', () => {
    const rules = alerts.groups.flatMap((g) => g.rules);
    expect(rules.length).to.be.greaterThan(10);
    for (const rule of rules) {
      const names = metricNames(rule.expr);
      expect(names, `${rule.alert}: reads no metric`).to.have.length.above(0);
      for (const name of names) expect(exported.has(name) || PROMETHEUS_OWN.has(name), `${rule.alert} reads ${name}, which the service does not export`).to.equal(true);
    }
  });

  it('every dashboard panel query reads metrics /metrics lists; panel ids are unique', () => {
    const queries = dashboard.panels.filter((p) => p.type !== 'row');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).to.equal(dashboard.panels.length);
    for (const panel of queries) {
      expect(panel.targets, `panel ${panel.title} has no query`).to.have.length.above(0);
      expect(panel.datasource, `panel ${panel.title} has no datasource`).to.not.equal(undefined);
      for (const target of panel.targets!) {
        const names = metricNames(target.expr);
        expect(names, `${panel.title} ${target.refId}: reads no metric`).to.have.length.above(0);
        for (const name of names) expect(exported.has(name) || PROMETHEUS_OWN.has(name), `panel ${panel.title} reads ${name}, which the service does not export`).to.equal(true);
      }
    }
  });

  it('names metrics as Prometheus does: counters end _total and nothing else does; the HTTP status is `code`; no label grows with the fleet', () => {
    const types = [...exposition.matchAll(/^# TYPE (gis_\w+) (\w+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
    expect(types.length, 'gis_ metric families').to.be.greaterThan(20);
    for (const { name, type } of types) expect(name.endsWith('_total'), `${name} is a ${type}`).to.equal(type === 'counter');
    const labels = new Map(metrics.registry.getMetricsAsArray().map((m) => [(m as unknown as { name: string }).name, (m as unknown as { labelNames: string[] }).labelNames]));
    expect(labels.get('gis_http_requests_total')).to.deep.equal(['route', 'method', 'code']);
    expect(labels.get('gis_http_request_duration_seconds')).to.deep.equal(['route', 'method', 'code']);
    for (const [name, names] of labels) {
      if (!name.startsWith('gis_')) continue;
      for (const l of names) expect(['game', 'gameId', 'key', 'server', 'user', 'workspace'], `${name}{${l}}`).to.not.include(l);
    }
  });

  it('the dashboard shows every gis_ metric the service exports', () => {
    const shown = new Set(dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNames(t.expr))));
    const families = [...exported].filter((n) => n.startsWith('gis_') && !/_(bucket|sum|count)$/.test(n));
    const missing = families.filter((n) => !shown.has(n) && !shown.has(`${n}_bucket`));
    expect(missing, 'gis_ metrics with no dashboard panel').to.deep.equal([]);
  });
});
