// Doors with their forced state (spec: States › Door forced state) and the lockdown switch: locking
// down forces every door locked; lifting it returns every door to auto. Each change also sends
// door_set_state to every live server.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { usePoll } from './poll.js';

const STATES = ['locked', 'unlocked', 'auto'];

export function Doors({ gameId }) {
  const { data, error, refresh } = usePoll(() => api(`/games/${gameId}/doors`), 3000, gameId);
  const [problem, setProblem] = useState(null);
  const act = async (path, body) => {
    setProblem(null);
    try {
      await api(path, { method: 'POST', body });
    } catch (err) {
      setProblem(err.message);
    }
    refresh();
  };
  if (!data) return html`<p class="empty">${error ? error.message : 'Loading doors…'}</p>`;
  return html`
    <div data-test="doors">
      <div class="toolbar">
        <label class="switch">
          <input type="checkbox" checked=${data.lockdown} disabled=${data.doors.length === 0}
                 onChange=${(e) => act(`/games/${gameId}/lockdown`, { locked: e.currentTarget.checked })} data-test="lockdown" />
          Lockdown ${data.lockdown ? html`<span class="badge status-failed">ON</span>` : ''}
        </label>
      </div>
      ${problem && html`<p class="error">${problem}</p>`}
      ${data.doors.length === 0
        ? html`<p class="empty">This game has no doors.</p>`
        : html`
          <table class="grid">
            <thead><tr><th>Door</th><th>Kind</th><th>Default</th><th>Fail mode</th><th>Forced state</th><th></th></tr></thead>
            <tbody>
              ${data.doors.map((d) => html`
                <tr key=${d.key} data-test="door-row" data-door=${d.key} data-state=${d.forcedState}>
                  <td>${d.name} <small>${d.key}</small></td>
                  <td>${d.kind}</td>
                  <td>${d.defaultEffect}</td>
                  <td>${d.failMode}</td>
                  <td><span class=${`badge forced-${d.forcedState}`}>${d.forcedState}</span></td>
                  <td class="actions">
                    ${STATES.filter((s) => s !== d.forcedState).map((s) => html`
                      <button type="button" onClick=${() => act(`/games/${gameId}/doors/${encodeURIComponent(d.key)}/state`, { state: s })}>${s}</button>`)}
                  </td>
                </tr>`)}
            </tbody>
          </table>`}
    </div>`;
}
