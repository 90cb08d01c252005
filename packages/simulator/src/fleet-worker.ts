/**
 * A fleet worker process of the simulator (forked by packages/simulator/src/simulate.ts): runs the servers it is given,
 * each booting at its own time of the ramp, against the API, and reports to the coordinator over IPC:
 * running totals every 2 s (every 6 s with a sample of servers and players for the moderation load), and on
 * `stop` (after every server let its players go and flushed) one final report with its request
 * histograms, its own event-loop delay and CPU over the measured window, and the accounting of events and
 * sessions. Not part of the service.
 */
import type { ProblemInfo } from '@gis/client';
import { emptyDoorSummary } from './door-play.js';
import { keepAliveFetch } from './keep-alive-fetch.js';
import { ProcessMeter, RequestStats } from './sim-stats.js';
import { SimServer } from './sim-server.js';
import { TimerWheel } from './timer-wheel.js';
import type { FleetFinal, FleetStart, FromChild, TargetSample, ToChild } from './protocol.js';

const send = (m: FromChild): void => {
  process.send?.(m);
};
const log = (line: string): void => send({ type: 'log', line });

let fleet: SimServer[] = [];
let stats = new RequestStats();
const meter = new ProcessMeter((atMs, ms) => stats.noteGc(atMs, ms));
const doors = emptyDoorSummary();
const problems: Record<string, number> = {};
const setupErrors: FleetFinal['setupErrors'] = [];
let progressTimer: NodeJS.Timeout | null = null;
let stopping = false;
let reports = 0;
const http = keepAliveFetch();
/** The process's one timer for its servers' ticks, boots and client sleeps. */
const wheel = new TimerWheel(undefined, undefined, (lateMs, atMs) => stats.noteLag(atMs, lateMs));

function onProblem(p: ProblemInfo): void {
  problems[p.kind] = (problems[p.kind] ?? 0) + 1;
  if (problems[p.kind] === 1) log(`${p.kind}: ${p.message} (further ${p.kind} problems of this process are only counted)`);
}

function start(m: FleetStart): void {
  stats = new RequestStats(m.timeline);
  const deps = {
    url: m.url,
    key: m.key,
    fetch: http,
    requestTimeoutMs: m.requestTimeoutMs,
    onAttempt: (a: Parameters<RequestStats['record']>[0]) => stats.record(a),
    onProblem,
    onSetupError: (e: { status: number; code: string; message: string }, server: string) => {
      setupErrors.push({ server, status: e.status, code: e.code, message: e.message });
      log(`${server}: SETUP ERROR ${e.status} ${e.code}: ${e.message}`);
    },
    doors,
    wheel,
    log,
  };
  fleet = m.indices.map((i) => new SimServer(m.runTag, i, m.players, m.fillSeconds, deps));
  const now = Date.now();
  fleet.forEach((s, k) => wheel.at(m.timeline.t0 + m.bootAtMs[k]!, () => s.boot()));
  setTimeout(() => meter.begin(), Math.max(0, m.timeline.t0 - now));
  setTimeout(() => meter.end(), Math.max(0, m.timeline.endMs - now));
  progressTimer = setInterval(() => send(progress(++reports % 3 === 1)), 2000);
}

/** Running totals; with `withSample`, a few servers and their players for the moderation load. */
function progress(withSample: boolean): FromChild {
  let booted = 0;
  let players = 0;
  let hbOk = 0;
  let hbSent = 0;
  let tracked = 0;
  let acked = 0;
  let queued = 0;
  let received = 0;
  let cmdAcked = 0;
  for (const s of fleet) {
    if (!s.booted) continue;
    booted++;
    players += s.players.size;
    const st = s.client.stats();
    hbOk += st.heartbeatsOk;
    hbSent += st.heartbeatsSent;
    tracked += st.eventsTracked;
    acked += st.eventsAcked;
    queued += st.eventsQueued;
    received += st.commandsReceived;
    cmdAcked += st.commandsAcked;
  }
  const sample: TargetSample[] = [];
  for (let i = 0; withSample && i < 8 && fleet.length; i++) {
    const s = fleet[Math.floor(Math.random() * fleet.length)]!;
    if (s.booted && !s.stopped) sample.push({ id: s.id, players: [...s.players.keys()] });
  }
  return { type: 'progress', booted, players, heartbeatsOk: hbOk, heartbeatsSent: hbSent, eventsTracked: tracked, eventsAcked: acked, eventsQueued: queued, requests: stats.attempts, commandsReceived: received, commandsAcked: cmdAcked, sample };
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  meter.end();
  if (progressTimer) clearInterval(progressTimer);
  await Promise.all(fleet.map((s) => s.shutdown()));
  const final: FleetFinal = {
    type: 'final',
    process: meter.result('fleet', stats.windowAttempts),
    requests: stats.toJSON(),
    slices: stats.slicesJSON(),
    heartbeats: { sent: 0, ok: 0, outcomeUnknown: 0, byStatus: {} },
    events: { tracked: 0, acked: 0, queued: 0, outcomeUnknown: 0, dropped: 0 },
    sessions: { opened: 0, closed: 0, ambiguous: 0 },
    commands: { received: 0, acked: 0, failed: 0, duplicate: 0 },
    bans: { checked: 0, answered: 0, failOpen: 0, refused: 0 },
    doors,
    problems,
    setupErrors,
  };
  for (const s of fleet) {
    const st = s.client.stats();
    final.heartbeats.sent += st.heartbeatsSent;
    final.heartbeats.ok += st.heartbeatsOk;
    final.heartbeats.outcomeUnknown += st.heartbeatsOutcomeUnknown;
    for (const [k, v] of Object.entries(st.heartbeatStatuses)) final.heartbeats.byStatus[k] = (final.heartbeats.byStatus[k] ?? 0) + v;
    final.events.tracked += st.eventsTracked;
    final.events.acked += st.eventsAcked;
    final.events.queued += st.eventsQueued;
    final.events.outcomeUnknown += st.eventsOutcomeUnknown;
    final.events.dropped += st.eventsDropped + st.eventsRejected;
    final.sessions.opened += s.sessionsOpened;
    final.sessions.closed += s.sessionsClosed;
    final.sessions.ambiguous += s.sessionsAmbiguous;
    final.commands.received += st.commandsReceived;
    final.commands.acked += st.commandsAcked;
    final.commands.failed += st.commandsFailed;
    final.commands.duplicate += st.commandsDuplicate;
    final.bans.checked += s.bansChecked;
    final.bans.answered += s.bansAnswered;
    final.bans.failOpen += s.bansFailOpen;
    final.bans.refused += s.bansRefused;
  }
  http.close();
  wheel.clear();
  // Exit once the report is handed over.
  process.send?.(final, () => process.exit(0));
}

process.on('message', (m: ToChild) => {
  if (m.type === 'start' && 'indices' in m) start(m);
  else if (m.type === 'stop') void stop();
  else if (m.type === 'nudge') for (const s of fleet) if (s.booted && !s.stopped) s.client.nudge();
});
// The coordinator went away (Ctrl-C, crash): stop without reporting.
process.on('disconnect', () => {
  if (!stopping) process.exit(1);
});
process.on('SIGINT', () => undefined); // Ctrl-C reaches the whole group: the coordinator decides and sends `stop`
// Handlers are in place: the coordinator may send `start` now.
send({ type: 'ready' });
