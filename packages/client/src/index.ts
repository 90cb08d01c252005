/**
 * Public surface of the reference client `@gis/client` (see game-client.ts for the rules it follows and
 * the package README for a quick start). Depends on Node's built-ins only.
 */
export { GameClient, parseHeartbeatResponse, DEFAULT_SDK_VERSION, DEFAULT_INITIAL_INTERVAL_SECONDS, MIN_ID_RETENTION_MS } from './game-client.js';
export type { GameClientOptions, TrackInput } from './game-client.js';
export { SignedTransport, TransportError, KeyFormatError, encodeBody } from './http-transport.js';
export type { TransportOptions, TransportResponse, AttemptInfo, FetchLike, FetchLikeResponse } from './http-transport.js';
export { signRequest, NONCE_PARAM } from './signature.js';
export { EventQueue, entryOf } from './event-queue.js';
export type { QueuedEvent } from './event-queue.js';
export { CommandTracker } from './command-tracker.js';
export type { CommandResults } from './command-tracker.js';
export { Roster } from './roster.js';
export { percentile, StatsRecorder } from './client-stats.js';
export type { ClientStats } from './client-stats.js';
export { backoffDelayMs, parseRetryAfterMs, DEFAULT_BACKOFF } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export { systemClock, realSleep } from './clock.js';
export type { Clock } from './clock.js';
export { DoorAccess } from './door-access.js';
export type { DoorAccessOptions, DoorAnswer, ManifestDoor } from './door-access.js';
export { checkBan } from './ban-check.js';
export { BusyGate } from './busy-gate.js';
export type { BanCheckResult, BanFailMode } from './ban-check.js';
export * from './client-types.js';
