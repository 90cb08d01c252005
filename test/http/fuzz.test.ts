/**
 * Issue #16: a seeded fuzz of the five game endpoints (test/support/fuzz.ts). Every response is below
 * 500 and every non-200 carries the error envelope `{error:{code,message,requestId}, serverTime}`; and
 * whatever was answered 200 is stored by the flushers with no dead letter (validation equals
 * storability). Counts: FUZZ_PER_ENDPOINT (default 2,000 per endpoint, 10,000 in all); seed: FUZZ_SEED
 * (printed; default fixed). `npm run test:faults` runs a bigger, differently seeded round
 * (test/faults/fuzz.fault.ts).
 */
import { defineFuzz } from '../support/fuzz-suite.js';

defineFuzz({ perEndpoint: Number(process.env.FUZZ_PER_ENDPOINT ?? 2000), seed: Number(process.env.FUZZ_SEED ?? 16_016) });
