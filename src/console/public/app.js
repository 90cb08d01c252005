// The moderator console page (issues #7, #21). Signed-in moderators pick a game and see its live servers,
// the roster of the selected server with actions, and the game's commands with their states, pushed by the
// service as Server-Sent Events (live.js; polled only while the stream is down); plus doors and lockdown,
// bans, the access log, ingest health (pushed too) and charts.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, session, signOut, takeTokenFromFragment } from './api.js';
import { usePoll } from './poll.js';
import { useLiveFeed } from './live.js';
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
import { AccessLog } from './access-log.js';

function GamePicker({ gameId, onGames, onPick }) {
  const { data, error } = usePoll(() => api('/games'), 10000, 'games');
  useEffect(() => {
    if (data) onGames(data.games);
  }, [data]);
  if (!data) return html`<span>${error ? error.message : 'Loading games…'}</span>`;
  return html`
    <select value=${gameId ?? ''} onChange=${(e) => onPick(data.games.find((g) => g.id === e.currentTarget.value))} data-test="game-picker">
      ${data.games.map((g) => html`<option key=${g.id} value=${g.id}>${g.name} — ${g.workspaceName} (${g.id.slice(0, 8)})</option>`)}
    </select>`;
}

const MODE_TEXT = { push: 'live', polling: 'polling (live feed down)', connecting: 'connecting…' };

function GameView({ game, me }) {
  const gameId = game.id;
  const [server, setServer] = useState(null);
  const [action, setAction] = useState(null);
  const [notice, setNotice] = useState(null);
  const live = useLiveFeed(gameId, server);

  return html`
    <main class="layout">
      <section class="panel span-2">
        <h2>Live servers
          <span class=${`badge live-${live.mode}`} data-test="live-mode" data-mode=${live.mode}>${MODE_TEXT[live.mode]}</span>
          ${live.serverTime && html`<small data-test="server-time">updated ${clock(live.serverTime)}</small>`}
        </h2>
        ${live.error && html`<p class="error">${live.error.message}</p>`}
        ${live.servers ? html`<${Servers} servers=${live.servers} offset=${live.clockOffsetMs} selected=${server} onSelect=${(s) => { setServer(s); setAction(null); }} />` : html`<p class="empty">Loading…</p>`}
      </section>
      <section class="panel">
        <h2>Roster</h2>
        <${Roster} roster=${server && live.roster && live.roster.externalServerId === server ? live.roster : server ? { externalServerId: server, players: null } : null} offset=${live.clockOffsetMs} onAction=${setAction} />
        ${action && html`<${ActionForm} key=${JSON.stringify(action)} gameId=${gameId} action=${action}
          onCancel=${() => setAction(null)}
          onDone=${(c) => { setAction(null); setNotice(`${c.type} ${c.id.slice(0, 8)} issued`); live.refresh(); }} />`}
        ${notice && html`<p class="ok" data-test="notice">${notice}</p>`}
      </section>
      <section class="panel">
        <h2>Commands</h2>
        ${live.commands ? html`<${Commands} commands=${live.commands} me=${me} />` : html`<p class="empty">Loading…</p>`}
      </section>
      <section class="panel"><h2>Doors</h2><${Doors} game=${game} /></section>
      <section class="panel"><h2>Bans</h2><${Bans} gameId=${gameId} selectedServer=${server} /></section>
      <section class="panel span-2"><h2>Access log</h2><${AccessLog} gameId=${gameId} /></section>
      <section class="panel"><h2>Ingest health</h2><${Health} data=${live.health} /></section>
      <section class="panel span-2"><h2>Activity</h2><${Charts} gameId=${gameId} /></section>
    </main>`;
}

/**
 * The game to show once the list of games (re)loads: the one already picked, with its fresh name, or the
 * first (newest) game when none is picked or the picked one is gone. It reads the current pick through a
 * state updater, not a render's closure: a pick made between the list's render and this effect stands.
 */
function keptOrFirst(current, games) {
  const kept = current && games.find((g) => g.id === current.id);
  if (kept) return kept.name === current.name ? current : kept;
  return games[0] ?? current;
}

function App() {
  const [fragmentToken] = useState(takeTokenFromFragment);
  const [signedIn, setSignedIn] = useState(() => session());
  const [game, setGame] = useState(null);
  useEffect(() => {
    const out = () => setSignedIn(null);
    window.addEventListener('console-signed-out', out);
    return () => window.removeEventListener('console-signed-out', out);
  }, []);

  if (!signedIn) return html`<${Login} token=${fragmentToken} onSignedIn=${() => setSignedIn(session())} />`;
  return html`
    <header class="top">
      <h1>Moderator console</h1>
      <${GamePicker} gameId=${game?.id ?? null} onGames=${(games) => setGame((cur) => keptOrFirst(cur, games))} onPick=${(g) => g && setGame(g)} />
      <span class="who" data-test="me">${signedIn.moderator}</span>
      <a href="/openapi.json" target="_blank" rel="noopener">Game API</a>
      <a href="/console/openapi.json" target="_blank" rel="noopener">Console API</a>
      <button type="button" onClick=${() => { signOut(); setSignedIn(null); }}>Sign out</button>
    </header>
    ${game ? html`<${GameView} key=${game.id} game=${game} me=${signedIn.moderator} />` : html`<p class="empty">No game selected.</p>`}`;
}

render(html`<${App} />`, document.getElementById('root'));
