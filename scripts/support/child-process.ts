/**
 * scripts/support/child-process.ts — the one place the scripts start, health-check and stop child
 * processes (issue #18).
 *
 * Two shapes:
 *   - `runCommand`: a command run to completion (redis-server --daemonize, initdb, pg_ctl, prisma), output
 *     captured for the error message; never throws for a non-zero exit.
 *   - `ManagedChild` (via `startChild` / `startNodeScript`): a long-running child (the API, the workers, a
 *     baseline server) whose recent output is kept for error messages, which can be waited for (a health
 *     URL or an output line, with a timeout, failing at once if the child exits) and stopped (SIGTERM,
 *     then SIGKILL after a grace period).
 * Children inherit this process's environment plus the `env` given (a value of `undefined` removes a
 * variable), because the scripts pass DATABASE_URL, REDIS_URL and the like down unchanged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (scripts/support/../..): the working directory children run in unless told otherwise. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Default grace period between SIGTERM and SIGKILL, in milliseconds. */
export const STOP_GRACE_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Node 24 of `node_modules/.bin/node` (what the npm scripts use), else the Node running this script. */
export function nodeBinary(): string {
  const local = path.join(ROOT, 'node_modules', '.bin', 'node');
  return fs.existsSync(local) ? local : process.execPath;
}

/** `process.env` overlaid with `extra`; an `undefined` value removes the variable. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * Polls `check` every `intervalMs` until it returns true (→ true) or `timeoutMs` have passed (→ false).
 * A check that throws counts as false.
 */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

/** The last `lines` lines of `text`, for error messages. */
export function tail(text: string, lines = 15): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

// ---------------------------------------------------------------------------------------------------
// Run to completion

export interface RunOptions {
  /** Working directory; default the repository root. */
  cwd?: string;
  /** Added to the inherited environment (see `childEnv`). */
  env?: Record<string, string | undefined>;
  /** SIGTERM the command after this many milliseconds; the output then ends with a "(timed out …)" line. */
  timeoutMs?: number;
  /**
   * For commands that linger after their work is done: once the output matches, the command is given
   * `doneGraceMs` (default 1,500 ms) to exit and is then terminated, with `finishedEarly` set.
   */
  doneWhen?: RegExp;
  doneGraceMs?: number;
}

export interface RunResult {
  /** Exit code; null when killed by a signal or not started. */
  code: number | null;
  /** stdout and stderr, interleaved as they arrived. */
  output: string;
  /** Set when the command could not be started (ENOENT and the like). */
  error?: Error;
  /** Terminated by us after its output matched `doneWhen` and the grace period ran out. */
  finishedEarly?: boolean;
}

/** Runs `cmd args` to completion and captures its output. Never throws (see `RunResult`). */
export function runCommand(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    let finishedEarly = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          output += `\n(timed out after ${opts.timeoutMs} ms)`;
          child.kill('SIGTERM');
        }, opts.timeoutMs)
      : undefined;
    const onData = (d: Buffer): void => {
      output += d.toString();
      if (opts.doneWhen && !graceTimer && opts.doneWhen.test(output)) {
        graceTimer = setTimeout(() => {
          finishedEarly = true;
          child.kill('SIGTERM');
        }, opts.doneGraceMs ?? 1_500);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const finish = (result: RunResult): void => {
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      resolve(result);
    };
    child.on('error', (error) => finish({ code: null, output, error }));
    child.on('close', (code) => finish({ code, output, finishedEarly }));
  });
}

