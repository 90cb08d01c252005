/**
 * What every simulator process measures (issue #15 item 4), in forms the coordinator can merge:
 * - {@link RequestStats}: per endpoint, every HTTP attempt by status, its latency in a {@link Histogram}
 *   per run phase (idle before the fleet starts, boot burst, steady state, tail after the measured
 *   window), and for refusals (429/503) the `Retry-After` values seen;
 * - {@link ProcessMeter}: the process's own event-loop delay (perf_hooks `monitorEventLoopDelay`) and CPU
 *   time over the measured window, so a run whose generator lagged can be declared void.
 * Not part of the service.
 */
import { constants, monitorEventLoopDelay, performance, PerformanceObserver, type ELDHistogram } from 'node:perf_hooks';
import { GAME_PATHS, type AttemptInfo } from '@gis/client';
import { Histogram, type HistogramData, type LatencySummary } from './histogram.js';

export const ENDPOINTS = ['heartbeat', 'bansCheck', 'doorsCheck', 'doorsBulk', 'doorsManifest'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];
export const PHASES = ['warmup', 'idle', 'boot', 'steady', 'tail'] as const;
export type Phase = (typeof PHASES)[number];

const BY_PATH: ReadonlyMap<string, Endpoint> = new Map([
  [GAME_PATHS.heartbeat, 'heartbeat'],
  [GAME_PATHS.bansCheck, 'bansCheck'],
  [GAME_PATHS.doorsCheck, 'doorsCheck'],
  [GAME_PATHS.doorsBulk, 'doorsBulk'],
  [GAME_PATHS.doorsManifest, 'doorsManifest'],
]);

/**
 * The run's timeline, epoch ms: `idleFromMs` the probe's baseline starts (before it: the probe's own
 * warm-up, not reported); `t0` the first server may boot; `bootEndMs` = t0 + ramp + one interval (every
 * server booted and through its first heartbeat cycle, most joins done); `endMs` the end of the measured
 * window (after it: shutdown, final heartbeats).
 */
export interface Timeline {
  idleFromMs: number;
  t0: number;
  bootEndMs: number;
  endMs: number;
}

/** The phase of a request started at `startMs`. */
export function phaseOf(t: Timeline, startMs: number): Phase {
  if (startMs < t.idleFromMs) return 'warmup';
  if (startMs < t.t0) return 'idle';
  if (startMs < t.bootEndMs) return 'boot';
  if (startMs < t.endMs) return 'steady';
  return 'tail';
}

/** One endpoint's attempts as sent between processes. */
export interface EndpointData {
  attempts: number;
  /** HTTP status as a string, or `timeout` / `network` (no response: outcome unknown). */
  byStatus: Record<string, number>;
  latency: Record<Phase, HistogramData>;
  /** Retry-After seconds of 429/503 answers → count; `none` for a refusal without the header. */
  retryAfter: Record<string, number>;
}

export type RequestStatsData = Record<Endpoint, EndpointData>;

/** Width of one slice of a run's timeline, ms: `simulate --json`'s `timeline`, `bench:fleet --timeline`. */
export const SLICE_MS = 10_000;

/** The attempts of all endpoints started in one slice: refusals are 429/503, timeouts have no answer. */
export interface SliceData {
  attempts: number;
  refused: number;
  timeouts: number;
  latency: HistogramData;
  /** The longest a timer of the process waited past its time in the slice (its stall), ms. */
  lagMaxMs: number;
  /** Garbage-collection pauses of the process in the slice, ms. */
  gcMs: number;
}

/** Slices by index (slice i starts at t0 + i × {@link SLICE_MS}), as sent between processes. */
export type SlicesData = Record<string, SliceData>;

class Slice {
  attempts = 0;
  refused = 0;
  timeouts = 0;
  lagMaxMs = 0;
  gcMs = 0;
  readonly latency = new Histogram();

  toJSON(): SliceData {
    return { attempts: this.attempts, refused: this.refused, timeouts: this.timeouts, latency: this.latency.toJSON(), lagMaxMs: this.lagMaxMs, gcMs: Math.round(this.gcMs) };
  }

  add(d: SliceData): void {
    this.attempts += d.attempts;
    this.refused += d.refused;
    this.timeouts += d.timeouts;
    this.latency.add(d.latency);
    this.lagMaxMs = Math.max(this.lagMaxMs, d.lagMaxMs);
    this.gcMs += d.gcMs;
  }
}

