/**
 * scripts/bench/simulator-cost.ts — `npm run bench:simulator`: what the fleet simulator itself costs per
 * request (issue #15 item 4: "costs as little CPU per simulated request as a load generator can"),
 * measured without a service competing for the cores. One fleet worker process (the simulator's own,
 * packages/simulator/src/fleet-worker.ts, unchanged) plays `--servers` × `--players` with the simulator's ramp
 * and fill against scripts/bench/canned-game-api.ts, which answers every request at once with a fixed
 * body of the service's shape (60 s door decisions, no refusals), so the request mix and rate are the
 * fleet's own: ban and bulk checks per join, heartbeats, manifests, single door checks once cached
 * decisions expire.
 *
 * Usage: npx tsx scripts/bench/simulator-cost.ts [--servers 1000] [--players 30] [--ramp 10] [--fill 30]
 *   [--interval 15] [--duration 90] [--cpu-prof DIR] [--json]
 *
 * Prints per phase (`boot` = the ramp + one interval, `steady` = the rest, as the simulator's phases) the
 * fleet process's requests, CPU per request (user and system), wake-ups per request (voluntary context
 * switches of its main thread) and share of a core, read from /proc at its progress reports (every 2 s);
 * then its own event-loop delay over the window (the simulator's void rule: p99 ≤ 50 ms) and the canned
 * API's CPU. `--cpu-prof DIR` writes a V8 CPU profile of the fleet process into DIR (summarise it with
 * scripts/bench/cpu-profile-top.ts). Linux only (/proc). Not part of the service; figures in docs/benchmarks.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { parseCli } from '../support/cli-args.js';
import { FLEET_WORKER_SCRIPT, processCpu, voluntarySwitches, type FleetFinal, type FleetStart, type FromChild, type Timeline } from '@gis/simulator';

const cli = parseCli(
  'usage: npx tsx scripts/bench/simulator-cost.ts [--servers 1000] [--players 30] [--ramp 10] [--fill 30] [--interval 15] [--duration 90] [--cpu-prof DIR] [--json]',
  {
    options: {
      servers: { type: 'string' },
      players: { type: 'string' },
      ramp: { type: 'string' },
      fill: { type: 'string' },
      interval: { type: 'string' },
      duration: { type: 'string' },
      'cpu-prof': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  },
);
const cpuProfDir = cli.values['cpu-prof'];
const servers = cli.number('servers', 1000, 1, 20_000, { integer: true });
const players = cli.number('players', 30, 0, 1000, { integer: true });
const ramp = cli.number('ramp', 10, 0, 3600, { integer: true });
const fill = cli.number('fill', 30, 0, 3600, { integer: true });
const interval = cli.number('interval', 15, 15, 60, { integer: true });
const duration = cli.number('duration', 90, 5, 86_400, { integer: true });

const log = (line: string): void => {
  process.stderr.write(`[bench:simulator] ${line}\n`);
};

/** One reading of the fleet process: when, its requests so far, its CPU and wake-ups so far. */
interface Sample {
  at: number;
  requests: number;
  user: number;
  system: number;
  switches: number;
  players: number;
}

/** The figures of one phase, between two samples. */
interface PhaseFigures {
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  cpuSeconds: number;
  cpuUsPerRequest: number | null;
  userUsPerRequest: number | null;
  systemUsPerRequest: number | null;
  wakeupsPerRequest: number | null;
  coreShare: number;
  playersAtEnd: number;
}

/** The figures between samples `a` and `b`; null when they span no time (a window shorter than the boot phase has no steady phase). */
function phase(a: Sample, b: Sample): PhaseFigures | null {
  const seconds = (b.at - a.at) / 1000;
  if (seconds <= 0) return null;
  const requests = b.requests - a.requests;
  const per = (x: number) => (requests ? Math.round((x * 1e6) / requests) : null);
  const cpu = b.user - a.user + (b.system - a.system);
  return {
    seconds: Math.round(seconds * 10) / 10,
    requests,
    requestsPerSecond: Math.round(requests / seconds),
    cpuSeconds: Math.round(cpu * 100) / 100,
    cpuUsPerRequest: per(cpu),
    userUsPerRequest: per(b.user - a.user),
    systemUsPerRequest: per(b.system - a.system),
    wakeupsPerRequest: requests ? Math.round(((b.switches - a.switches) / requests) * 100) / 100 : null,
    coreShare: Math.round((cpu / seconds) * 1000) / 1000,
    playersAtEnd: b.players,
  };
}

