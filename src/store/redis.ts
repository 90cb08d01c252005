/**
 * Redis connections. One client per role per process, never per request. The Lua scripts are registered
 * once with `defineCommand` (EVALSHA after the first call). Each script is the file `lua/<name>.lua`
 * preceded by the generated suffix table (src/store/keyspace/suffixes.ts) and `lua/lib/common.lua`; it
 * receives its keys as KEYS and its arguments as one msgpack-packed table (issue #18).
 */
import { readFileSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { Redis, type RedisOptions } from 'ioredis';
import { watchConnection } from './connection-state.js';
import { luaSuffixPreamble } from './keyspace/suffixes.js';

const luaDir = new URL('./lua/', import.meta.url);

/** The project's Lua scripts, by command name (file `<kebab-case name>.lua`). */
const SCRIPTS = ['heartbeat', 'sweepServer', 'issueCommand', 'expireCommands', 'nudgeAdmit', 'banLookup', 'banSync', 'banWriteSlot', 'doorLookup', 'doorStore', 'raiseDoorsVersion', 'banCheckClaim'] as const;

export type ScriptName = (typeof SCRIPTS)[number];

/** A script's named arguments: strings, numbers, booleans and arrays or maps of them (no null: Lua tables drop nil; no Buffer: Redis's cmsgpack rejects msgpack bin). */
export type ScriptArgs = Record<string, unknown>;

/** A Redis client with the project's Lua commands available as `runScript`. */
export interface AppRedis extends Redis {
  /**
   * Runs script `name` with `keys` as KEYS (all in one Cluster slot) and `args` packed once with msgpack
   * as ARGV[1] (the script reads it as the table `A`). Resolves to the script's reply.
   */
  runScript(name: ScriptName, keys: string[], args: ScriptArgs): Promise<unknown>;
}

// Plain msgpack maps and arrays (no msgpackr record extension): Redis's cmsgpack decodes them into tables.
const packr = new Packr({ useRecords: false });

function fileName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The source Redis runs for script `name`: suffix table, shared library, the script itself. */
export function scriptSource(name: ScriptName): string {
  const lib = readFileSync(new URL('lib/common.lua', luaDir), 'utf8');
  return luaSuffixPreamble() + lib + readFileSync(new URL(`${fileName(name)}.lua`, luaDir), 'utf8');
}

/**
 * Bounds on how long an API command waits for a dead Redis, so a request answers 503 within 1 s
 * (README "Dependency outages"): reconnect attempts at most {@link RECONNECT_MAX_DELAY_MS} apart, a command
 * queued while disconnected fails after one failed attempt, and any command gives up after
 * {@link COMMAND_TIMEOUT_MS}. Measured: 0.1–0.5 s to the 503 (scripts/outage-probe.ts).
 */
export const RECONNECT_MAX_DELAY_MS = 500;
export const COMMAND_TIMEOUT_MS = 800;

/**
 * Connects to `url`. `forWorker` sets `maxRetriesPerRequest: null` as BullMQ requires for blocking
 * connections (no command timeout either: blocking reads wait by design); API clients fail fast instead
 * so a request never hangs on a dead Redis. `autoPipelining` (the API's client) turns on ioredis's public
 * `enableAutoPipelining`: the commands sent in one event-loop tick go out in one write. Connection state
 * changes are logged once each (store/connection-state.ts).
 */
export function createRedis(url: string, opts: { forWorker?: boolean; name?: string; autoPipelining?: boolean } = {}): AppRedis {
  const options: RedisOptions = {
    connectionName: opts.name,
    maxRetriesPerRequest: opts.forWorker ? null : 1,
    ...(opts.forWorker ? {} : { commandTimeout: COMMAND_TIMEOUT_MS }),
    // Reconnect quickly (ioredis's default backs off to 2 s): recovery is prompt once Redis returns.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, RECONNECT_MAX_DELAY_MS),
    // Replaces a patch of ioredis internals that corked the socket (issue #18: no patching of library
    // internals); heartbeat throughput before/after: docs/benchmarks.md "One key space".
    enableAutoPipelining: opts.autoPipelining ?? false,
    lazyConnect: false,
  };
  const client = new Redis(url, options) as AppRedis;
  watchConnection(client, { name: opts.name ?? 'redis' });
  for (const name of SCRIPTS) {
    client.defineCommand(name, { lua: scriptSource(name) });
  }
  client.runScript = function runScript(name, keys, args) {
    const fn = (this as unknown as Record<string, (...a: (string | number | Buffer)[]) => Promise<unknown>>)[name]!;
    // no numberOfKeys at definition: ioredis then takes the key count as the first argument
    return fn.call(this, keys.length, ...keys, packr.pack(args));
  };
  return client;
}
