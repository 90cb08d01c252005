/**
 * scripts/services/common.ts — what the service modules of `npm run services:*` share: the `.data/` layout,
 * the user-facing error with its exit code, URL helpers, pid files and a TCP probe. See index.ts for
 * what the command does as a whole.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from '../support/child-process.js';

export { ROOT };
export const DATA_DIR = path.join(ROOT, '.data');

/** How long a started server may take to answer, in milliseconds. */
export const START_TIMEOUT_MS = 30_000;
/** Timeout of one reachability probe (TCP connect, PING, `select 1`), in milliseconds. */
export const PROBE_TIMEOUT_MS = 1_000;

export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_MISSING_BINARIES = 3;

/** An error whose message is meant for the user as is, with the exit code it implies. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** A one-line description of `err` (its errno code included), for messages. */
export function errMessage(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return errMessage(err.errors[0]);
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message || String(code);
  }
  return String(err);
}

/** The URL with its password replaced, for printing. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** The environment variable `name`, trimmed; undefined when unset or blank. */
export function envSet(name: string): string | undefined {
  const v = process.env[name];
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

/** `p` relative to the working directory, for messages. */
export function rel(p: string): string {
  return path.relative(process.cwd(), p) || '.';
}

export function hostOf(u: URL): string {
  return u.hostname.replace(/^\[(.*)\]$/, '$1');
}

export function portOf(u: URL, fallback: number): number {
  return u.port ? Number(u.port) : fallback;
}

export function isLocalHost(host: string): boolean {
  return host === 'localhost' || host === '127.0.0.1' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** `url` parsed. @throws {ServiceError} (exit 2) naming `varName` when it is not a URL. */
export function parseUrl(url: string, varName: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new ServiceError(`${varName} is not a valid URL: ${redact(url)}`, EXIT_USAGE);
  }
}

/** The last `lines` lines of the file, or "(no log)". */
export function logTail(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Executable named `name` on PATH, or undefined. */
export function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** First word of /proc/<pid>/cmdline, or undefined where /proc is unavailable. */
export function processName(pid: number): string | undefined {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return path.basename(cmdline.split(/[\0 ]/)[0] ?? '');
  } catch {
    return undefined;
  }
}

/** The positive integer on the first line of `file` (a pid, or a port), or undefined. */
export function readPid(file: string): number | undefined {
  try {
    const first = fs.readFileSync(file, 'utf8').split('\n')[0]?.trim() ?? '';
    const pid = Number(first);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pid in `pidFile` when that process is alive and its name starts with `name` (a recycled pid of
 * another program is not ours); undefined otherwise.
 */
export function livePid(pidFile: string, name: string): number | undefined {
  const pid = readPid(pidFile);
  if (pid === undefined || !pidAlive(pid)) return undefined;
  const actual = processName(pid);
  return actual === undefined || actual.startsWith(name) ? pid : undefined;
}

export interface ProbeResult {
  /** The service answered (PING / select 1). */
  ok: boolean;
  /** Something accepted a TCP connection on the host/port (a server of some kind is there). */
  listening: boolean;
  detail: string;
}

/** TCP connect with a short timeout; resolves to an error message, or undefined when it connected. */
export function tcpProbe(host: string, port: number, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result: string | undefined): void => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer from ${host}:${port} within ${timeoutMs} ms`));
    socket.once('connect', () => done(undefined));
    socket.once('error', (err) => done(errMessage(err)));
  });
}

/** Started local server: its pid (when known) and data directory. */
export interface Started {
  pid: number | undefined;
  dir: string;
}