/** Runs `cmd args` with the terminal as its stdio (output shown as it comes); resolves to its exit code (1 when killed or not started). */
export function runInherited(cmd: string, args: readonly string[], opts: Pick<RunOptions, 'cwd' | 'env'> = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: childEnv(opts.env), stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

// ---------------------------------------------------------------------------------------------------
// Long-running children

/** Which output lines a child echoes to this process's stderr, prefixed with `[name]`. */
export type Echo = 'all' | 'none' | 'problems' | RegExp;

/** Lines that look like trouble: winston warn/error lines and anything naming an Error. */
const PROBLEM_LINE = /"level":"(warn|error)"|Error/;

export interface StartOptions {
  /** Label for messages and echoed lines. */
  name: string;
  command: string;
  args: readonly string[];
  /** Working directory; default the repository root. */
  cwd?: string;
  /** Added to the inherited environment (see `childEnv`). */
  env?: Record<string, string | undefined>;
  /** Default 'problems'. */
  echo?: Echo;
  /** Lines of output kept for error messages; default 40. */
  keepLines?: number;
  /** Print the kept output to stderr when the child exits without `stop()` having been called. */
  reportUnexpectedExit?: boolean;
}

/** A long-running child process; see the module comment. */
export class ManagedChild {
  readonly name: string;
  readonly proc: ChildProcess;
  /** Resolves when the child has exited (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly lines: string[] = [];
  private readonly keepLines: number;
  private stopping = false;
  private hasExited = false;
  private partial = '';

  constructor(opts: StartOptions) {
    this.name = opts.name;
    this.keepLines = opts.keepLines ?? 40;
    const echo = opts.echo ?? 'problems';
    this.proc = spawn(opts.command, opts.args, { cwd: opts.cwd ?? ROOT, env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk: Buffer): void => {
      const parts = (this.partial + chunk.toString('utf8')).split('\n');
      this.partial = parts.pop() ?? '';
      for (const line of parts) this.onLine(line, echo);
    };
    this.proc.stdout!.on('data', onData);
    this.proc.stderr!.on('data', onData);
    this.exited = new Promise((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.hasExited) return;
        this.hasExited = true;
        if (this.partial) this.onLine(this.partial, echo);
        if (opts.reportUnexpectedExit && !this.stopping) {
          process.stderr.write(`[${this.name}] exited unexpectedly (code ${code}, signal ${signal}); last output:\n${this.output()}\n`);
        }
        resolve({ code, signal });
      };
      this.proc.once('exit', done);
      this.proc.once('error', (err) => {
        this.lines.push(`(could not start: ${err.message})`);
        done(null, null);
      });
    });
  }

  private onLine(line: string, echo: Echo): void {
    if (!line.trim()) return;
    this.lines.push(line);
    if (this.lines.length > this.keepLines) this.lines.shift();
    const show = echo === 'all' || (echo === 'problems' && PROBLEM_LINE.test(line)) || (echo instanceof RegExp && echo.test(line));
    if (show) process.stderr.write(`[${this.name}] ${line}\n`);
  }

  /** True once the child has exited. */
  get hasStopped(): boolean {
    return this.hasExited;
  }

  /** The last lines of output (at most `keepLines`). */
  output(): string {
    return this.lines.join('\n');
  }

  /**
   * Resolves once GET `url` answers 2xx, polling every `intervalMs`.
   * @throws Error when the child exits first or `timeoutMs` passes; the message carries its last output.
   */
  async waitForUrl(url: string, timeoutMs = 30_000, intervalMs = 100): Promise<void> {
    const ok = await this.waitFor(() => fetch(url).then((r) => r.ok, () => false), timeoutMs, intervalMs);
    if (!ok) throw this.failure(`did not answer ${url} within ${timeoutMs} ms`);
  }

  /**
   * Resolves once a line of output (kept or already echoed) matches `pattern`.
   * @throws Error when the child exits first or `timeoutMs` passes.
   */
  async waitForLine(pattern: RegExp, timeoutMs = 30_000): Promise<void> {
    const ok = await this.waitFor(() => this.lines.some((l) => pattern.test(l)), timeoutMs, 50);
    if (!ok) throw this.failure(`printed no line matching ${pattern} within ${timeoutMs} ms`);
  }

  private async waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs: number): Promise<boolean> {
    let exitedFirst = false;
    const ok = await waitUntil(async () => {
      if (this.hasExited) return (exitedFirst = true);
      return check();
    }, timeoutMs, intervalMs);
    if (exitedFirst) {
      const { code, signal } = await this.exited;
      throw this.failure(`exited during start-up (code ${code}, signal ${signal})`);
    }
    return ok;
  }

  private failure(what: string): Error {
    const out = this.output();
    return new Error(`${this.name} ${what}${out ? `; last output:\n${out}` : ''}`);
  }

  /** Sends SIGTERM (the services shut down gracefully on it), then SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.stopping = true;
    if (this.hasExited || this.proc.pid === undefined) return;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Starts a long-running child (see `StartOptions`). */
export function startChild(opts: StartOptions): ManagedChild {
  return new ManagedChild(opts);
}

/**
 * Starts `<node_modules/.bin/node> [nodeArgs] --import tsx <script>` in the repository root: how the
 * scripts run the API (src/server.ts), the workers (workers/index.ts) and helper servers from source. A
 * `.js` script (the build: dist/src/server.js, as `npm start` runs it) starts without tsx.
 */
export function startNodeScript(
  name: string,
  script: string,
  opts: { env?: Record<string, string | undefined>; nodeArgs?: readonly string[]; echo?: Echo; reportUnexpectedExit?: boolean } = {},
): ManagedChild {
  return startChild({
    name,
    command: nodeBinary(),
    args: [...(opts.nodeArgs ?? []), ...(script.endsWith('.js') ? [] : ['--import', 'tsx']), script],
    env: opts.env,
    echo: opts.echo,
    reportUnexpectedExit: opts.reportUnexpectedExit,
  });
}
