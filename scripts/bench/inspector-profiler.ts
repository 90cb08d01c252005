/**
 * scripts/bench/inspector-profiler.ts — V8 CPU profiles of chosen stretches of a child process, taken over
 * its inspector (Chrome DevTools Protocol `Profiler` domain) instead of `--cpu-prof`, which covers the
 * whole life of the process (start-up, warm-up, shut-down) in one file.
 *
 * The child must run with `--inspect=127.0.0.1:0`: it prints `Debugger listening on ws://…` on stderr,
 * and {@link InspectorProfiler.connect} takes that URL. Node 24's global WebSocket is the client.
 * `start()` / `stop()` bracket a stretch; `stop()` resolves to the `.cpuprofile` JSON (the format
 * scripts/bench/cpu-profile-top.ts summarises). While no profile runs the open session costs the child
 * nothing measurable; while one runs, sampling adds its own CPU (shares stay meaningful, absolute CPU
 * per request does not).
 */

/** The inspector URL a child printed (`Debugger listening on ws://127.0.0.1:PORT/UUID`), or null. */
export function inspectorUrl(output: string): string | null {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1] ?? null;
}

/** One DevTools session with a child's inspector. */
export class InspectorProfiler {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (msg.id === undefined) return; // events: not used
      const waiter = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) waiter?.reject(new Error(`inspector: ${msg.error.message}`));
      else waiter?.resolve(msg.result);
    });
    ws.addEventListener('close', () => {
      for (const w of this.pending.values()) w.reject(new Error('inspector session closed'));
      this.pending.clear();
    });
  }

  /**
   * Opens a session on `url` and enables the profiler with a sampling interval of `intervalUs` µs
   * (V8's default is 1,000; a shorter one gives more samples per request at more cost to the child).
   * @throws Error when the connection fails.
   */
  static async connect(url: string, intervalUs: number): Promise<InspectorProfiler> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`could not connect to the inspector at ${url}`)), { once: true });
    });
    const p = new InspectorProfiler(ws);
    await p.send('Profiler.enable');
    await p.send('Profiler.setSamplingInterval', { interval: intervalUs });
    return p;
  }

  /** Starts sampling. */
  async start(): Promise<void> {
    await this.send('Profiler.start');
  }

  /** Stops sampling; resolves to the profile (a `.cpuprofile` object). */
  async stop(): Promise<object> {
    const { profile } = (await this.send('Profiler.stop')) as { profile: object };
    return profile;
  }

  close(): void {
    this.ws.close();
  }

  private send(method: string, params: object = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }
}
