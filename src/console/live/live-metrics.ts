/**
 * Prometheus view of the console's live feed (src/console/live/live-hub.ts), read at scrape time:
 * `gis_console_live_subscribers` (open streams), `gis_console_live_games` (games watched),
 * `gis_console_live_reads_total` (XREAD calls of the process's one reader) and
 * `gis_console_live_builds_total{view}` (views rebuilt: one set of reads each, whatever the number of
 * open consoles).
 */
import { Gauge, type Registry } from 'prom-client';
import type { LiveHub } from './live-hub.js';

/** Registers the gauges on `registry`. */
export function registerLiveMetrics(registry: Registry, hub: LiveHub): void {
  new Gauge({ name: 'gis_console_live_subscribers', help: 'Open console live streams in this process', registers: [registry], collect() { this.set(hub.stats().subscribers); } });
  new Gauge({ name: 'gis_console_live_games', help: 'Games with at least one open console live stream in this process', registers: [registry], collect() { this.set(hub.stats().games); } });
  new Gauge({ name: 'gis_console_live_reads_total', help: 'XREAD calls of the live feed reader of this process', registers: [registry], collect() { this.set(hub.stats().reads); } });
  new Gauge({
    name: 'gis_console_live_builds_total',
    help: 'Live views rebuilt (one set of Redis/Postgres reads each), by view',
    labelNames: ['view'],
    registers: [registry],
    collect() {
      for (const [view, n] of Object.entries(hub.stats().builds)) this.set({ view }, n);
    },
  });
}
