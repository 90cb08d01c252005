/**
 * Messages between the simulator's coordinator (packages/simulator/src/simulate.ts) and its child processes, the fleet
 * workers (fleet-worker.ts) and the probe (probe.ts), over Node's IPC channel (`fork`, advanced
 * serialization). Times are epoch ms. Not part of the service.
 */
import type { RequestStatsData, ProcessReport, SlicesData, Timeline } from './sim-stats.js';
import type { DoorPlaySummary } from './door-play.js';
import type { SetupErrorInfo } from '@gis/client';

/** What a fleet worker runs: servers `indices` of the run. */
export interface FleetStart {
  type: 'start';
  url: string;
  key: string;
  runTag: string;
  indices: number[];
  players: number;
  /** Server i boots at `timeline.t0 + bootAtMs[k]` (k = position in `indices`). */
  bootAtMs: number[];
  /** Players of a booted server arrive uniformly over this many seconds (a restart's reconnect wave). */
  fillSeconds: number;
  timeline: Timeline;
  requestTimeoutMs: number;
}

/** What the probe runs: one server at a fixed rate. */
export interface ProbeStart {
  type: 'start';
  url: string;
  key: string;
  runTag: string;
  /** Signed requests per second (every fifth a heartbeat, the rest ban checks). */
  rate: number;
  timeline: Timeline;
  requestTimeoutMs: number;
}

export type ToChild = FleetStart | ProbeStart | { type: 'stop' } | { type: 'nudge' };

/** A server of the fleet as the command load sees it (a sample, refreshed with each progress report). */
export interface TargetSample {
  id: string;
  players: string[];
}

/** Running totals of a fleet worker, every second or so. */
export interface FleetProgress {
  type: 'progress';
  booted: number;
  players: number;
  heartbeatsOk: number;
  heartbeatsSent: number;
  eventsTracked: number;
  eventsAcked: number;
  eventsQueued: number;
  requests: number;
  commandsReceived: number;
  commandsAcked: number;
  /** A few servers with their players, for the moderation load. */
  sample: TargetSample[];
}

/** Session opens/closes implied by the rosters each server reported (see fleet-worker.ts). */
export interface SessionAccounting {
  /** From rosters the service answered 200. */
  opened: number;
  closed: number;
  /** Roster changes carried only by heartbeats whose outcome is unknown: the count may be off by this much. */
  ambiguous: number;
}

/** A fleet worker's final report, after its servers shut down. */
export interface FleetFinal {
  type: 'final';
  process: ProcessReport;
  requests: RequestStatsData;
  /** The same attempts by slice of the run (sim-stats.ts `SLICE_MS`). */
  slices: SlicesData;
  heartbeats: { sent: number; ok: number; outcomeUnknown: number; byStatus: Record<string, number> };
  events: { tracked: number; acked: number; queued: number; outcomeUnknown: number; dropped: number };
  sessions: SessionAccounting;
  commands: { received: number; acked: number; failed: number; duplicate: number };
  bans: { checked: number; answered: number; failOpen: number; refused: number };
  doors: DoorPlaySummary;
  problems: Record<string, number>;
  setupErrors: (Pick<SetupErrorInfo, 'status' | 'code' | 'message'> & { server: string })[];
}

/** The probe's final report. */
export interface ProbeFinal {
  type: 'final';
  process: ProcessReport;
  requests: RequestStatsData;
  slices: SlicesData;
}

export type FromChild = { type: 'ready' } | FleetProgress | FleetFinal | ProbeFinal | { type: 'log'; line: string };
