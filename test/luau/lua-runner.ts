/**
 * Runs a Lua script under Debian's lua5.2 (installed by scripts/ensure-lua.sh in `pretest`), for the Luau
 * SDK tests. The SDK is written in the syntax Luau and Lua 5.2 share; the shims it runs against here are
 * sdk/luau/test/shim.lua.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../support/stack.js';

export const LUA = process.env.LUA_BIN ?? 'lua5.2';
export const SDK_DIR = path.join(ROOT, 'sdk/luau');

/** Runs `script` (path relative to sdk/luau) to completion; returns stdout. @throws when it exits non-zero. */
export function runLua(script: string, args: string[] = [], env: Record<string, string> = {}): string {
  const out = spawnSync(LUA, [path.join(SDK_DIR, script), ...args], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (out.error) throw out.error;
  if (out.status !== 0) throw new Error(`${LUA} ${script} exited ${out.status}: ${out.stderr}`);
  return out.stdout;
}

/** Starts `script` in the background with `env`; the caller reads its line-buffered stdout. */
export function startLua(script: string, env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(LUA, [path.join(SDK_DIR, script)], { env: { ...process.env, ...env } });
}
