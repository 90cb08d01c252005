/**
 * scripts/bench/fleet-timeline.ts — `bench:fleet --timeline`: a step slice by slice (10 s, from the
 * fleet's first boot), the simulator's requests, refusals, timeouts and probe latency beside the CPU each
 * service process used in the same slice, as shares of the service core. A run's totals hide where its
 * refusals fell: in a 5000 × 20 run about half came in the join storm, with the API and Redis holding
 * the core, and half in the later waves of heartbeats, each followed by the flush of the events they
 * carried (docs/benchmarks.md, "The 5000 × 20 run slice by slice"). Not a test.
 */
import { processTreeCpuSeconds, type ProbeSlice, type TimelineSummary } from '@gis/simulator';

/** One slice of a step: the simulator's figures and each service process's share of the core. */
export interface TimelineRow {
  fromSeconds: number;
  requests: number;
  refused: number;
  timeouts: number;
  /** The fleet processes' longest stall (a timer late by this much) and their GC pauses in the slice, ms. */
  fleetLagMaxMs: number;
  fleetGcMs: number;
  probe: ProbeSlice | null;
  /** Share of one core (0–1) each watched process used in the slice, by name; null where not sampled. */
  coreShare: Record<string, number | null>;
}

/** Epoch ms and each watched process tree's CPU seconds (null: unreadable) at that moment. */
type Sample = [number, (number | null)[]];

/** Reads the CPU of each watched process tree once a second while running. */
export class CpuSampler {
  private readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | null = null;

  /** @param pids the watched processes (each with its descendants), in the order of the names used later. */
  constructor(private readonly pids: readonly number[]) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
  }

  /**
   * Each process's share of one core over [fromMs, toMs): the CPU between the samples nearest its ends
   * divided by the time between them; null when fewer than two samples fall in or at the slice.
   */
  sharesBetween(fromMs: number, toMs: number): (number | null)[] {
    const inside = this.samples.filter(([t]) => t >= fromMs - 500 && t <= toMs + 500);
    const first = inside[0];
    const last = inside.at(-1);
    if (!first || !last || last[0] - first[0] < 500) return this.pids.map(() => null);
    const seconds = (last[0] - first[0]) / 1000;
    return this.pids.map((_, i) => {
      const a = first[1][i];
      const b = last[1][i];
      return a === null || a === undefined || b === null || b === undefined ? null : Math.round(((b - a) / seconds) * 100) / 100;
    });
  }

  private sample(): void {
    this.samples.push([Date.now(), this.pids.map((pid) => processTreeCpuSeconds(pid))]);
  }
}

/** The step's rows: every slice of the simulator's timeline with the service's CPU in it. */
export function timelineRows(sim: TimelineSummary, cpu: CpuSampler, names: readonly string[]): TimelineRow[] {
  return sim.slices.map((s) => {
    const fromMs = sim.t0Ms + s.fromSeconds * 1000;
    const shares = cpu.sharesBetween(fromMs, fromMs + sim.sliceSeconds * 1000);
    return {
      fromSeconds: s.fromSeconds,
      requests: s.fleet.attempts,
      refused: s.fleet.refused,
      timeouts: s.fleet.timeouts,
      fleetLagMaxMs: s.fleet.lagMaxMs,
      fleetGcMs: s.fleet.gcMs,
      probe: s.probe,
      coreShare: Object.fromEntries(names.map((n, i) => [n, shares[i] ?? null])),
    };
  });
}

/** The rows as a Markdown table. */
export function timelineTable(rows: readonly TimelineRow[], names: readonly string[], sliceSeconds: number): string {
  const ms = (v: number | null | undefined) => (v === null || v === undefined ? '–' : String(Math.round(v)));
  const share = (v: number | null | undefined) => (v === null || v === undefined ? '–' : v.toFixed(2));
  const head = [`from s (${sliceSeconds} s slices)`, 'requests', 'refused', 'timeouts', 'simulator stall / GC ms', 'probe p50 / p99 / max ms', 'probe refused', ...names.map((n) => `${n} core`), 'service core'];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const r of rows) {
    const total = names.reduce((n, k) => n + (r.coreShare[k] ?? 0), 0);
    const probe = r.probe ? `${ms(r.probe.p50)} / ${ms(r.probe.p99)} / ${ms(r.probe.max)}` : '–';
    lines.push(`| ${[r.fromSeconds, r.requests, r.refused, r.timeouts, `${r.fleetLagMaxMs} / ${r.fleetGcMs}`, probe, r.probe?.refused ?? '–', ...names.map((n) => share(r.coreShare[n])), share(total)].join(' | ')} |`);
  }
  return lines.join('\n');
}
