/**
 * Runs the Luau SDK's test drivers (sdk/luau/test/*.luau) under real Luau: `../shared/tools/luau/luau`
 * beside the repository (release 735; /work/shared/tools/luau/README.md), as CI has it on a clean clone.
 * `LUAU_TOOLS_DIR` points elsewhere (a worktree whose parent lacks `shared/`). Missing tools fail the
 * tests with a message saying where they were looked for; nothing is skipped.
 *
 * The Luau CLI has no io library, so the SDK cannot read its own files: each run stages a copy of sdk/luau
 * in a temporary directory with `test/sdk-sources.luau` (every GameIntegration module's text, which the
 * shim loads with loadstring and the platform globals) and any generated data modules.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/stack.js';

export const SDK_DIR = path.join(ROOT, 'sdk/luau');
export const LUAU_TOOLS_DIR = path.resolve(process.env.LUAU_TOOLS_DIR ?? path.join(ROOT, '../shared/tools/luau'));
export const LUAU = path.join(LUAU_TOOLS_DIR, 'luau');
export const LUAU_ANALYZE = path.join(LUAU_TOOLS_DIR, 'luau-analyze');

/** @throws when luau or luau-analyze is not where CI puts it (../shared/tools/luau/ beside the repo). */
export function assertLuauTools(): void {
  for (const tool of [LUAU, LUAU_ANALYZE]) {
    if (!existsSync(tool)) {
      throw new Error(`Luau tool missing: ${tool}. The Luau SDK tests need ../shared/tools/luau/{luau,luau-analyze} beside the repository (release 735); set LUAU_TOOLS_DIR to another copy.`);
    }
  }
}

/** `text` as a Luau long-bracket string literal (a level no `]=*]` inside it closes). */
function longString(text: string): string {
  let eq = '';
  while (text.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[\n${text}]${eq}]`;
}

/** A temporary copy of sdk/luau with test/sdk-sources.luau and `extra` files (name -> text) in test/. */
export function stageSdk(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'luau-sdk-'));
  cpSync(SDK_DIR, dir, { recursive: true });
  const modules = readdirSync(path.join(SDK_DIR, 'GameIntegration')).filter((f) => f.endsWith('.luau'));
  const entries = modules.map((f) => `\t[${JSON.stringify(f.slice(0, -'.luau'.length))}] = ${longString(readFileSync(path.join(SDK_DIR, 'GameIntegration', f), 'utf8'))},\n`);
  writeFileSync(path.join(dir, 'test', 'sdk-sources.luau'), `return {\n${entries.join('')}}\n`);
  for (const [name, text] of Object.entries(extra)) writeFileSync(path.join(dir, 'test', name), text);
  return dir;
}

/**
 * Runs `script` (path relative to sdk/luau) to completion under luau (`--codegen` with `codegen`) with
 * program arguments `args`; returns stdout. @throws when it exits non-zero or printed a TASK_ERROR.
 */
export function runLuau(script: string, opts: { args?: string[]; extra?: Record<string, string>; codegen?: boolean } = {}): string {
  assertLuauTools();
  const dir = stageSdk(opts.extra);
  try {
    const argv = [...(opts.codegen ? ['--codegen'] : []), path.join(dir, script), '-a', ...(opts.args ?? [])];
    const out = spawnSync(LUAU, argv, { encoding: 'utf8', maxBuffer: 256 << 20 });
    if (out.error) throw out.error;
    if (out.status !== 0) throw new Error(`luau ${script} exited ${out.status}:\n${out.stdout.slice(-4000)}\n${out.stderr}`);
    if (/^TASK_ERROR /m.test(out.stdout)) throw new Error(`luau ${script}: a thread raised:\n${out.stdout.split('\n').filter((l) => l.startsWith('TASK_ERROR')).join('\n')}`);
    return out.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts `script` under `luau -i` (after the script, the REPL reads statements from stdin: how the Node
 * side answers HTTP requests in the end-to-end run). stdout is a pipe, which C stdio buffers whole and the
 * CLI has no flush: coreutils' `stdbuf -oL` makes it line-buffered. The caller ends it by closing stdin;
 * `cleanup` removes the staged copy.
 */
export function startLuau(script: string, args: string[]): { proc: ChildProcessWithoutNullStreams; cleanup: () => void } {
  assertLuauTools();
  const dir = stageSdk();
  const proc = spawn('stdbuf', ['-oL', LUAU, path.join(dir, script), '-i', '-a', ...args]);
  return { proc, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
