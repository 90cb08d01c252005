/**
 * The simulator's probe process (forked by packages/simulator/src/simulate.ts): one game server of the same game, on the
 * same key, sending signed requests at a fixed low rate (default 5 a second: each fifth a heartbeat of a
 * 5-player roster, the others ban checks of rotating users), open loop: a request is sent when it is due,
 * whatever the previous one is doing. Its own process and event loop carry nothing else, so its latency
 * is the service's latency as a lone client sees it, through the fleet's boot burst and after
 * (issue #15 item 4). Reports per phase (idle before the fleet starts, boot, steady) and its own loop
 * delay and CPU. Not part of the service.
 *
 * Quotas: one heartbeat a second is within the per-server heartbeat quota at any interval; 4 ban checks
 * a second over 100 rotating users is 2.4 per user per minute, within the per-user quota of 10.
 */
import { SignedTransport, TransportError, GAME_PATHS } from '@gis/client';
import { keepAliveFetch } from './keep-alive-fetch.js';
import { ProcessMeter, RequestStats } from './sim-stats.js';
import type { FromChild, ProbeFinal, ProbeStart, ToChild } from './protocol.js';

const USERS = 100;
const ROSTER = 5;

const send = (m: FromChild, done: () => void = () => undefined): void => {
  process.send?.(m, done);
};

let stats = new RequestStats();
const meter = new ProcessMeter();
const http = keepAliveFetch({ maxFreeSockets: 16 });
let timer: NodeJS.Timeout | null = null;
let stopping = false;
let transport: SignedTransport | null = null;
let serverId = '';
const bootedAt = Date.now();

function heartbeat(players: number): unknown {
  return {
    externalServerId: serverId,
    playerCount: players,
    maxPlayers: 10,
    sdkVersion: 'gis-simulator-probe/0.2.0',
    uptimeSeconds: Math.floor((Date.now() - bootedAt) / 1000),
    players: Array.from({ length: players }, (_, i) => ({ externalId: `${serverId}-p${i}`, username: `probe${i}` })),
    events: [],
    acks: [],
  };
}

async function fire(n: number): Promise<void> {
  const t = transport!;
  try {
    if (n % 5 === 0) await t.request('POST', GAME_PATHS.heartbeat, heartbeat(ROSTER));
    else await t.request('POST', GAME_PATHS.bansCheck, { externalId: `${serverId}-u${n % USERS}`, externalServerId: serverId });
  } catch (err) {
    if (!(err instanceof TransportError)) throw err; // recorded by onAttempt as timeout/network
  }
}

function start(m: ProbeStart): void {
  stats = new RequestStats(m.timeline);
  serverId = `probe-${m.runTag}`;
  // requestNonce on (the default): the probe signs like the fleet; no 409 retry can hide in its figures.
  transport = new SignedTransport({ baseUrl: m.url, apiKey: m.key, fetch: http, requestTimeoutMs: m.requestTimeoutMs, userAgent: 'gis-simulator-probe', onAttempt: (a) => stats.record(a) });
  const everyMs = 1000 / m.rate;
  const first = Date.now();
  let n = 0;
  // Open loop on a fixed schedule: request k is due at first + k * everyMs; a late timer sends what is due.
  const tick = () => {
    if (stopping) return;
    const due = Math.floor((Date.now() - first) / everyMs);
    while (n <= due) void fire(n++);
    timer = setTimeout(tick, Math.max(1, first + n * everyMs - Date.now()));
  };
  tick();
  const now = Date.now();
  setTimeout(() => meter.begin(), Math.max(0, m.timeline.t0 - now));
  setTimeout(() => meter.end(), Math.max(0, m.timeline.endMs - now));
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (timer) clearTimeout(timer);
  meter.end();
  // The probe's server leaves: an empty roster closes its sessions.
  await transport?.request('POST', GAME_PATHS.heartbeat, heartbeat(0)).catch(() => undefined);
  const final: ProbeFinal = { type: 'final', process: meter.result('probe', stats.windowAttempts), requests: stats.toJSON(), slices: stats.slicesJSON() };
  http.close();
  send(final, () => process.exit(0));
}

process.on('message', (m: ToChild) => {
  if (m.type === 'start' && 'rate' in m) start(m);
  else if (m.type === 'stop') void stop();
});
process.on('disconnect', () => {
  if (!stopping) process.exit(1);
});
process.on('SIGINT', () => undefined);
// Handlers are in place: the coordinator may send `start` now.
send({ type: 'ready' });
