/**
 * The reference client's connect-time ban check (spec: POST /api/v1/game/bans/check: "a connect-time
 * call, not polled. On a network error the client decides whether to fail open; failing open is the
 * recommended default unless a missed ban is worse than a refused connection").
 *
 * Request `{ externalId, externalServerId }`, plus `includeDoors: true` when the caller wants the user's
 * bulk door check answered in the same request (the service's docs/decisions.md "One request per joining
 * player"; hand `doors` of the result to `DoorAccess.onJoin`). Only `banned` of the answer is relied on,
 * the other fields (`scope`, `expiresAt`, `reason`) are passed through as informational. Without an answer (network error,
 * timeout, 5xx, 429, or any other non-200 such as a setup problem) the fail mode decides: `open` lets the
 * user in, `closed` refuses them; the problem is reported either way.
 *
 * A refusal that says when to come back (429, or 503 with `Retry-After`: the service shedding load or a
 * dependency briefly away) is retried after `Retry-After` plus up to 1 s of jitter, as long as the total
 * wait stays within `retry.maxWaitMs`; only then does the fail mode decide. After a 503 with
 * `Retry-After` to any of the server's checks (`retry.gate`), its checks wait for that time, or fail at
 * once when it is beyond their budget, without sending (packages/client/src/busy-gate.ts).
 */
import { TransportError, type TransportResponse } from './http-transport.js';
import { GAME_PATHS, type ProblemInfo } from './client-types.js';
import { retryAfterWithJitterMs } from './backoff.js';
import type { BusyGate } from './busy-gate.js';
import type { Clock } from './clock.js';

/** What to do when the service gives no answer: `open` admits the user (default), `closed` refuses. */
export type BanFailMode = 'open' | 'closed';

/** The outcome of one ban check. */
export interface BanCheckResult {
  /** Refuse the connection when true. */
  banned: boolean;
  /** `service`: the service answered; `fail_open` / `fail_closed`: it did not, the fail mode decided. */
  source: 'service' | 'fail_open' | 'fail_closed';
  /** Informational (spec: field names other than banned are unsettled); null when absent. */
  scope: string | null;
  /** Refusals (429/503) that were waited out and retried before this answer. */
  retries?: number;
  expiresAt: string | null;
  reason: string | null;
  /**
   * Asked with `includeDoors`: the user's bulk door check as the service answered it (doors/bulk's body
   * without serverTime), or null when it gave none (banned, over the bulk quota, door data unavailable,
   * or no answer at all). Absent when not asked.
   */
  doors?: unknown;
}

/** How a refused check is retried: within `maxWaitMs` of waiting in total, on `clock`, jittered by `random`. */
export interface BanRetryOptions {
  /** Most time spent waiting for Retry-After in total, ms. 0 never retries. */
  maxWaitMs: number;
  clock: Clock;
  random?: () => number;
  /**
   * The server's memory of a 503 with Retry-After (packages/client/src/busy-gate.ts): while it is closed
   * the check waits for it within `maxWaitMs`, or fails at once, without a request; a 503 closes it.
   */
  gate?: BusyGate;
}

/** Sends a signed request (normally `GameClient.request`). */
export type SignedRequest = (method: string, path: string, body?: unknown) => Promise<TransportResponse>;

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * Asks the service whether `externalId` may connect to `externalServerId`. Never throws for HTTP or
 * network outcomes; `onProblem` hears about every unanswered check.
 */
export async function checkBan(
  request: SignedRequest,
  input: { externalId: string; externalServerId: string; includeDoors?: boolean },
  failMode: BanFailMode = 'open',
  onProblem?: (p: ProblemInfo) => void,
  retry?: BanRetryOptions,
): Promise<BanCheckResult> {
  let retries = 0;
  const doorsPart = (doors: unknown): { doors?: unknown } => (input.includeDoors ? { doors: doors ?? null } : {});
  const fail = (problem: ProblemInfo): BanCheckResult => {
    onProblem?.({ ...problem, message: `ban check for ${input.externalId} failed ${failMode}: ${problem.message}` });
    return { banned: failMode === 'closed', source: failMode === 'closed' ? 'fail_closed' : 'fail_open', scope: null, expiresAt: null, reason: null, ...(retries ? { retries } : {}), ...doorsPart(undefined) };
  };
  let res: TransportResponse;
  let waited = 0;
  for (;;) {
    const held = retry?.gate ? await retry.gate.waitWithin(retry.maxWaitMs - waited, retry.random) : 0;
    if (held === null) return fail({ kind: 'server_error', status: 503, message: `not sent, the service asked to retry in ${Math.ceil(retry!.gate!.remainingMs() / 1000)} s` });
    if (held > 0) {
      waited += held;
      continue;
    }
    try {
      res = await request('POST', GAME_PATHS.bansCheck, { externalId: input.externalId, externalServerId: input.externalServerId, ...(input.includeDoors ? { includeDoors: true } : {}) });
    } catch (err) {
      if (!(err instanceof TransportError)) throw err;
      return fail({ kind: 'network', message: err.message });
    }
    retry?.gate?.observe(res.status, res.headers.get('retry-after'));
    if (!retry || (res.status !== 429 && res.status !== 503)) break;
    const delay = retryAfterWithJitterMs(res.headers.get('retry-after'), retry.clock.now(), retry.random);
    if (delay === null || waited + delay > retry.maxWaitMs) break;
    waited += delay;
    retries++;
    await retry.clock.sleep(delay);
  }
  const body = res.json as Record<string, unknown> | undefined;
  if (res.status !== 200 || typeof body?.banned !== 'boolean') {
    const kind: ProblemInfo['kind'] = res.status === 200 ? 'bad_response' : res.status === 429 ? 'rate_limited' : 'server_error';
    return fail({ kind, status: res.status, message: `${res.status} ${res.errorCode ?? ''}`.trim() });
  }
  return { banned: body.banned, source: 'service', scope: text(body.scope), expiresAt: text(body.expiresAt), reason: text(body.reason), ...(retries ? { retries } : {}), ...doorsPart(body.doors) };
}
