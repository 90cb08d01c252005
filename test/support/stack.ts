/**
 * A real stack as child processes, for end-to-end tests: the API process (src/server.ts: game listener +
 * console listener) and a worker process (workers/index.ts), on free ports, against the test database
 * and this test run's Redis prefix (so test/setup.ts cleans its keys). Children run under the project's
 * Node 24 with the tsx loader, exactly as `npm start` / `npm run workers` run them. Their output is kept
 * in memory and printed when a test fails ({@link Stack.logs}).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/support/free-port.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The Node running this test process: the project's Node 24 under npm scripts (node_modules/.bin comes first on PATH). */
const NODE = process.execPath;


async function waitFor(url: string, timeoutMs: number, what: string, child: ChildProcess): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before it was ready`);
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} not ready at ${url} after ${timeoutMs} ms`);
}

export interface StackOptions {
  /** Extra environment for both children. */
  env?: Record<string, string>;
}

export class Stack {
  readonly output: string[] = [];
  api: ChildProcess | null = null;
  workers: ChildProcess | null = null;
  readonly consoleToken = randomBytes(24).toString('base64url');

  private constructor(
    readonly port: number,
    readonly consolePort: number,
    /** Port of the worker process's /metrics and /healthz (WORKERS_METRICS_PORT). */
    readonly workersMetricsPort: number,
    private readonly env: Record<string, string>,
  ) {}

  /** Starts API and workers and waits until the API answers /readyz and the console /healthz. */
  static async start(opts: StackOptions = {}): Promise<Stack> {
    const [port, consolePort, workersMetricsPort] = [await freePort(), await freePort(), await freePort()];
    const env: Record<string, string> = {
      DATABASE_URL: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/gis_test',
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_PREFIX: process.env.REDIS_PREFIX ?? 'gistest-stack',
      LOG_LEVEL: 'warn',
      DB_POOL_SIZE: '3',
      PORT: String(port),
      HOST: '127.0.0.1',
      CONSOLE_PORT: String(consolePort),
      WORKERS_METRICS_PORT: String(workersMetricsPort),
      ...opts.env,
    };
    const stack = new Stack(port, consolePort, workersMetricsPort, env);
    await Promise.all([stack.startApi(), stack.startWorkers()]);
    return stack;
  }

  /** Origin of the game listener. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Origin of the worker process's metrics listener. */
  get workersMetricsUrl(): string {
    return `http://127.0.0.1:${this.workersMetricsPort}`;
  }

  /** Origin of the console listener. */
  get consoleUrl(): string {
    return `http://127.0.0.1:${this.consolePort}`;
  }

  private spawn(label: string, script: string): ChildProcess {
    const child = spawn(NODE, ['--import', 'tsx', script], {
      cwd: ROOT,
      env: { ...process.env, ...this.env, CONSOLE_TOKEN: this.consoleToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) this.output.push(`[${label}] ${line}`);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    return child;
  }

  /** (Re)starts the API process and waits for both of its listeners. */
  async startApi(): Promise<void> {
    this.api = this.spawn('api', 'src/server.ts');
    await waitFor(`${this.url}/readyz`, 60_000, 'API', this.api);
    await waitFor(`${this.consoleUrl}/healthz`, 10_000, 'console', this.api);
  }

  /** (Re)starts the worker process. */
  async startWorkers(): Promise<void> {
    this.workers = this.spawn('workers', 'workers/index.ts');
  }

  /** Sends `signal` to a child and resolves with its exit code once it exited (SIGKILL after 20 s). */
  static stopChild(child: ChildProcess | null, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child?.exitCode ?? null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
      child.kill(signal);
    });
  }

  /** Stops both children (SIGTERM, graceful). */
  async stop(): Promise<void> {
    await Promise.all([Stack.stopChild(this.api), Stack.stopChild(this.workers)]);
  }

  /** The children's output, last `lines` lines. */
  logs(lines = 80): string {
    return this.output.slice(-lines).join('\n');
  }
}
