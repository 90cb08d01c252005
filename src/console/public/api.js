// The console API client: every call carries the operator token and the moderator's name, and every
// failure becomes an ApiError with the service's status, code and message (and Retry-After on 429).
// Session values live in sessionStorage: they end with the tab, never in a cookie or the URL.

const TOKEN = 'gis.console.token';
const MODERATOR = 'gis.console.moderator';

/** { token, moderator } of this tab, or null when not signed in. */
export function session() {
  const token = sessionStorage.getItem(TOKEN);
  const moderator = sessionStorage.getItem(MODERATOR);
  return token && moderator ? { token, moderator } : null;
}

export function signIn(token, moderator) {
  sessionStorage.setItem(TOKEN, token.trim());
  sessionStorage.setItem(MODERATOR, moderator.trim());
}

export function signOut() {
  sessionStorage.removeItem(TOKEN);
}

/** A token handed over in the address fragment (#token=...) by the boot log: kept, then removed from the address bar. */
export function takeTokenFromFragment() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return decodeURIComponent(match[1]);
}

export class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** Calls /console/api<path>; resolves to the parsed JSON body, rejects with ApiError. */
export async function api(path, { method = 'GET', body } = {}) {
  const s = session();
  const headers = { Accept: 'application/json' };
  if (s) {
    headers.Authorization = `Bearer ${s.token}`;
    headers['X-Moderator'] = s.moderator;
  }
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(`/console/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, 'network', `console unreachable: ${err.message}`);
  }
  const data = await res.json().catch(() => null);
  if (res.ok) return data;
  if (res.status === 401) {
    signOut();
    window.dispatchEvent(new Event('console-signed-out'));
  }
  const e = data && data.error ? data.error : { code: 'http_' + res.status, message: res.statusText };
  throw new ApiError(res.status, e.code, e.message, res.headers.get('Retry-After'));
}

/**
 * Reads a Server-Sent Events stream at /console/api<path> with the operator token (fetch, so the token
 * goes in the Authorization header), calling onEvent(name, data) for each event whose data is JSON.
 * Resolves when the stream ends; rejects with ApiError on a non-200 answer or a network failure.
 */
export async function openStream(path, onEvent, signal) {
  const s = session();
  const headers = { Accept: 'text/event-stream' };
  if (s) headers.Authorization = `Bearer ${s.token}`;
  let res;
  try {
    res = await fetch(`/console/api${path}`, { headers, signal, cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, 'network', `live feed unreachable: ${err.message}`);
  }
  if (!res.ok || !res.body) {
    const data = await res.json().catch(() => null);
    if (res.status === 401) {
      signOut();
      window.dispatchEvent(new Event('console-signed-out'));
    }
    const e = data && data.error ? data.error : { code: 'http_' + res.status, message: res.statusText };
    throw new ApiError(res.status, e.code, e.message);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (!data.length) continue;
      try {
        onEvent(name, JSON.parse(data.join('\n')));
      } catch (err) {
        console.error('unreadable live event', name, err);
      }
    }
  }
}
