/**
 * scripts/bench/cpu-drift.ts — how steady this machine's CPU speed is (not a test; no service needed).
 *
 * Usage:  node_modules/.bin/tsx scripts/bench/cpu-drift.ts [seconds, default 60]
 *
 * Repeats one fixed piece of single-threaded work (20,000 chained SHA-256 hashes, ~30 ms on the
 * 2-core machine of 2026-11-22) for the given time and prints its duration in ms: min, p10, p50, p90,
 * p99, max. On a steady machine they stay close; the spread is how much slower the CPU runs at times.
 * The latency runs of the benchmarks leave the service 20 % headroom at 80 % of its maximum; where the
 * p90 is more than 25 % above the minimum, the machine's own slow stretches exceed that headroom and
 * can set their tail (README "Benchmarks").
 */
import { createHash } from 'node:crypto';
import { percentile } from '@gis/client';
import { parseCli } from '../support/cli-args.js';

const HASHES = 20_000;

function main(): void {
  const cli = parseCli('usage: tsx scripts/bench/cpu-drift.ts [seconds, default 60]', { allowPositionals: true, options: {} });
  const seconds = Number(cli.positionals[0] ?? 60);
  if (cli.positionals.length > 1 || !(seconds >= 1 && seconds <= 3600)) cli.fail('seconds must be one number from 1 to 3600');
  const samples: number[] = [];
  for (const end = Date.now() + seconds * 1000; Date.now() < end; ) {
    const start = process.hrtime.bigint();
    let h = Buffer.alloc(32);
    for (let i = 0; i < HASHES; i++) h = createHash('sha256').update(h).digest();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const q = (p: number) => percentile(samples, p).toFixed(1);
  process.stdout.write(`${HASHES} SHA-256 hashes, ${samples.length} samples, ms: min ${q(0)} p10 ${q(10)} p50 ${q(50)} p90 ${q(90)} p99 ${q(99)} max ${q(100)}\n`);
  process.stdout.write(`BENCH cpu-drift min_ms=${q(0)} p50_ms=${q(50)} p90_ms=${q(90)} p99_ms=${q(99)} p90_over_min=${(percentile(samples, 90) / percentile(samples, 0)).toFixed(2)}\n`);
}

main();
