/**
 * Moderation load for the simulator and scripts/bench/commands.ts: issues random commands to a simulated
 * fleet through the real service (src/commands/command-service.ts) and measures where they ended up and
 * how long issue → ack took, from the command hashes in Redis (issuedAt `iat` and the ack's `doneAt`,
 * both server time in ms). Also wires a game to the local cloud messaging imitation so the fleet
 * receives urgent nudges. Not part of the service.
 */
import type { Db } from '../../../src/store/prisma.js';
import type { AppRedis } from '../../../src/store/redis.js';
import { DomainError } from '../../../src/errors.js';
import { issueCommand } from '../../../src/commands/command-service.js';
import type { NudgeRequester } from '../../../src/commands/nudge-queue.js';
import { NUDGE_TOPIC } from '../../../src/commands/nudge-publisher.js';
import { percentile } from '@gis/client';
import { CloudMessagingImitation } from './cloud-messaging-imitation.js';
import type { KeySpace } from '../../../src/store/keyspace/key-space.js';

/** A server of the fleet as the load sees it: its id and who is on it now. */
export interface FleetServer {
  id: string;
  players: () => string[];
}

export interface CommandLoadDeps {
  db: Db;
  redis: AppRedis;
  keySpace: KeySpace;
  gameId: string;
  /** Nudge requests go here (the game's nudgesEnabled decides whether one is made). */
  nudges?: NudgeRequester;
  issuedBy: string;
  /** Command expiry, seconds (default 120). */
  expiresInSeconds?: number;
}

/** Where the issued commands stand, and issue → ack latency of the acked ones (ms). */
export interface CommandLoadSummary {
  issued: number;
  /** Refused at issue time (queue full, server gone): not counted in `issued`. */
  refused: number;
  acked: number;
  failed: number;
  expired: number;
  /** Still pending or dispatched. */
  open: number;
  issueToAckMs: { p50: number | null; p99: number | null; max: number | null };
}

const USER_TYPES = ['kick', 'mute', 'unmute', 'freeze', 'teleport', 'message'] as const;

function payloadOf(type: string): Record<string, unknown> {
  switch (type) {
    case 'kick':
      return { reason: 'simulated moderation' };
    case 'mute':
      return { durationSeconds: 300, reason: 'simulated' };
    case 'teleport':
      return { place: 'spawn' };
    case 'message':
      return { text: 'a message from the moderators' };
    default:
      return {};
  }
}

export class CommandLoad {
  private readonly ids: string[] = [];
  private refused = 0;

  constructor(private readonly deps: CommandLoadDeps) {}

  /**
   * Issues one command: nine in ten to a random player of a random server (`userTypes`, default every
   * user type), one in ten a message to the server itself. Refusals (DomainError) are counted, not thrown.
   */
  async issueRandom(fleet: readonly FleetServer[], userTypes: readonly string[] = USER_TYPES): Promise<void> {
    const server = fleet[Math.floor(Math.random() * fleet.length)];
    if (!server) return;
    const players = server.players();
    const toServer = Math.random() < 0.1 || !players.length;
    const type = toServer ? 'message' : userTypes[Math.floor(Math.random() * userTypes.length)]!;
    const target = toServer ? { externalServerId: server.id } : { externalId: players[Math.floor(Math.random() * players.length)]! };
    try {
      const c = await issueCommand(
        { db: this.deps.db, redis: this.deps.redis, keySpace: this.deps.keySpace, nudges: this.deps.nudges },
        { gameId: this.deps.gameId, type, payload: payloadOf(type), target, issuedBy: this.deps.issuedBy, expiresInSeconds: this.deps.expiresInSeconds ?? 120 },
      );
      this.ids.push(c.id);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.refused++;
    }
  }

  /** Ids issued so far. */
  get issuedIds(): readonly string[] {
    return this.ids;
  }

  /** Reads every issued command's live state and summarises it. */
  async summary(): Promise<CommandLoadSummary> {
    const keys = this.deps.keySpace.game(this.deps.gameId);
    const pipeline = this.deps.redis.pipeline();
    for (const id of this.ids) pipeline.hmget(keys.command(id), 'status', 'iat', 'doneAt');
    const states = this.ids.length ? ((await pipeline.exec()) ?? []).map((r) => r[1] as (string | null)[]) : [];
    const count = (st: string) => states.filter((s) => s[0] === st).length;
    const latencies = states.filter((s) => s[0] === 'acked').map((s) => Number(s[2]) - Number(s[1]));
    const stat = (p: number) => (latencies.length ? percentile(latencies, p) : null);
    return {
      issued: this.ids.length,
      refused: this.refused,
      acked: count('acked'),
      failed: count('failed'),
      expired: count('expired'),
      open: count('pending') + count('dispatched'),
      issueToAckMs: { p50: stat(50), p99: stat(99), max: stat(100) },
    };
  }

  /** Waits until no issued command is open, or `timeoutMs` passed; returns the final summary. */
  async settle(timeoutMs: number, pollMs = 250): Promise<CommandLoadSummary> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.summary();
      if (!s.open || Date.now() >= deadline) return s;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}

/**
 * Points `gameId`'s platform settings at a fresh local cloud messaging imitation and turns nudges on.
 * `onNudge` subscriptions receive what the game's servers would. Stop the returned imitation when done.
 */
export async function attachNudgeImitation(db: Db, gameId: string, universeId = 'simulated-universe'): Promise<{ platform: CloudMessagingImitation; subscribe: (onNudge: () => void) => () => void }> {
  const apiKey = `imitation-${gameId}`;
  const platform = new CloudMessagingImitation({ apiKey, enforceReceiveBudget: true });
  await platform.start();
  await db.game.update({ where: { id: gameId }, data: { universeId, cloudApiBaseUrl: platform.baseUrl, cloudApiKey: apiKey, nudgesEnabled: true } });
  return { platform, subscribe: (onNudge) => platform.subscribe(universeId, NUDGE_TOPIC, () => onNudge()) };
}
