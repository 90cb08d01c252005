// The moderator console page (issue #7). Signed-in moderators pick a game and see, updated every second
// from /console/api/games/:id/live: its live servers, the roster of the selected server with actions, and
// the game's commands with their states; plus doors and lockdown, bans, ingest health and charts, each
// polling on its own slower period.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, session, signOut, takeTokenFromFragment } from './api.js';
import { usePoll } from './poll.js';
import { clock } from './format.js';
import { Login } from './login.js';
import { Servers } from './servers.js';
import { Roster } from './roster.js';
import { ActionForm } from './action-form.js';
import { Commands } from './commands.js';
import { Doors } from './doors.js';
import { Bans } from './bans.js';
import { Health } from './health.js';
import { Charts } from './charts.js';

/** The live view's polling period, ms ("updated live, at least every 2 s"). */
const LIVE_EVERY_MS = 1000;

function GamePicker({ gameId, onPick }) {
  const { data, error } = usePoll(() => api('/games'), 10000, 'games');
  useEffect(() => {
    if (!gameId && data && data.games.length) onPick(data.games[0].id);
  }, [data]);
  if (!data) return html`<span>${error ? error.message : 'Loading games…'}</span>`;
  return html`
    <select value=${gameId ?? ''} onChange=${(e) => onPick(e.currentTarget.value)} data-test="game-picker">
      ${data.games.map((g) => html`<option key=${g.id} value=${g.id}>${g.name} — ${g.workspaceName} (${g.id.slice(0, 8)})</option>`)}
    </select>`;
}

function GameView({ gameId, me }) {
  const [server, setServer] = useState(null);
  const [action, setAction] = useState(null);
  const [notice, setNotice] = useState(null);
  const query = server ? `?server=${encodeURIComponent(server)}` : '';
  const live = usePoll(() => api(`/games/${gameId}/live${query}`), LIVE_EVERY_MS, `${gameId}|${server}`);
  const data = live.data;

  return html`
    <main class="layout">
      <section class="panel wide">
        <h2>Live servers ${data && html`<small data-test="server-time">updated ${clock(data.serverTime)}</small>`}</h2>
        ${live.error && html`<p class="error">${live.error.message}</p>`}
        ${data ? html`<${Servers} servers=${data.servers} selected=${server} onSelect=${(s) => { setServer(s); setAction(null); }} />` : html`<p class="empty">Loading…</p>`}
      </section>
      <section class="panel">
        <h2>Roster</h2>
        ${data && html`<${Roster} roster=${data.roster} onAction=${setAction} />`}
        ${action && html`<${ActionForm} key=${JSON.stringify(action)} gameId=${gameId} action=${action}
          onCancel=${() => setAction(null)}
          onDone=${(c) => { setAction(null); setNotice(`${c.type} ${c.id.slice(0, 8)} issued`); live.refresh(); }} />`}
        ${notice && html`<p class="ok" data-test="notice">${notice}</p>`}
      </section>
      <section class="panel">
        <h2>Commands</h2>
        ${data && html`<${Commands} commands=${data.commands} me=${me} />`}
      </section>
      <section class="panel"><h2>Doors</h2><${Doors} gameId=${gameId} /></section>
      <section class="panel"><h2>Bans</h2><${Bans} gameId=${gameId} selectedServer=${server} /></section>
      <section class="panel"><h2>Ingest health</h2><${Health} gameId=${gameId} /></section>
      <section class="panel wide"><h2>Activity</h2><${Charts} gameId=${gameId} /></section>
    </main>`;
}

function App() {
  const [fragmentToken] = useState(takeTokenFromFragment);
  const [signedIn, setSignedIn] = useState(() => session());
  const [gameId, setGameId] = useState(null);
  useEffect(() => {
    const out = () => setSignedIn(null);
    window.addEventListener('console-signed-out', out);
    return () => window.removeEventListener('console-signed-out', out);
  }, []);

  if (!signedIn) return html`<${Login} token=${fragmentToken} onSignedIn=${() => setSignedIn(session())} />`;
  return html`
    <header class="top">
      <h1>Moderator console</h1>
      <${GamePicker} gameId=${gameId} onPick=${setGameId} />
      <span class="who" data-test="me">${signedIn.moderator}</span>
      <a href="/openapi.json" target="_blank" rel="noopener">API document</a>
      <button type="button" onClick=${() => { signOut(); setSignedIn(null); }}>Sign out</button>
    </header>
    ${gameId ? html`<${GameView} key=${gameId} gameId=${gameId} me=${signedIn.moderator} />` : html`<p class="empty">No game selected.</p>`}`;
}

render(html`<${App} />`, document.getElementById('root'));