class EndpointStats {
  attempts = 0;
  readonly byStatus: Record<string, number> = {};
  readonly latency = Object.fromEntries(PHASES.map((p) => [p, new Histogram()])) as Record<Phase, Histogram>;
  readonly retryAfter: Record<string, number> = {};

  toJSON(): EndpointData {
    return {
      attempts: this.attempts,
      byStatus: { ...this.byStatus },
      latency: Object.fromEntries(PHASES.map((p) => [p, this.latency[p].toJSON()])) as Record<Phase, HistogramData>,
      retryAfter: { ...this.retryAfter },
    };
  }

  add(d: EndpointData): void {
    this.attempts += d.attempts;
    addCounts(this.byStatus, d.byStatus);
    addCounts(this.retryAfter, d.retryAfter);
    for (const p of PHASES) this.latency[p].add(d.latency[p]);
  }
}

/** Adds the counts of `from` into `into`. */
export function addCounts(into: Record<string, number>, from: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
  return into;
}

/** Every attempt of one process (or, merged, of the fleet). */
export class RequestStats {
  readonly endpoints = Object.fromEntries(ENDPOINTS.map((e) => [e, new EndpointStats()])) as Record<Endpoint, EndpointStats>;
  /** Attempts started from t0 on, by {@link SLICE_MS} slice: where in the run refusals and slow answers fell. */
  readonly slices = new Map<number, Slice>();

  constructor(private readonly timeline?: Timeline) {}

  /** Records one attempt, as reported by the transport's `onAttempt`. */
  record(a: AttemptInfo): void {
    const q = a.path.indexOf('?');
    const endpoint = BY_PATH.get(q < 0 ? a.path : a.path.slice(0, q));
    if (!endpoint || !this.timeline) return;
    const s = this.endpoints[endpoint];
    s.attempts++;
    s.byStatus[a.outcome] = (s.byStatus[a.outcome] ?? 0) + 1;
    const startMs = Date.now() - a.latencyMs;
    s.latency[phaseOf(this.timeline, startMs)].record(a.latencyMs);
    const refused = a.outcome === '429' || a.outcome === '503';
    if (startMs >= this.timeline.t0) this.recordSlice(Math.floor((startMs - this.timeline.t0) / SLICE_MS), a, refused);
    if (refused) {
      const ra = a.headers?.get('retry-after');
      const k = ra && /^\d+$/.test(ra.trim()) ? ra.trim() : 'none';
      s.retryAfter[k] = (s.retryAfter[k] ?? 0) + 1;
    }
  }

  /**
   * Notes that a timer of this process ran `lateMs` ms past its time at `atMs` (epoch ms): a stall, after
   * which what waited leaves together (src/timer-wheel.ts reports it).
   */
  noteLag(atMs: number, lateMs: number): void {
    const i = this.sliceOf(atMs);
    if (i === null) return;
    const slice = this.sliceAt(i);
    slice.lagMaxMs = Math.max(slice.lagMaxMs, Math.round(lateMs));
  }

  /** Notes a garbage-collection pause of `ms` ms that began at `atMs` (epoch ms). */
  noteGc(atMs: number, ms: number): void {
    const i = this.sliceOf(atMs);
    if (i !== null) this.sliceAt(i).gcMs += ms;
  }

  /** The slice index of `atMs` (epoch ms); null before t0 or without a timeline. */
  private sliceOf(atMs: number): number | null {
    return this.timeline && atMs >= this.timeline.t0 ? Math.floor((atMs - this.timeline.t0) / SLICE_MS) : null;
  }

  private recordSlice(i: number, a: AttemptInfo, refused: boolean): void {
    const slice = this.sliceAt(i);
    slice.attempts++;
    if (refused) slice.refused++;
    if (a.outcome === 'timeout') slice.timeouts++;
    slice.latency.record(a.latencyMs);
  }

  /** {@link slices} in their transported form. */
  slicesJSON(): SlicesData {
    return Object.fromEntries([...this.slices].map(([i, slice]) => [String(i), slice.toJSON()]));
  }

  /** Adds another process's slices into these. */
  addSlices(data: SlicesData): this {
    for (const [k, d] of Object.entries(data)) this.sliceAt(Number(k)).add(d);
    return this;
  }

