/**
 * The fuzz test of issue #16 as a mocha suite, shared by `npm test` (test/http/fuzz.test.ts) and
 * `npm run test:faults` (test/faults/fuzz.fault.ts, more requests and another seed).
 */
import { expect } from 'chai';
import type { Server } from 'node:http';
import { Harness, type TestGame } from './harness.js';
import { doorWith } from '../doors/door-fixtures.js';
import { ENDPOINTS, FuzzClient, fuzzCases, listen, responseProblem, type FuzzCase } from './fuzz.js';
import { DeadLetters } from '../../src/store/dead-letters.js';

/** Requests in flight at once. */
const CONCURRENCY = 8;

export function defineFuzz(opts: { perEndpoint: number; seed: number }): void {
  describe(`seeded fuzz of the five game endpoints (issue #16; seed ${opts.seed}, ${opts.perEndpoint} per endpoint)`, function () {
    this.timeout(Math.max(120_000, opts.perEndpoint * 5 * 60));
    const h = new Harness();
    let server: Server;
    let client: FuzzClient;
    let g: TestGame;
    let doorKey: string;
    const statuses: Record<string, Record<number, number>> = {};

    before(async () => {
      console.log(`      fuzz seed ${opts.seed} (replay: FUZZ_SEED=${opts.seed} FUZZ_PER_ENDPOINT=${opts.perEndpoint})`);
      g = await h.game();
      doorKey = (await doorWith(h, g.gameId, [], { key: 'fuzz-door', defaultEffect: 'allow' })).key;
      server = h.app.listen(0, '127.0.0.1');
      client = new FuzzClient(await listen(server));
    });
    after(async () => {
      client?.close();
      server?.close();
      for (const [endpoint, counts] of Object.entries(statuses)) {
        console.log(`      ${endpoint.padEnd(15)} ${Object.entries(counts).map(([s, n]) => `${s}×${n}`).join(' ')}`);
      }
      await h.close();
    });

    for (const endpoint of ENDPOINTS) {
      it(`${endpoint}: ${opts.perEndpoint} mutated signed requests, 0 answers ≥ 500, the envelope on every error`, async () => {
        const problems: string[] = [];
        const counts: Record<number, number> = {};
        statuses[endpoint] = counts;
        const cases = fuzzCases(opts.seed, endpoint, opts.perEndpoint, g, doorKey);
        let index = 0;
        const worker = async () => {
          for (let next = cases.next(); !next.done; next = cases.next()) {
            const c: FuzzCase = next.value;
            const i = index++;
            const res = await client.send(c).catch((err: unknown) => ({ status: 0, body: String(err) }));
            counts[res.status] = (counts[res.status] ?? 0) + 1;
            const problem = res.status === 0 ? `no response: ${res.body}` : responseProblem(res);
            if (problem && problems.length < 10) problems.push(`#${i} [${c.mutations.join(', ')}]: ${problem}: ${res.body.slice(0, 200)}`);
          }
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, worker));
        expect(problems, problems.join('\n')).to.deep.equal([]);
        expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(opts.perEndpoint);
        expect(counts[200] ?? 0, 'some requests are valid and answered 200').to.be.greaterThan(0);
      });
    }

    it('stores everything answered 200: every stream drains with no dead letter', async () => {
      await h.flush(g.gameId);
      const keys = h.keySpace.game(g.gameId);
      for (const stream of [keys.eventStream(), keys.sessionStream(), keys.commandLog(), keys.accessStream()]) {
        expect(await h.redis.xlen(stream), stream).to.equal(0);
      }
      const dead = await new DeadLetters(h.redis, h.keySpace).summary(g.gameId);
      expect(dead.total, JSON.stringify(dead.latest)).to.equal(0);
      expect(await h.db.playerEvent.count({ where: { gameId: g.gameId } })).to.be.greaterThan(0);
    });
  });
}
