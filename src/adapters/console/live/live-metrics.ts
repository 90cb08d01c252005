/**
 * Prometheus view of the console's live feed (src/adapters/console/live/live-hub.ts), read at scrape time:
 * gauges `gis_console_live_subscribers` (open streams) and `gis_console_live_games` (games watched), and
 * `gis_console_live_readers` (blocking reader connections: one on a single Redis, one per watched game on a
 * Cluster), counters `gis_console_live_reads_total` (XREAD calls of the process's readers) and
 * `gis_console_live_builds_total{view}` (views rebuilt: one set of reads each, whatever the number of open
 * consoles). The hub counts reads and builds since the process started, so the counters are set to its
 * totals at each scrape (they only grow; a restart is a counter reset, which rate() handles).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LiveHub } from './live-hub.js';

/** Registers the live-feed gauges and counters on `registry`. */
export function registerLiveMetrics(registry: Registry, hub: LiveHub): void {
  new Gauge({ name: 'gis_console_live_subscribers', help: 'Open console live streams in this process', registers: [registry], collect() { this.set(hub.stats().subscribers); } });
  new Gauge({ name: 'gis_console_live_games', help: 'Games with at least one open console live stream in this process', registers: [registry], collect() { this.set(hub.stats().games); } });
  new Gauge({ name: 'gis_console_live_readers', help: 'Blocking reader connections of the live feed in this process (one per watched game on a Redis Cluster)', registers: [registry], collect() { this.set(hub.stats().readers); } });
  new Counter({
    name: 'gis_console_live_reads_total',
    help: 'XREAD calls of the live feed readers of this process',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(hub.stats().reads);
    },
  });
  new Counter({
    name: 'gis_console_live_builds_total',
    help: 'Live views rebuilt (one set of Redis/Postgres reads each), by view',
    labelNames: ['view'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [view, n] of Object.entries(hub.stats().builds)) this.inc({ view }, n);
    },
  });
}
