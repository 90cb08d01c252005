/**
 * Doors in the simulated fleet (issue #5, "The simulator opens doors and reports decisions"): the doors a
 * game created by the simulator gets, and one simulated server's door use through the reference client's
 * {@link DoorAccess} (manifest on boot, bulk check on join, cached decisions, single checks for uncached
 * doors, failMode when unreachable, door_set_state applied). Not part of the service.
 */
import type { Db } from '../../../src/store/prisma.js';
import type { AppRedis } from '../../../src/store/redis.js';
import { addPolicy, createDoor } from '../../../src/doors/door-admin-service.js';
import { DoorAccess, type DoorAccessOptions, type DoorAnswer, type TransportResponse, type ProblemInfo } from '@gis/client';
import type { KeySpace } from '../../../src/store/keyspace/key-space.js';

/** What the fleet's door use came to: answers by outcome, by where they came from, and the reasons. */
export interface DoorPlaySummary {
  opened: number;
  allowed: number;
  denied: number;
  /** service, cache, forced, fail_mode. */
  bySource: Record<string, number>;
  /** Reasons with the policy id cut off (`policy_allow`, `default_deny`, ...). */
  byReason: Record<string, number>;
}

/**
 * Creates the simulated game's doors: a public gate (allow by default, fails open), an armory for the
 * red team's first players only, a lounge open during a time window around now, and a heli spawner denied
 * to everyone but named users, all through the operator service (so the doors version moves as usual).
 */
export async function seedSimulatedDoors(deps: { db: Db; redis: AppRedis; keySpace: KeySpace }, gameId: string, vipUsers: string[]): Promise<string[]> {
  const actor = 'simulator';
  await createDoor(deps, { gameId, key: 'front-gate', name: 'Front gate', kind: 'door', defaultEffect: 'allow', failMode: 'open' }, actor);
  await createDoor(deps, { gameId, key: 'armory', name: 'Armory', kind: 'locker', defaultEffect: 'deny', failMode: 'closed' }, actor);
  await addPolicy(deps, { gameId, doorKey: 'armory', effect: 'allow', subjectType: 'users', subjectIds: vipUsers }, actor);
  await createDoor(deps, { gameId, key: 'lounge', name: 'Lounge', kind: 'zone', defaultEffect: 'deny', failMode: 'open' }, actor);
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  const now = Date.now();
  await addPolicy(deps, { gameId, doorKey: 'lounge', effect: 'allow', subjectType: 'everyone', conditions: { timeWindow: { from: hhmm(now - 3_600_000), to: hhmm(now + 3_600_000), timeZone: 'UTC' } } }, actor);
  await createDoor(deps, { gameId, key: 'heli-spawner', name: 'Helicopter spawner', kind: 'spawner', defaultEffect: 'allow', failMode: 'closed' }, actor);
  await addPolicy(deps, { gameId, doorKey: 'heli-spawner', effect: 'deny', subjectType: 'everyone', priority: 0 }, actor);
  await addPolicy(deps, { gameId, doorKey: 'heli-spawner', effect: 'allow', subjectType: 'users', subjectIds: vipUsers, priority: 10 }, actor);
  return ['front-gate', 'armory', 'lounge', 'heli-spawner'];
}

/** One simulated server's doors: players open a random door of the manifest now and then. */
export class DoorPlay {
  readonly access: DoorAccess;
  /** The manifest's door keys, read again when the manifest version changes. */
  private keys: string[] = [];
  private keysVersion: number | null = null;

  /**
   * @param into where answers are counted (one summary per simulator process: nothing per answer is kept).
   * @param accessOptions more options of the server's {@link DoorAccess} (boot window, random source).
   */
  constructor(
    request: (method: string, path: string, body?: unknown) => Promise<TransportResponse>,
    externalServerId: string,
    onProblem: (p: ProblemInfo) => void,
    private readonly into: DoorPlaySummary = emptyDoorSummary(),
    accessOptions: Partial<DoorAccessOptions> = {},
  ) {
    this.access = new DoorAccess({ ...accessOptions, request, externalServerId, onProblem });
  }

  /** Player `externalId` opens a random door of the manifest (nothing before the first manifest). */
  open(externalId: string): void {
    if (this.access.manifestVersion !== this.keysVersion) {
      this.keys = this.access.doorKeys();
      this.keysVersion = this.access.manifestVersion;
    }
    const keys = this.keys;
    if (!keys.length) return;
    const key = keys[Math.floor(Math.random() * keys.length)]!;
    void this.access.check(key, externalId).then((a) => countAnswer(this.into, a));
  }

  /** Each player opens a door with probability `chance` (per call; the simulator calls once a second). */
  tick(players: Iterable<{ externalId: string }>, chance: number): void {
    for (const p of players) if (Math.random() < chance) this.open(p.externalId);
  }

  /** Adds this server's answers to `into` (when they were not counted into it already). */
  addTo(into: DoorPlaySummary): void {
    if (into !== this.into) mergeDoorSummary(into, this.into);
  }
}

/** Counts one answer. */
export function countAnswer(into: DoorPlaySummary, a: DoorAnswer): void {
  into.opened++;
  if (a.allowed) into.allowed++;
  else into.denied++;
  into.bySource[a.source] = (into.bySource[a.source] ?? 0) + 1;
  const colon = a.reason.indexOf(':');
  const reason = colon < 0 ? a.reason : a.reason.slice(0, colon);
  into.byReason[reason] = (into.byReason[reason] ?? 0) + 1;
}

/** Adds `from` into `into`. */
export function mergeDoorSummary(into: DoorPlaySummary, from: DoorPlaySummary): DoorPlaySummary {
  into.opened += from.opened;
  into.allowed += from.allowed;
  into.denied += from.denied;
  for (const [k, v] of Object.entries(from.bySource)) into.bySource[k] = (into.bySource[k] ?? 0) + v;
  for (const [k, v] of Object.entries(from.byReason)) into.byReason[k] = (into.byReason[k] ?? 0) + v;
  return into;
}

/** An empty summary. */
export function emptyDoorSummary(): DoorPlaySummary {
  return { opened: 0, allowed: 0, denied: 0, bySource: {}, byReason: {} };
}