  private sliceAt(i: number): Slice {
    let slice = this.slices.get(i);
    if (!slice) this.slices.set(i, (slice = new Slice()));
    return slice;
  }

  /** All attempts so far. */
  get attempts(): number {
    return ENDPOINTS.reduce((n, e) => n + this.endpoints[e].attempts, 0);
  }

  /**
   * Attempts started in the measured window (phases boot and steady: each attempt lands in exactly one
   * phase's histogram), the requests a process's CPU over the window is divided by.
   */
  get windowAttempts(): number {
    return ENDPOINTS.reduce((n, e) => n + this.endpoints[e].latency.boot.count + this.endpoints[e].latency.steady.count, 0);
  }

  toJSON(): RequestStatsData {
    return Object.fromEntries(ENDPOINTS.map((e) => [e, this.endpoints[e].toJSON()])) as RequestStatsData;
  }

  add(d: RequestStatsData): this {
    for (const e of ENDPOINTS) this.endpoints[e].add(d[e]);
    return this;
  }

  /** Latency of one endpoint over some phases, merged. */
  latency(endpoint: Endpoint, phases: readonly Phase[]): LatencySummary {
    const h = new Histogram();
    for (const p of phases) h.add(this.endpoints[endpoint].latency[p]);
    return h.summary();
  }
}

/** A process's own health over the measured window. */
export interface ProcessReport {
  role: 'fleet' | 'probe' | 'coordinator';
  pid: number;
  /** Event-loop delay beyond the timer's 20 ms resolution (monitorEventLoopDelay), ms. */
  loopDelayMs: { p50: number; p99: number; max: number; mean: number };
  /** User + system CPU seconds over the measured window. */
  cpuSeconds: number;
  /** Of {@link cpuSeconds}: in the process itself (JavaScript, V8, libuv) and in the kernel (syscalls). */
  cpuUserSeconds: number;
  cpuSystemSeconds: number;
  /**
   * Voluntary context switches over the window (getrusage): each is the process going to sleep, i.e. one
   * wake-up of its event loop (or of a helper thread). Wake-ups cost far more CPU than the little work a
   * simulated request needs on a virtual machine, so this is what the simulator's batching keeps down.
   */
  wakeups: number;
  /**
   * Garbage-collection pauses over the window (perf_hooks 'gc' entries), ms: how many, their sum, the
   * longest, and the longest mark-compact (major) one. A long pause is a stall of the whole process, and
   * what its servers meant to send meanwhile leaves as one burst.
   */
  gc: { count: number; totalMs: number; maxMs: number; majorMaxMs: number };
  /** HTTP attempts started in the window. */
  requests: number;
}

/** A process's loop delay and GC pauses in one line: `loop p99 X ms, max Y ms, GC n pauses T ms (max M, major max J)`. */
export function describeLoopAndGc(p: Pick<ProcessReport, 'loopDelayMs' | 'gc'>): string {
  return `loop p99 ${p.loopDelayMs.p99} ms, max ${p.loopDelayMs.max} ms, GC ${p.gc.count} pauses ${p.gc.totalMs} ms (max ${p.gc.maxMs}, major max ${p.gc.majorMaxMs})`;
}

/**
 * Resolution of the event-loop delay histogram, ms: its timer's period. 20 rather than the default 10,
 * because each firing of that timer is one more wake-up of the process (see ./timer-wheel.ts for what a
 * wake-up costs); the delay is still measured to the microsecond, 50 times a second.
 */
const LOOP_RESOLUTION_MS = 20;

/**
 * Event-loop delay and CPU of this process between {@link begin} and {@link end}. `monitorEventLoopDelay`
 * records each interval of its timer, the resolution included (an idle process shows ~20 ms); the
 * figures here are the delay beyond it.
 */
export class ProcessMeter {
  private readonly loop: ELDHistogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  private cpu: NodeJS.CpuUsage | null = null;
  private switches = 0;
  private readonly gc = { count: 0, totalMs: 0, maxMs: 0, majorMaxMs: 0 };
  private readonly gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      this.onGc?.(performance.timeOrigin + e.startTime, e.duration);
      this.gc.count++;
      this.gc.totalMs += e.duration;
      this.gc.maxMs = Math.max(this.gc.maxMs, e.duration);
      if (((e as { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) this.gc.majorMaxMs = Math.max(this.gc.majorMaxMs, e.duration);
    }
  });
  private report: Omit<ProcessReport, 'role' | 'pid' | 'requests'> | null = null;

