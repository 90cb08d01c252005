/**
 * A fleet run slice by slice (packages/simulator/src/sim-stats.ts `slices`, scripts/bench/fleet-timeline.ts):
 * each attempt lands in the slice of its start, counted as refused (429/503) or timed out as it was,
 * slices of several processes add up, and bench:fleet's rows put each service process's CPU of the
 * same seconds beside them.
 */
import { expect } from 'chai';
import { RequestStats, SLICE_MS, type Timeline } from '@gis/simulator';
import { CpuSampler, timelineRows, timelineTable } from '../../scripts/bench/fleet-timeline.js';

const attempt = (outcome: string, latencyMs: number) => ({ method: 'POST', path: '/api/v1/game/bans/check', outcome, latencyMs });

describe('simulator: timeline slices', () => {
  it('puts each attempt in the slice it started in, with its refusals, timeouts and latency', () => {
    const now = Date.now();
    // t0 two and a half slices ago: an attempt that just ended after 10 ms started in slice 2.
    const timeline: Timeline = { idleFromMs: now - 3 * SLICE_MS, t0: now - 2.5 * SLICE_MS, bootEndMs: now, endMs: now + SLICE_MS };
    const stats = new RequestStats(timeline);
    stats.record(attempt('200', 10));
    stats.record(attempt('503', 2));
    stats.record(attempt('timeout', 0.6 * SLICE_MS)); // started 0.6 slice ago: slice 1
    stats.record(attempt('200', 2.9 * SLICE_MS)); // started before t0: in no slice
    const json = stats.slicesJSON();
    expect(Object.keys(json).sort()).to.deep.equal(['1', '2']);
    expect(json['2']).to.include({ attempts: 2, refused: 1, timeouts: 0 });
    expect(json['1']).to.include({ attempts: 1, refused: 0, timeouts: 1 });

    const merged = new RequestStats().addSlices(json).addSlices(json);
    expect(merged.slices.get(2)!.attempts).to.equal(4);
    expect(merged.slices.get(2)!.refused).to.equal(2);
    expect(merged.slices.get(2)!.latency.summary().max).to.equal(10);
  });

  it("puts the process's stalls (the longest) and GC pauses (summed) in the slice they happened in", () => {
    const now = Date.now();
    const timeline: Timeline = { idleFromMs: now - 3 * SLICE_MS, t0: now - 2.5 * SLICE_MS, bootEndMs: now, endMs: now + SLICE_MS };
    const a = new RequestStats(timeline);
    a.noteLag(now, 40);
    a.noteLag(now, 900);
    a.noteLag(now, 15);
    a.noteGc(now, 30);
    a.noteGc(now - SLICE_MS, 12.4);
    a.noteGc(now, 8);
    a.noteLag(now - 3 * SLICE_MS, 5000); // before t0: in no slice
    const b = new RequestStats(timeline);
    b.noteLag(now, 1200);
    b.noteGc(now, 2);
    const merged = new RequestStats().addSlices(a.slicesJSON()).addSlices(b.slicesJSON());
    expect([...merged.slices.keys()].sort()).to.deep.equal([1, 2]);
    expect(merged.slices.get(2)).to.include({ lagMaxMs: 1200, gcMs: 40, attempts: 0 });
    expect(merged.slices.get(1)).to.include({ lagMaxMs: 0, gcMs: 12 });
  });

  it('gives each slice the CPU share the sampled processes used in it', async () => {
    const sampler = new CpuSampler([process.pid]);
    const t0Ms = Date.now();
    sampler.start();
    const spinUntil = Date.now() + 1500;
    while (Date.now() < spinUntil) Math.sqrt(Math.random()); // this process on a core for 1.5 s
    sampler.stop();
    const sim = { t0Ms, sliceSeconds: 2, slices: [{ fromSeconds: 0, fleet: { attempts: 5, refused: 1, timeouts: 0, lagMaxMs: 850, gcMs: 120 }, probe: null }] };
    const rows = timelineRows(sim, sampler, ['test']);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ fromSeconds: 0, requests: 5, refused: 1, timeouts: 0, fleetLagMaxMs: 850, fleetGcMs: 120 });
    // Busy for ~1.5 s of the ~1.5 s sampled: well above idle, at most about one core.
    expect(rows[0]!.coreShare.test).to.be.within(0.5, 1.2);
    expect(timelineTable(rows, ['test'], 2)).to.match(/^\| from s \(2 s slices\) \|.*\n\| --- .*\n\| 0 \| 5 \| 1 \| 0 \| 850 \/ 120 \| – \| – \| \d\.\d\d \| \d\.\d\d \|$/);
  });
});
