/**
 * A TCP pass-through in front of a shared service (Redis or Postgres) that a test can take down and
 * bring back: `down()` closes the listener and cuts every open connection (clients see ECONNRESET, then
 * ECONNREFUSED, exactly as when the server dies), `up()` listens again on the same port. This simulates
 * a dependency outage without ever stopping the shared services other test processes use. `stall()`
 * holds every byte clients send (the service looks alive but answers nothing: a saturated dependency),
 * `resume()` delivers what was held and passes traffic again.
 */
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private stalled = false;
  private held: [net.Socket, Buffer][] = [];
  port = 0;

  constructor(private readonly targetHost: string, private readonly targetPort: number) {}

  /** Starts listening (first call picks a free port; later calls reuse it). */
  async up(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      client.on('data', (chunk: Buffer) => {
        if (this.stalled) this.held.push([upstream, chunk]);
        else upstream.write(chunk);
      });
      client.on('end', () => upstream.end());
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Holds whatever clients send from now on (connections stay open; nothing is answered). */
  stall(): void {
    this.stalled = true;
  }

  /** Whether the bytes held since `stall()` contain `text` (a test waits until a given command is held). */
  holds(text: string): boolean {
    return this.held.some(([, chunk]) => chunk.includes(text));
  }

  /** Delivers the held bytes in order and passes traffic again. */
  resume(): void {
    this.stalled = false;
    const held = this.held;
    this.held = [];
    for (const [upstream, chunk] of held) if (!upstream.destroyed) upstream.write(chunk);
  }

  /** Refuses new connections and resets the open ones. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.resetAndDestroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** `scheme://[user@]127.0.0.1:<proxy port>/<path>` for a URL of the proxied service. */
  url(original: string): string {
    const u = new URL(original);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }
}
