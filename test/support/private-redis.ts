/**
 * A private `redis-server` for tests that configure, kill or restart Redis: a free port on 127.0.0.1 and
 * a temp dir of its own, so the shared Redis is never touched (its configuration, data and process).
 * Persistence is chosen per instance (`appendonly`, `appendfsync`, `save`, any extra arguments), and
 * `start()` may change it for the next run on the same dir (the AOF or RDB there is loaded again).
 * `destroy()` stops it and removes the dir; a process exiting with instances still running kills them
 * (SIGKILL) and removes their dirs, so an aborted run leaves no server behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../scripts/support/free-port.js';

export interface PrivateRedisOptions {
  /** `appendonly` (default true). */
  appendonly?: boolean;
  /** `appendfsync` (default `always`). */
  appendfsync?: 'always' | 'everysec' | 'no';
  /** `save` points (default `""`: no snapshots). */
  save?: string;
  /** More `--name value` arguments, e.g. `['--rename-command', 'CONFIG', '']`. */
  extraArgs?: string[];
  /** Extra environment of the server process (e.g. LD_PRELOAD). */
  env?: Record<string, string>;
}

const live = new Set<PrivateRedis>();
process.once('exit', () => {
  for (const r of live) r.killNow();
});

/** One private redis-server; `kill()` is SIGKILL, `stop()` SIGTERM (clean shutdown), `start()` reuses port and dir. */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    readonly dir: string,
    private opts: PrivateRedisOptions,
  ) {}

  /** Starts a new instance and waits until it answers PING. */
  static async create(opts: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), mkdtempSync(path.join(tmpdir(), 'gis-private-redis-')), opts);
    live.add(r);
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The server's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.exitCode === null ? this.child.pid : undefined;
  }

  /**
   * (Re)starts the server on the same port and dir, with `changes` applied to its options from now on,
   * and waits (up to 20 s) until it answers PING (not LOADING).
   * @throws when it exits or does not answer in time.
   */
  async start(changes: PrivateRedisOptions = {}): Promise<void> {
    this.opts = { ...this.opts, ...changes };
    const o = this.opts;
    const args = [
      '--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir,
      '--appendonly', o.appendonly === false ? 'no' : 'yes',
      '--appendfsync', o.appendfsync ?? 'always',
      '--save', o.save ?? '',
      ...(o.extraArgs ?? []),
    ];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...o.env } });
    this.child = child;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
    probe.on('error', () => undefined);
    try {
      await probe.connect().catch(() => undefined);
      const until = Date.now() + 20_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}: ${stderr.trim()}`);
        if (await probe.ping().then((p) => p === 'PONG', () => false)) return;
        if (Date.now() > until) throw new Error(`redis-server on ${this.port} did not answer PING within 20 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      probe.disconnect();
    }
  }

  /** SIGKILL: the process dies at once, as in a crash; what it had not written is gone. */
  kill(): Promise<void> {
    return this.signal('SIGKILL');
  }

  /** SIGTERM: Redis shuts down cleanly (writes and fsyncs its AOF). */
  stop(): Promise<void> {
    return this.signal('SIGTERM');
  }

  /** Stops the server (SIGKILL) and removes its dir. */
  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
    live.delete(this);
  }

  /** Synchronous kill and clean-up for the process's exit hook. */
  killNow(): void {
    this.child?.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async signal(sig: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill(sig);
    });
  }
}
