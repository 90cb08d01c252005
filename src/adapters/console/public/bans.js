// Bans of the game's workspace (spec: What the service does, item 5): the ones in force, a form to ban a
// user (server, game or workspace scope; permanent or for a number of seconds), and lifting.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { usePoll } from './poll.js';
import { stamp } from './format.js';

export function Bans({ gameId, selectedServer }) {
  const { data, error, refresh } = usePoll(() => api(`/games/${gameId}/bans`), 5000, gameId);
  const [f, setF] = useState({ externalId: '', scope: 'game', seconds: '', reason: '' });
  const [problem, setProblem] = useState(null);
  const field = (name) => ({ value: f[name], onInput: (e) => setF({ ...f, [name]: e.currentTarget.value }) });

  const create = async (e) => {
    e.preventDefault();
    setProblem(null);
    const body = {
      externalId: f.externalId.trim(),
      scope: f.scope,
      reason: f.reason.trim(),
      expiresInSeconds: f.seconds.trim() ? Number(f.seconds) : null,
      ...(f.scope === 'server' ? { externalServerId: selectedServer } : {}),
    };
    try {
      await api(`/games/${gameId}/bans`, { method: 'POST', body });
      setF({ ...f, externalId: '', reason: '', seconds: '' });
    } catch (err) {
      setProblem(err.message);
    }
    refresh();
  };
  const lift = async (id) => {
    setProblem(null);
    try {
      await api(`/bans/${id}/lift`, { method: 'POST' });
    } catch (err) {
      setProblem(err.message);
    }
    refresh();
  };

  return html`
    <div data-test="bans">
      <form class="inline" onSubmit=${create} data-test="ban-form">
        <input placeholder="player externalId" required ...${field('externalId')} data-test="ban-user" />
        <select value=${f.scope} onChange=${(e) => setF({ ...f, scope: e.currentTarget.value })} data-test="ban-scope">
          <option value="server" disabled=${!selectedServer}>this server${selectedServer ? ` (${selectedServer})` : ''}</option>
          <option value="game">this game</option>
          <option value="workspace">every game of the workspace</option>
        </select>
        <input type="number" min="1" placeholder="seconds (empty = permanent)" ...${field('seconds')} />
        <input placeholder="reason" required maxlength="500" ...${field('reason')} data-test="ban-reason" />
        <button type="submit" class="danger" data-test="ban-create">Ban</button>
      </form>
      ${problem && html`<p class="error">${problem}</p>`}
      ${!data
        ? html`<p class="empty">${error ? error.message : 'Loading bans…'}</p>`
        : data.bans.length === 0
          ? html`<p class="empty">No bans in force.</p>`
          : html`
            <div class="table-wrap">
              <table class="grid">
                <thead><tr><th>Player</th><th>Scope</th><th>Reason</th><th>Issued</th><th>Expires</th><th class="sticky-end"></th></tr></thead>
                <tbody>
                  ${data.bans.map((b) => html`
                    <tr key=${b.id} data-test="ban-row" data-user=${b.externalId}>
                      <td class="id">${b.externalId}</td>
                      <td class="id">${b.scope}${b.externalServerId ? ` (${b.externalServerId})` : ''}</td>
                      <td class="id">${b.reason}</td>
                      <td class="id">${stamp(b.issuedAt)} by ${b.issuedBy}</td>
                      <td>${b.expiresAt ? stamp(b.expiresAt) : 'never'}</td>
                      <td class="sticky-end"><button type="button" onClick=${() => lift(b.id)} data-test="ban-lift">lift</button></td>
                    </tr>`)}
                </tbody>
              </table>
            </div>`}
    </div>`;
}
