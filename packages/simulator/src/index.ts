/**
 * @gis/simulator: the simulated fleet (`npm run simulate`, packages/simulator/src/simulate.ts) and the parts
 * of it the benches and tests use by this package's name. A workspace package of this repository, never
 * published: its coordinator sets its game up straight in the service's Postgres and Redis (src/), and its
 * servers play through the reference client (@gis/client). How to play a fleet: this package's README.
 */
import { fileURLToPath } from 'node:url';

/** Absolute path of a fleet worker process's entry point (fork it with `--import tsx`; protocol.ts says what it is told and answers). */
export const FLEET_WORKER_SCRIPT = fileURLToPath(new URL('./fleet-worker.ts', import.meta.url));

export { CloudMessagingImitation, type ImitationOptions, type RecordedPublish, type ScriptedReply } from './cloud-messaging-imitation.js';
export { attachNudgeImitation, CommandLoad, type CommandLoadSummary } from './command-load.js';
export { seedSimulatedDoors, type DoorPlaySummary } from './door-play.js';
export type { LatencySummary } from './histogram.js';
export { keepAliveFetch, type KeepAliveFetchOptions } from './keep-alive-fetch.js';
export { descendants, machineJiffies, processCpu, processCpuSeconds, processTreeCpuSeconds, voluntarySwitches } from './proc-stat.js';
export type { FleetFinal, FleetProgress, FleetStart, FromChild, ProbeFinal, ProbeStart, ToChild } from './protocol.js';
export { describeLoopAndGc, RequestStats, SLICE_MS, type ProcessReport, type ProbeSlice, type SliceData, type SlicesData, type Timeline, type TimelineSummary } from './sim-stats.js';
export { DEFAULT_SLOT_MS, TimerWheel } from './timer-wheel.js';
