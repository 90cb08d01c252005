/**
 * The game server's current roster (spec: Heartbeat request body, `players`: the full current roster,
 * not a delta). Presence is reconciled by state on the service, so the client only keeps who is here now;
 * a lost heartbeat self-corrects on the next. Its JSON is kept between heartbeats ({@link Roster.toJSONText}):
 * a roster that did not change is not serialised again.
 */
import type { PlayerEntry } from './client-types.js';

/** The players on one game server now, keyed by `externalId`, in join order; see the module comment. */
export class Roster {
  private readonly players = new Map<string, PlayerEntry>();
  /** Each player's JSON, made when first sent, dropped when the player changes. */
  private readonly fragments = new Map<string, string>();
  /** The whole roster as JSON, until it changes. */
  private text: string | null = null;

  /** Players on the server now. */
  get size(): number {
    return this.players.size;
  }

  /** Replaces the whole roster (entries are copied; a duplicate externalId keeps the last entry). */
  set(players: readonly PlayerEntry[]): void {
    this.players.clear();
    this.fragments.clear();
    this.text = null;
    for (const p of players) this.players.set(p.externalId, { ...p });
  }

  /** Adds or replaces one player. */
  add(player: PlayerEntry): void {
    this.players.set(player.externalId, { ...player });
    this.changed(player.externalId);
  }

  /** Removes a player; true when they were on the roster. */
  remove(externalId: string): boolean {
    if (!this.players.delete(externalId)) return false;
    this.changed(externalId);
    return true;
  }

  /** Changes fields of a player who is on the roster; false when they are not. */
  update(externalId: string, patch: Partial<Omit<PlayerEntry, 'externalId'>>): boolean {
    const p = this.players.get(externalId);
    if (!p) return false;
    this.players.set(externalId, { ...p, ...patch, externalId });
    this.changed(externalId);
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

  /**
   * The roster as the heartbeat's `players` JSON: the same text as `JSON.stringify(list())`. Kept until the
   * roster changes, each player's part until that player changes, so a heartbeat serialises only the
   * players who joined or changed since the last one.
   */
  toJSONText(): string {
    if (this.text === null) {
      const parts: string[] = [];
      for (const [id, p] of this.players) {
        let part = this.fragments.get(id);
        if (part === undefined) {
          part = JSON.stringify(p);
          this.fragments.set(id, part);
        }
        parts.push(part);
      }
      this.text = `[${parts.join(',')}]`;
    }
    return this.text;
  }

  private changed(externalId: string): void {
    this.fragments.delete(externalId);
    this.text = null;
  }
}
