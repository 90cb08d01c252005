// The moderator console page (issues #7, #21). Signed-in moderators pick a game and see its live servers,
// the roster of the selected server with actions, and the game's commands with their states, pushed by the
// service as Server-Sent Events (live.js; polled only while the stream is down); plus doors and lockdown,
// bans, the access log, ingest health (pushed too) and charts. The header says who is signed in; controls the
// caller's role cannot use are hidden, and a workspace admin manages the workspace's moderators.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api, signOut, takeTokenFromFragment, whoAmI } from './api.js';
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
import { Moderators } from './moderators.js';
import { GameSettings } from './game-settings.js';

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

/** What the caller may do in `workspaceId`: { can(permission), actor, role } (src/auth/moderators/console-permissions.ts). */
function accessIn(caller, workspaceId) {
  if (caller.kind === 'operator') return { can: () => true, actor: 'operator', role: 'operator' };
  const account = caller.accounts.find((a) => a.workspaceId === workspaceId);
  if (!account) return { can: () => false, actor: null, role: null };
  return { can: (p) => account.permissions.includes(p), actor: `moderator:${account.id} (${account.name})`, role: account.role };
}

// Controls a role cannot use are hidden (the service refuses them anyway, 403 forbidden).
const HIDDEN_UNLESS = { 'commands.issue': 'cannot-commands', 'bans.create': 'cannot-ban', 'bans.lift': 'cannot-lift', 'doors.force': 'cannot-force', 'doors.lockdown': 'cannot-lockdown' };

function GameView({ game, access }) {
  const gameId = game.id;
  const [server, setServer] = useState(null);
  const [action, setAction] = useState(null);
  const [notice, setNotice] = useState(null);
  const live = useLiveFeed(gameId, server);
  const me = access.actor;
  const hidden = Object.entries(HIDDEN_UNLESS).filter(([p]) => !access.can(p)).map(([, cls]) => cls).join(' ');

  return html`
    <main class=${`layout ${hidden}`} data-test="game-view" data-role=${access.role}>
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
      ${access.can('games.settings') && html`<section class="panel"><h2>Game settings</h2><${GameSettings} key=${game.id} game=${game} /></section>`}
      ${access.can('moderators.manage') && html`<section class="panel span-2"><h2>Moderators of ${game.workspaceName ?? 'this workspace'}</h2><${Moderators} workspaceId=${game.workspaceId} /></section>`}
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
  // undefined: asking the service; null: nobody signed in; else GET /console/api/session's caller.
  const [caller, setCaller] = useState(undefined);
  const [game, setGame] = useState(null);
  useEffect(() => {
    whoAmI().then((me) => setCaller(me.caller), () => setCaller(null));
    const out = () => setCaller(null);
    window.addEventListener('console-signed-out', out);
    return () => window.removeEventListener('console-signed-out', out);
  }, []);

  if (caller === undefined) return html`<p class="empty">Loading…</p>`;
  if (!caller) return html`<${Login} token=${fragmentToken} onSignedIn=${(me) => { history.replaceState(null, '', '/'); setCaller(me.caller); }} />`;
  const who = caller.kind === 'operator' ? 'operator (break-glass)' : caller.accounts.map((a) => `${a.name} — ${a.role}${a.workspaceName ? ` in ${a.workspaceName}` : ''}`).join(', ');
  return html`
    <header class="top">
      <h1>Moderator console</h1>
      <${GamePicker} gameId=${game?.id ?? null} onGames=${(games) => setGame((cur) => keptOrFirst(cur, games))} onPick=${(g) => g && setGame(g)} />
      <span class="who" data-test="me">${who}</span>
      <a href="/openapi.json" target="_blank" rel="noopener">Game API</a>
      <a href="/console/openapi.json" target="_blank" rel="noopener">Console API</a>
      <button type="button" onClick=${() => signOut().then(() => setCaller(null))} data-test="sign-out">Sign out</button>
    </header>
    ${game ? html`<${GameView} key=${game.id} game=${game} access=${accessIn(caller, game.workspaceId)} />` : html`<p class="empty">No game selected.</p>`}`;
}

render(html`<${App} />`, document.getElementById('root'));
