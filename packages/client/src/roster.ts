/**
 * The game server's current roster (spec: Heartbeat request body, `players`: the full current roster,
 * not a delta). Presence is reconciled by state on the service, so the client only keeps who is here now;
 * a lost heartbeat self-corrects on the next.
 */
import type { PlayerEntry } from './client-types.js';

/** The players on one game server now, keyed by `externalId`, in join order; see the module comment. */
export class Roster {
  private readonly players = new Map<string, PlayerEntry>();

  /** Players on the server now. */
  get size(): number {
    return this.players.size;
  }

  /** Replaces the whole roster (entries are copied; a duplicate externalId keeps the last entry). */
  set(players: readonly PlayerEntry[]): void {
    this.players.clear();
    for (const p of players) this.players.set(p.externalId, { ...p });
  }

  /** Adds or replaces one player. */
  add(player: PlayerEntry): void {
    this.players.set(player.externalId, { ...player });
  }

  /** Removes a player; true when they were on the roster. */
  remove(externalId: string): boolean {
    return this.players.delete(externalId);
  }

  /** Changes fields of a player who is on the roster; false when they are not. */
  update(externalId: string, patch: Partial<Omit<PlayerEntry, 'externalId'>>): boolean {
    const p = this.players.get(externalId);
    if (!p) return false;
    this.players.set(externalId, { ...p, ...patch, externalId });
    return true;
  }

  /** One player, or undefined. */
  get(externalId: string): PlayerEntry | undefined {
    const p = this.players.get(externalId);
    return p ? { ...p } : undefined;
  }

  /** True when the player is on the roster. */
  has(externalId: string): boolean {
    return this.players.has(externalId);
  }

  /** The roster as sent in a heartbeat: a fresh array of copies, in join order. */
  list(): PlayerEntry[] {
    return [...this.players.values()].map((p) => ({ ...p }));
  }
}
