/**
 * A minimal Server-Sent Events client for tests (node:http): connects with headers, parses `event:`,
 * `id:` and `data:` lines, and lets a test wait for an event that matches.
 */
import http from 'node:http';

export interface SseEvent {
  event: string;
  id: string | null;
  data: unknown;
}

export interface SseStream {
  status: number;
  events: SseEvent[];
  /** Resolves with the first event (already received or future) matching `pred`; rejects after `timeoutMs`. */
  waitFor(pred: (e: SseEvent) => boolean, what: string, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens `url` (GET) with `headers`; resolves once the response headers arrived. */
export function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const waiters: { pred: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }[] = [];
      let buffer = '';
      let endResolve!: () => void;
      const ended = new Promise<void>((r) => (endResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          let id: string | null = null;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (!data.length) continue;
          let parsed: unknown = data.join('\n');
          try {
            parsed = JSON.parse(parsed as string);
          } catch {
            // keep the text
          }
          const e = { event, id, data: parsed };
          events.push(e);
          for (const w of [...waiters]) if (w.pred(e)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(e);
          }
        }
      });
      res.on('end', () => endResolve());
      res.on('close', () => endResolve());
      resolve({
        status: res.statusCode ?? 0,
        events,
        ended,
        waitFor(pred, what, timeoutMs = 10_000) {
          const found = events.find(pred);
          if (found) return Promise.resolve(found);
          return new Promise((res2, rej2) => {
            const timer = setTimeout(() => rej2(new Error(`no ${what} within ${timeoutMs} ms; got ${JSON.stringify(events.map((x) => x.event))}`)), timeoutMs);
            waiters.push({ pred, resolve: (e) => { clearTimeout(timer); res2(e); } });
          });
        },
        close() {
          req.destroy();
        },
      });
    });
    req.on('error', reject);
  });
}