  /** @param onGc hears each GC pause while measuring: its start (epoch ms) and duration (ms). */
  constructor(private readonly onGc?: (atMs: number, ms: number) => void) {}

  begin(): void {
    this.loop.reset();
    this.loop.enable();
    this.cpu = process.cpuUsage();
    this.switches = process.resourceUsage().voluntaryContextSwitches;
    this.gcObserver.observe({ entryTypes: ['gc'] });
  }

  end(): void {
    if (this.report || !this.cpu) return;
    this.loop.disable();
    this.gcObserver.disconnect();
    const used = process.cpuUsage(this.cpu);
    const wakeups = process.resourceUsage().voluntaryContextSwitches - this.switches;
    const ms = (ns: number) => Math.max(0, Math.round((Number.isFinite(ns) ? ns : 0) / 1e4 - LOOP_RESOLUTION_MS * 100) / 100);
    this.report = {
      loopDelayMs: { p50: ms(this.loop.percentile(50)), p99: ms(this.loop.percentile(99)), max: ms(this.loop.max), mean: ms(this.loop.mean) },
      cpuSeconds: Math.round((used.user + used.system) / 1e4) / 100,
      cpuUserSeconds: Math.round(used.user / 1e4) / 100,
      cpuSystemSeconds: Math.round(used.system / 1e4) / 100,
      wakeups,
      gc: { count: this.gc.count, totalMs: Math.round(this.gc.totalMs), maxMs: Math.round(this.gc.maxMs), majorMaxMs: Math.round(this.gc.majorMaxMs) },
    };
  }

  /** The figures (ends the measurement if still running). */
  result(role: ProcessReport['role'], requests: number): ProcessReport {
    this.end();
    return { role, pid: process.pid, requests, ...(this.report ?? { loopDelayMs: { p50: 0, p99: 0, max: 0, mean: 0 }, cpuSeconds: 0, cpuUserSeconds: 0, cpuSystemSeconds: 0, wakeups: 0, gc: { count: 0, totalMs: 0, maxMs: 0, majorMaxMs: 0 } }) };
  }
}

/** The probe's figures of one slice: its latency (heartbeats and ban checks together, ms) and refusals. */
export interface ProbeSlice {
  p50: number | null;
  p99: number | null;
  max: number | null;
  refused: number;
}

/**
 * A run slice by slice ({@link SLICE_MS}, from t0 = the first server's earliest boot, epoch ms): the
 * fleet's attempts started in each slice, how many were refused (429/503) or timed out, and the probe's
 * {@link ProbeSlice}: where in a run the refusals and the slow answers fell (a join storm, a wave of
 * heartbeats), which the run's totals hide. Slices after the window hold the shutdown.
 */
export interface TimelineSummary {
  t0Ms: number;
  sliceSeconds: number;
  /** `fleet.lagMaxMs`: the fleet processes' longest stall in the slice; `gcMs`: their GC pauses summed. */
  slices: { fromSeconds: number; fleet: { attempts: number; refused: number; timeouts: number; lagMaxMs: number; gcMs: number }; probe: ProbeSlice | null }[];
}

/** The {@link TimelineSummary} of the fleet's merged stats and the probe's (null: no probe ran). */
export function timelineSummary(t0Ms: number, fleet: RequestStats, probe: RequestStats | null): TimelineSummary {
  const last = Math.max(-1, ...fleet.slices.keys(), ...(probe?.slices.keys() ?? []));
  const slices: TimelineSummary['slices'] = [];
  for (let i = 0; i <= last; i++) {
    const f = fleet.slices.get(i);
    const p = probe?.slices.get(i);
    const latency = p?.latency.summary();
    slices.push({
      fromSeconds: (i * SLICE_MS) / 1000,
      fleet: { attempts: f?.attempts ?? 0, refused: f?.refused ?? 0, timeouts: f?.timeouts ?? 0, lagMaxMs: f?.lagMaxMs ?? 0, gcMs: Math.round(f?.gcMs ?? 0) },
      probe: probe ? { p50: latency?.p50 ?? null, p99: latency?.p99 ?? null, max: latency?.max ?? null, refused: p?.refused ?? 0 } : null,
    });
  }
  return { t0Ms, sliceSeconds: SLICE_MS / 1000, slices };
}
