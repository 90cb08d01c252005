/**
 * The bigger fuzz round of issue #16 for `npm run test:faults`: 6,000 mutated signed requests per
 * endpoint (30,000 in all) from another seed than `npm test`'s 2,000 per endpoint (test/http/fuzz.test.ts).
 * FUZZ_SEED / FUZZ_FAULT_PER_ENDPOINT override both.
 */
import { defineFuzz } from '../support/fuzz-suite.js';

defineFuzz({ perEndpoint: Number(process.env.FUZZ_FAULT_PER_ENDPOINT ?? 6000), seed: Number(process.env.FUZZ_SEED ?? 61_616) });
