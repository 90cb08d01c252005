/**
 * Issue #28: the Luau SDK's rules under real Luau, in virtual time against an in-process stand-in for the
 * service (sdk/luau/test/fakeservice.luau: it checks signatures with the SDK's own HMAC, the +/-300 s
 * window and replays, and answers a 400 with error.pointer as the real API does; test/luau/e2e.test.ts
 * runs against the real API). Every scenario of sdk/luau/test/rules.luau must print OK; the names are
 * listed here so that a scenario that silently stopped running fails the test too.
 */
import { expect } from 'chai';
import { runLuau } from './luau-runner.js';

const SCENARIOS = [
  'track refuses what the service would refuse, at the caller, queueing nothing',
  'a 400 naming one event drops it (reported) and the rest are delivered at once',
  'a 400 naming no event halves the batch until the bad event is alone, then drops it',
  'once the halving dropped the bad event, the rest go out in full batches again',
  'a 409 from a clock 400 s fast is retried at once with the serverTime correction',
  'the interval is clamped to 15-60 s and uptime counts from the server\'s start',
  'the heartbeat after the registration goes out at a random point of the interval, later ones a whole interval apart; spreadPhase false keeps every gap whole',
  'stop() sends its final heartbeat at a random point of shutdownJitterSeconds (default 5 s); 0 sends it at once',
  'checkDoors asks only for what is not cached; the bulk answers are used as they are',
  'doorCacheTtlSeconds of the heartbeat caps the cache (0: nothing cached, and no 1 + N requests)',
  'identical door and ban checks in flight share one request',
  'a 503 with Retry-After holds back the server\'s door and ban checks until then; a 429 does not',
  'refresh_permissions forgets cached decisions even at the same doors version; leaving drops a player\'s',
  'refresh_permissions aimed at a user forgets only that user\'s decisions',
  'HTTP disabled is a setup error reported once; the loop keeps trying and recovers',
  'the platform\'s request limit pauses every request for 30 s; checks fail by their mode meanwhile',
  'one request budget per server: checks keep the reserve free, heartbeats go first',
  'stop() reports the events it could not deliver by its deadline',
  'only 401/403 stop the loop; a 404 or 500 backs off and heartbeats go on',
  'a raising roster (a platform call) costs one backoff, not the loop',
];

describe('Luau SDK: rules in virtual time (real Luau)', function () {
  this.timeout(60_000);

  it('passes every scenario of test/rules.luau', () => {
    const lines = runLuau('test/rules.luau').trim().split('\n');
    expect(lines.filter((l) => l.startsWith('FAIL'))).to.deep.equal([]);
    expect(lines.filter((l) => l.startsWith('OK ')).map((l) => l.slice(3))).to.deep.equal(SCENARIOS);
    expect(lines.at(-1)).to.equal(`DONE ${SCENARIOS.length} 0`);
  });
});
