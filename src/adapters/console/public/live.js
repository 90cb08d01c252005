// The live views of one game (servers, the open server's roster, commands, ingest health), pushed by the
// console as Server-Sent Events from GET /console/api/games/:id/live/stream (issue #21 "Live by push").
// The stream is read with fetch, not EventSource: EventSource cannot send the Authorization header, and
// the operator token must not travel in a URL. When the stream drops, the views are polled (GET /live
// every second, GET /health every 5 s) until a reconnect succeeds (1 s, 2 s, 4 s … 15 s apart).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, openStream } from './api.js';

const POLL_LIVE_MS = 1000;
const POLL_HEALTH_MS = 5000;
const RECONNECT_MAX_MS = 15000;

/**
 * { servers, roster, commands, health, serverTime, clockOffsetMs, mode, error, refresh }: `mode` is
 * 'connecting', 'push' (stream open) or 'polling' (stream dropped; polling until it reconnects).
 * `clockOffsetMs` = server clock − browser clock, so ages can be counted on between events.
 */
export function useLiveFeed(gameId, server) {
  const [state, setState] = useState({ servers: null, roster: null, commands: null, health: null, serverTime: null, clockOffsetMs: 0, mode: 'connecting', error: null });
  const poll = useRef(null);

  useEffect(() => {
    let alive = true;
    let controller = null;
    let pollTimers = [];
    let reconnectTimer = null;
    let backoff = 1000;
    // The page remounts this view for another game; a new server only changes the roster.
    setState((s) => ({ ...s, roster: null, mode: 'connecting', error: null }));

    const merge = (patch) => alive && setState((s) => ({ ...s, ...patch }));
    const clock = (serverTime) => ({ serverTime, clockOffsetMs: Date.parse(serverTime) - Date.now() });

    const pollLive = async () => {
      try {
        const d = await api(`/games/${gameId}/live${server ? `?server=${encodeURIComponent(server)}` : ''}`);
        merge({ servers: d.servers, roster: d.roster, commands: d.commands, ...clock(d.serverTime), error: null });
      } catch (error) {
        merge({ error });
      }
    };
    const pollHealth = async () => {
      try {
        const { serverTime, ...health } = await api(`/games/${gameId}/health`);
        merge({ health });
      } catch (error) {
        merge({ error });
      }
    };
    const stopPolling = () => {
      pollTimers.forEach(clearInterval);
      pollTimers = [];
    };
    const startPolling = () => {
      if (pollTimers.length || !alive) return;
      merge({ mode: 'polling' });
      pollLive();
      pollHealth();
      pollTimers = [setInterval(pollLive, POLL_LIVE_MS), setInterval(pollHealth, POLL_HEALTH_MS)];
    };
    poll.current = pollLive;

    const onEvent = (name, data) => {
      if (name === 'hello') {
        backoff = 1000;
        stopPolling();
        merge({ mode: 'push', error: null, ...clock(data.serverTime) });
        return;
      }
      const { serverTime, ...rest } = data;
      const patch = { ...clock(serverTime) };
      if (name === 'servers') patch.servers = rest.servers;
      else if (name === 'commands') patch.commands = rest.commands;
      else if (name === 'roster') patch.roster = { externalServerId: rest.externalServerId, players: rest.players };
      else if (name === 'health') patch.health = rest;
      merge(patch);
    };

    const connect = async () => {
      if (!alive) return;
      controller = new AbortController();
      try {
        await openStream(`/games/${gameId}/live/stream${server ? `?server=${encodeURIComponent(server)}` : ''}`, onEvent, controller.signal);
      } catch (error) {
        if (!alive) return;
        merge({ error: error.status === 401 ? error : null });
      }
      if (!alive) return;
      // The stream ended or failed: poll meanwhile, and try again.
      startPolling();
      reconnectTimer = setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, RECONNECT_MAX_MS);
    };
    connect();

    return () => {
      alive = false;
      controller?.abort();
      stopPolling();
      clearTimeout(reconnectTimer);
    };
  }, [gameId, server]);

  const refresh = useCallback(() => {
    // After an action: the push brings the change; while polling, fetch at once.
    if (state.mode !== 'push' && poll.current) poll.current();
  }, [state.mode]);
  return { ...state, refresh };
}

/** A clock that ticks every `everyMs`, for ages counted on between events. */
export function useNow(everyMs = 1000) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
