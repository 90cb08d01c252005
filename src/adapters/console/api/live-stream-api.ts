/**
 * The console's live feed as Server-Sent Events (issue #21, "Live by push"):
 *
 * `GET /console/api/games/:gameId/live/stream[?server=<externalServerId>]` (any console role) →
 * `200 text/event-stream`, open until the client leaves or the process stops. Events, each `data` one
 * JSON object with `serverTime` (RFC 3339) first:
 *
 * | event | data | sent |
 * | --- | --- | --- |
 * | `hello` | `{ serverTime, gameId, server, refreshSeconds }` | once, first |
 * | `servers` | `{ serverTime, servers: LiveServer[] }` | at once, then when a server appears, goes or changes |
 * | `commands` | `{ serverTime, commands: CommandView[] }` (50 newest) | at once, then on every issue and transition |
 * | `roster` | `{ serverTime, externalServerId, players: RosterEntry[] }` (only with `?server=`) | at once, then on every join and leave |
 * | `health` | `{ serverTime, warnings, throttling, streams }` | at once, then when it changes (checked every 5 s) |
 *
 * The `id` of an event is the snapshot's sequence number in this process. A comment line (`: ping`)
 * every {@link PING_MS} keeps proxies from closing an idle stream. The views are built once per change
 * for every console of the game by the process's {@link LiveHub} (src/adapters/console/live/live-hub.ts), so each
 * open stream adds no Redis or Postgres reads. Ages (`secondsSinceLastHeartbeat`, `sessionSeconds`) are as
 * of the event's `serverTime`; the page counts them on from there.
 *
 * The page reads the stream with `fetch` (an `EventSource` cannot send the `Authorization` header, and
 * the token must not travel in a URL that ends up in logs); when the stream drops it polls `GET /live`
 * and `GET /health` until it reconnects.
 *
 * Errors (before the stream starts, as the usual JSON envelope): 401 (src/adapters/console/console-auth.ts), 404
 * `unknown_game` (also a game of a workspace the caller has no account in), 403 `forbidden`.
 * A published change to the caller's moderator account ends the stream (src/adapters/console/console-auth.ts).
 */
import { Router } from 'express';
import type { Db } from '../../../store/prisma.js';
import type { LiveHub, LiveSubscriber } from '../live/live-hub.js';
import { LIVE_REFRESH_MS } from '../live/live-hub.js';
import { gameAccess } from './console-request.js';
import { callerOf, type ConsoleAuth } from '../console-auth.js';

/** A comment line is written this often on an idle stream, ms. */
export const PING_MS = 15_000;
/** A subscriber whose unsent output exceeds this many bytes is cut off (it reconnects and polls meanwhile). */
export const MAX_BUFFERED_BYTES = 1 << 20;

/** Route `GET /games/:gameId/live/stream` (see the module comment); mounted under /console/api. */
export function liveStreamApi(deps: { db: Db; hub: LiveHub; auth: ConsoleAuth }): Router {
  const router = Router();

  router.get('/games/:gameId/live/stream', async (req, res) => {
    const { game } = await gameAccess(req, res, deps.db, 'console.read');
    const server = typeof req.query.server === 'string' && req.query.server ? req.query.server.slice(0, 128) : null;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    const hello = { serverTime: new Date().toISOString(), gameId: game.id, server, refreshSeconds: LIVE_REFRESH_MS / 1000 };
    res.write(`retry: 2000\nevent: hello\ndata: ${JSON.stringify(hello)}\n\n`);

    let open = true;
    const end = () => {
      if (!open) return;
      open = false;
      res.end();
    };
    const subscriber: LiveSubscriber = {
      server,
      send(event, id, data) {
        if (!open) return;
        if (res.writableLength > MAX_BUFFERED_BYTES) return end();
        res.write(`event: ${event}\nid: ${id}\ndata: ${data}\n\n`);
      },
      close: end,
    };
    const unsubscribe = deps.hub.subscribe(game.id, subscriber);
    // A change to the caller's account (disabled, role, token) closes the stream; the page reconnects
    // and is authorised again.
    const caller = callerOf(res);
    const untrack = caller.kind === 'moderator' ? deps.auth.trackStream(caller.accounts.map((a) => a.id), end) : () => undefined;
    const ping = setInterval(() => {
      if (open) res.write(': ping\n\n');
    }, PING_MS);
    res.on('close', () => {
      open = false;
      clearInterval(ping);
      unsubscribe();
      untrack();
    });
  });

  return router;
}
