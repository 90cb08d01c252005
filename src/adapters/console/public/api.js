// The console API client. A moderator is signed in by a session cookie (HttpOnly: this script never
// sees it) and every change carries the session's CSRF token; the operator's break-glass token, when used,
// lives in sessionStorage (it ends with the tab) and goes in the Authorization header. Every failure
// becomes an ApiError with the service's status, code and message (and Retry-After on 429).

const OPERATOR = 'gis.console.token';
let csrfToken = null;

/** The operator token of this tab, or null. */
function operatorToken() {
  return sessionStorage.getItem(OPERATOR);
}

/** Who is signed in: { caller, csrfToken } (GET /console/api/session); rejects with ApiError 401 when nobody. */
export async function whoAmI() {
  const me = await api('/session');
  csrfToken = me.csrfToken;
  return me;
}

/**
 * Signs in with a token: a personal access token (gmod_…) is exchanged for a session cookie and not
 * kept; anything else is taken as the operator token. Resolves to whoAmI().
 */
export async function signIn(token) {
  const t = token.trim();
  if (t.startsWith('gmod_')) {
    sessionStorage.removeItem(OPERATOR);
    await api('/session', { method: 'POST', body: { token: t } });
  } else {
    sessionStorage.setItem(OPERATOR, t);
  }
  return whoAmI();
}

/** Signs out: ends the session on the service, forgets an operator token. */
export async function signOut() {
  if (operatorToken()) sessionStorage.removeItem(OPERATOR);
  else await api('/session', { method: 'DELETE' }).catch(() => undefined);
  csrfToken = null;
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
  const headers = { Accept: 'application/json' };
  const operator = operatorToken();
  if (operator) headers.Authorization = `Bearer ${operator}`;
  else if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(`/console/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, 'network', `console unreachable: ${err.message}`);
  }
  const data = await res.json().catch(() => null);
  if (res.ok) return data;
  if (res.status === 401 && path !== '/session') {
    sessionStorage.removeItem(OPERATOR);
    window.dispatchEvent(new Event('console-signed-out'));
  }
  const e = data && data.error ? data.error : { code: 'http_' + res.status, message: res.statusText };
  throw new ApiError(res.status, e.code, e.message, res.headers.get('Retry-After'));
}

/**
 * Reads a Server-Sent Events stream at /console/api<path> with the session cookie or the operator token
 * (fetch, so a token goes in the Authorization header), calling onEvent(name, data) for each event whose data is JSON.
 * Resolves when the stream ends; rejects with ApiError on a non-200 answer or a network failure.
 */
export async function openStream(path, onEvent, signal) {
  const headers = { Accept: 'text/event-stream' };
  const operator = operatorToken();
  if (operator) headers.Authorization = `Bearer ${operator}`;
  let res;
  try {
    res = await fetch(`/console/api${path}`, { headers, signal, cache: 'no-store' });
  } catch (err) {
    throw new ApiError(0, 'network', `live feed unreachable: ${err.message}`);
  }
  if (!res.ok || !res.body) {
    const data = await res.json().catch(() => null);
    if (res.status === 401) {
      sessionStorage.removeItem(OPERATOR);
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
