/**
 * scripts/bench/cpu-profile-top.ts — the functions with the most self time in a V8 `.cpuprofile` (as
 * written by `node --cpu-prof`), for the benchmarks doc (issue #20: "the profile's top ten before and
 * after").
 *
 * Usage:  npx tsx scripts/bench/cpu-profile-top.ts <file.cpuprofile> [--top 10] [--skip-ms 0] [--json]
 *         npx tsx scripts/bench/cpu-profile-top.ts <file.cpuprofile> --stretches 500 [--json]
 *
 * `--skip-ms` leaves out the first milliseconds of the profile (process start-up: module loading and
 * compilation, which a load benchmark is not about).
 *
 * Self time of a function = the sampling intervals in which it was on top of the stack, summed over every
 * node of the profile with the same function name, file and line (one function reached by many call
 * paths is one row). `(idle)` is left out of the shares: a share is of the busy (sampled, not idle) time;
 * `(garbage collector)` and `(program)` (native work V8 cannot attribute) stay in.
 *
 * `--stretches MS` lists instead every stretch of at least MS milliseconds without an `(idle)` sample: an
 * event loop that never waited, i.e. a stall of the process (docs/benchmarks.md "The simulator's stalls
 * were its own garbage collector"), with the GC time in it and the mean gap between its samples (the
 * profiler samples every ~1 ms of wall time; wider gaps mean the thread was off its core).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The part of a V8 CPU profile this reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples?: number[];
  /** Microseconds between successive samples. */
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

/** One function's self time. */
export interface ProfileRow {
  /** `name (file:line)`, file relative to the project or the package under node_modules. */
  fn: string;
  /** Self time, ms. */
  selfMs: number;
  /** Share of busy time, percent. */
  pct: number;
}

function shortUrl(url: string): string {
  if (!url) return '';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = file.lastIndexOf('node_modules/');
  return nm >= 0 ? file.slice(nm + 'node_modules/'.length) : path.relative(process.cwd(), file);
}

/** The V8 CPU profile at `file`. @throws when the file cannot be read or is not a CPU profile. */
function readProfile(file: string): CpuProfile {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  if (!Array.isArray(profile.nodes)) throw new Error(`${file}: not a V8 CPU profile`);
  return profile;
}

/**
 * The `top` functions of the profile at `file` by self time, and the busy time they are shares of,
 * leaving out the samples of the profile's first `skipMs` milliseconds.
 * @throws when the file cannot be read or is not a CPU profile.
 */
export function topFunctions(file: string, top = 10, skipMs = 0): { busyMs: number; rows: ProfileRow[] } {
  const profile = readProfile(file);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // timeDeltas[i] is the time before sample i; the time a sample stands for is the gap to the next one.
  let sinceStartUs = 0;
  for (let i = 0; i < samples.length; i++) {
    sinceStartUs += deltas[i] ?? 0;
    if (sinceStartUs < skipMs * 1000) continue;
    const us = deltas[i + 1] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, us));
  }
  const byFn = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    busyUs += us;
    const where = shortUrl(url);
    const key = `${functionName || '(anonymous)'}${where ? ` (${where}:${lineNumber + 1})` : ''}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const rows = [...byFn]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, us]) => ({ fn, selfMs: Math.round(us / 100) / 10, pct: busyUs ? Math.round((us / busyUs) * 1000) / 10 : 0 }));
  return { busyMs: Math.round(busyUs / 1000), rows };
}

/** One stretch of a profile without an idle sample ({@link busyStretches}). */
export interface BusyStretch {
  /** Start, seconds from the profile's start. */
  atSeconds: number;
  ms: number;
  /** Of {@link ms}: samples in `(garbage collector)`. */
  gcMs: number;
  /** Mean wall time between the stretch's samples, ms. */
  meanSampleGapMs: number;
}

/**
 * Every stretch of at least `minMs` ms in the profile at `file` without an `(idle)` sample, in time order.
 * @throws when the file cannot be read or is not a CPU profile.
 */
export function busyStretches(file: string, minMs: number): BusyStretch[] {
  const profile = readProfile(file);
  const nameOf = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName]));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const out: BusyStretch[] = [];
  let atUs = 0;
  let from = -1;
  let fromUs = 0;
  let gcUs = 0;
  for (let i = 0; i <= samples.length; i++) {
    atUs += deltas[i] ?? 0;
    const name = i < samples.length ? nameOf.get(samples[i]!) : '(idle)';
    if (name !== '(idle)') {
      if (from < 0) [from, fromUs, gcUs] = [i, atUs, 0];
      if (name === '(garbage collector)') gcUs += deltas[i + 1] ?? 0;
      continue;
    }
    if (from >= 0 && atUs - fromUs >= minMs * 1000) {
      const ms = (atUs - fromUs) / 1000;
      out.push({ atSeconds: Math.round(fromUs / 1e5) / 10, ms: Math.round(ms), gcMs: Math.round(gcUs / 1000), meanSampleGapMs: Math.round((ms / (i - from)) * 100) / 100 });
    }
    from = -1;
  }
  return out;
}

/** The rows as a Markdown table. */
export function formatTop(rows: readonly ProfileRow[]): string {
  return ['| # | function (file:line) | self ms | % of busy |', '| --- | --- | --- | --- |', ...rows.map((r, i) => `| ${i + 1} | \`${r.fn}\` | ${r.selfMs} | ${r.pct} |`)].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '10' }, 'skip-ms': { type: 'string', default: '0' }, stretches: { type: 'string' }, json: { type: 'boolean', default: false } } });
  if (!positionals[0]) {
    console.error('usage: cpu-profile-top.ts <file.cpuprofile> [--top 10] [--skip-ms 0] [--stretches MS] [--json]');
    process.exit(2);
  }
  if (values.stretches !== undefined) {
    const stretches = busyStretches(positionals[0], Number(values.stretches));
    const table = ['| from s | ms | GC ms | mean sample gap ms |', '| --- | --- | --- | --- |', ...stretches.map((b) => `| ${b.atSeconds} | ${b.ms} | ${b.gcMs} | ${b.meanSampleGapMs} |`)];
    console.log(values.json ? JSON.stringify(stretches, null, 2) : table.join('\n'));
    process.exit(0);
  }
  const result = topFunctions(positionals[0], Number(values.top), Number(values['skip-ms']));
  console.log(values.json ? JSON.stringify(result, null, 2) : `busy ${result.busyMs} ms\n${formatTop(result.rows)}`);
}