/** Forks a TypeScript entry point (`file` relative to this one, or absolute) under tsx, with an IPC channel. */
function forkTs(file: string, env: Record<string, string> = {}, profile = false): ChildProcess {
  return fork(new URL(file, import.meta.url).pathname, [], {
    execArgv: ['--import', 'tsx', ...(profile && cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [])],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
}

async function main(): Promise<void> {
  const api = forkTs('./canned-game-api.ts', { INTERVAL: String(interval) });
  const fleet = forkTs(FLEET_WORKER_SCRIPT, {}, true);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      api.once('message', (m: { port: number }) => resolve(m.port));
      api.once('exit', (code) => reject(new Error(`canned API exited with ${code}`)));
    });
    const samples: Sample[] = [];
    let final: FleetFinal | null = null;
    const finalReceived = new Promise<void>((resolve) => {
      fleet.on('message', (m: FromChild) => {
        if (m.type === 'progress') {
          const cpu = processCpu(fleet.pid!);
          const switches = voluntarySwitches(fleet.pid!);
          if (cpu && switches !== null) samples.push({ at: Date.now(), requests: m.requests, user: cpu.user, system: cpu.system, switches, players: m.players });
        } else if (m.type === 'log') log(`fleet: ${m.line}`);
        else if (m.type === 'final') {
          final = m as FleetFinal;
          resolve();
        }
      });
      fleet.once('exit', () => resolve());
    });
    await new Promise<void>((resolve, reject) => {
      fleet.on('message', (m: FromChild) => m.type === 'ready' && resolve());
      fleet.once('exit', (code) => reject(new Error(`fleet worker exited with ${code} before it was ready`)));
    });

    const t0 = Date.now() + 1000;
    const timeline: Timeline = { idleFromMs: t0, t0, bootEndMs: t0 + (ramp + interval) * 1000, endMs: t0 + duration * 1000 };
    const indices = Array.from({ length: servers }, (_, i) => i);
    const start: FleetStart = {
      type: 'start',
      url: `http://127.0.0.1:${port}`,
      key: 'svc_live_benchsim.canned-api-checks-no-signature',
      runTag: 'bench',
      indices,
      players,
      bootAtMs: indices.map(() => Math.random() * ramp * 1000),
      fillSeconds: fill,
      timeline,
      requestTimeoutMs: 10_000,
    };
    fleet.send(start);
    const api0 = processCpu(api.pid!);
    log(`${servers} servers × ${players} players, ramp ${ramp} s, fill ${fill} s, interval ${interval} s, ${duration} s against the canned API on port ${port}`);
    await new Promise((r) => setTimeout(r, timeline.endMs - Date.now() + 2500));
    const api1 = processCpu(api.pid!);
    fleet.send({ type: 'stop' });
    await finalReceived;

    // The samples nearest the phase boundaries (progress comes every 2 s).
    const nearest = (t: number) => samples.reduce((best, s) => (Math.abs(s.at - t) < Math.abs(best.at - t) ? s : best));
    if (samples.length < 3) throw new Error('too few progress reports from the fleet worker');
    const s0 = nearest(timeline.t0);
    const sBoot = nearest(Math.min(timeline.bootEndMs, timeline.endMs));
    const sEnd = nearest(timeline.endMs);
    const f = final as FleetFinal | null;
    const result = {
      servers,
      players,
      rampSeconds: ramp,
      fillSeconds: fill,
      intervalSeconds: interval,
      durationSeconds: duration,
      boot: phase(s0, sBoot),
      steady: phase(sBoot, sEnd),
      all: phase(s0, sEnd),
      loopDelayMs: f?.process.loopDelayMs ?? null,
      requestsByEndpoint: f ? Object.fromEntries(Object.entries(f.requests).map(([e, d]) => [e, d.attempts])) : null,
      cannedApiCpuSeconds: api0 && api1 ? Math.round((api1.user + api1.system - api0.user - api0.system) * 100) / 100 : null,
    };
    if (cli.values.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    const line = (name: string, p: PhaseFigures | null) =>
      !p
        ? `${name.padEnd(7)} (none: the window ends inside the boot phase)`
        : `${name.padEnd(7)} ${p.seconds} s, ${p.requests} requests (${p.requestsPerSecond}/s): ${p.cpuUsPerRequest} µs CPU/request ` +
      `(user ${p.userUsPerRequest}, system ${p.systemUsPerRequest}), ${p.wakeupsPerRequest} wake-ups/request, ${p.coreShare} of a core; ${p.playersAtEnd} players`;
    console.log(line('boot', result.boot));
    console.log(line('steady', result.steady));
    console.log(line('all', result.all));
    console.log(`loop    delay p50 ${result.loopDelayMs?.p50} ms, p99 ${result.loopDelayMs?.p99} ms, max ${result.loopDelayMs?.max} ms; requests ${JSON.stringify(result.requestsByEndpoint)}`);
    console.log(`BENCH simulator cpu_us_per_request=${result.all?.cpuUsPerRequest} boot=${result.boot?.cpuUsPerRequest} steady=${result.steady?.cpuUsPerRequest ?? 'none'} canned_api_cpu_s=${result.cannedApiCpuSeconds}`);
  } finally {
    // The worker exits by itself once its report is out (writing its CPU profile on the way).
    if (fleet.exitCode === null) await Promise.race([new Promise((r) => fleet.once('exit', r)), new Promise((r) => setTimeout(r, 15_000))]);
    if (fleet.exitCode === null) fleet.kill('SIGTERM');
    if (api.connected) api.disconnect();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench:simulator failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
