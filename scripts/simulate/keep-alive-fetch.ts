/**
 * A cheap {@link FetchLike} for the simulator: node:http(s) with one keep-alive agent per process, no
 * WHATWG Request/Response/Headers objects, the body passed through as the bytes the transport signed.
 * The global fetch (undici) costs several times the CPU per small request; a load generator that spends
 * its core on its own HTTP stack measures itself (issue #15 item 4). Not part of the service.
 *
 * Sockets are unlimited (a request never waits in the agent for a free socket, which the simulator
 * would count as service latency); idle ones are kept up to `maxFreeSockets` and reused LIFO.
 * A request aborted by `init.signal` (the transport's per-attempt timeout) rejects with the signal's
 * reason, a `TimeoutError`, so the transport reports it as a timeout (outcome unknown).
 */
import http from 'node:http';
import https from 'node:https';
import type { FetchLike, FetchLikeResponse } from '@gis/client';

/**
 * The error a request aborted by `signal` rejects with: the signal's reason when it is an Error (the
 * transport aborts with a `TimeoutError` DOMException), else an `AbortError` naming the reason.
 */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(`request aborted: ${String(reason)}`, 'AbortError');
}

export interface KeepAliveFetchOptions {
  /** Idle sockets kept per origin for reuse. Default 512. */
  maxFreeSockets?: number;
}

/** Creates a keep-alive fetch; `close()` destroys its sockets. */
export function keepAliveFetch(opts: KeepAliveFetchOptions = {}): FetchLike & { close(): void } {
  const agentOpts = { keepAlive: true, maxSockets: Infinity, maxFreeSockets: opts.maxFreeSockets ?? 512, scheduling: 'lifo' as const };
  const agents = { http: new http.Agent(agentOpts), https: new https.Agent(agentOpts) };
  // Origins parsed once (a URL parse per request is measurable at thousands a second).
  const origins = new Map<string, { secure: boolean; hostname: string; port: number }>();
  const target = (url: string) => {
    const slash = url.indexOf('/', url.indexOf('//') + 2);
    const origin = slash < 0 ? url : url.slice(0, slash);
    let o = origins.get(origin);
    if (!o) {
      const u = new URL(origin);
      o = { secure: u.protocol === 'https:', hostname: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80) };
      origins.set(origin, o);
    }
    return { ...o, path: slash < 0 ? '/' : url.slice(slash) };
  };

  const send: FetchLike = (url, init) =>
    new Promise<FetchLikeResponse>((resolve, reject) => {
      const { secure, hostname, port, path } = target(url);
      const headers: Record<string, string | number> = { ...init.headers, 'content-length': init.body?.byteLength ?? 0 };
      const signal = init.signal;
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      const options = { hostname, port, path, method: init.method, headers, agent: secure ? agents.https : agents.http };
      const req = (secure ? https : http).request(options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          signal?.removeEventListener('abort', onAbort);
          const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
          const h = res.headers;
          resolve({
            status: res.statusCode ?? 0,
            headers: {
              get: (name: string) => {
                const v = h[name.toLowerCase()];
                return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
              },
            },
            text: () => Promise.resolve(text),
          });
        });
      });
      function fail(err: Error): void {
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      }
      function onAbort(): void {
        req.destroy();
        reject(abortError(signal!));
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', fail);
      req.end(init.body);
    });

  return Object.assign(send, {
    close(): void {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}
