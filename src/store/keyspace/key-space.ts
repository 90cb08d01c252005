/**
 * The key space of one deployment: the one object that turns the Redis prefix into keys (issue #18,
 * "One key space"). Each process builds it once at boot from the validated config (`REDIS_PREFIX`,
 * src/config.ts): src/server.ts, workers/index.ts, the admin CLI (src/adapters/admin/cli.ts), the scripts that
 * touch Redis, and the test harness. Services receive it through their constructors or dependency
 * objects, beside `redis` and `db`, and never see the prefix string itself (BullMQ's `QueueKeys` is the
 * model: keys are made in one place and handed to the Lua scripts as KEYS).
 *
 * What it guarantees:
 * - every key of one game is `<prefix>:{g:<gameId>}<suffix>…` ({@link GameKeys}), every key of one
 *   workspace `<prefix>:{w:<workspaceId>}:…` ({@link WorkspaceKeys}): one Redis Cluster hash slot per
 *   game and per workspace, so each Lua script and MULTI stays in one slot;
 * - the cross-game keys ({@link GlobalKeys}) and BullMQ's prefix are `<prefix>:…`;
 * - key names are exactly those of src/store/keys.ts (whose suffixes are spelled once, in
 *   src/store/keyspace/suffixes.ts); this class only decides who may build them.
 *
 * `npm run lint` keeps it so: `new GameKeys(`, `new WorkspaceKeys(` and `new GlobalKeys(` are refused
 * outside this file, and the identifier `redisPrefix` in src/, workers/ and scripts/support/ outside the
 * config and the entry points that build a KeySpace (eslint.config.js).
 */
import { GameKeys, GlobalKeys, WorkspaceKeys } from '../keys.js';

export class KeySpace {
  /** Keys that are not per game or per workspace (active games, the invalidation channel, indexes, BullMQ's prefix). */
  readonly global: GlobalKeys;

  /**
   * @param prefix the deployment's Redis prefix, `REDIS_PREFIX` as validated by src/config.ts
   *   (`[A-Za-z0-9_-]{1,32}`); tests and benchmarks choose a random one to keep their keys apart.
   * @param layout which layout replay claims and user locations are written in: `legacyWrites` (src/config.ts
   *   `LEGACY_LAYOUT_WRITES`, default false) for an upgrade's first step (src/store/lua/lib/replay-claim.ts,
   *   user-location.ts).
   */
  constructor(
    private readonly prefix: string,
    private readonly layout: { legacyWrites: boolean } = { legacyWrites: false },
  ) {
    this.global = new GlobalKeys(prefix);
  }

  /** The keys of one game, all under `<prefix>:{g:<gameId>}` (one Cluster slot). A new view per call; building it is one string concatenation. */
  game(gameId: string): GameKeys {
    return new GameKeys(this.prefix, gameId, this.layout.legacyWrites);
  }

  /** The keys of one workspace, all under `<prefix>:{w:<workspaceId>}` (one Cluster slot): its blocklist. */
  workspace(workspaceId: string): WorkspaceKeys {
    return new WorkspaceKeys(this.prefix, workspaceId);
  }

  /**
   * A SCAN `MATCH` pattern within this key space: `<prefix>:<glob>` (default `<prefix>:*`, every key of
   * the deployment, BullMQ's included). For clean-up and inspection by tools and tests, never for a
   * request path (SCAN walks the whole keyspace of a node).
   */
  scanPattern(glob = '*'): string {
    return `${this.prefix}:${glob}`;
  }
}
