// Doors with their forced state (spec: States › Door forced state) and the lockdown: locking down forces
// every door locked; lifting it returns every door to auto. Both ask first, naming the game and the
// number of doors, and send that number so a game whose doors changed meanwhile is refused (409
// doors_changed) instead of locking doors nobody confirmed. Each change also sends door_set_state to
// every live server.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { usePoll } from './poll.js';

const STATES = ['locked', 'unlocked', 'auto'];

function Confirm({ game, doors, lock, onConfirm, onCancel }) {
  const n = doors.length;
  const what = lock
    ? html`Lock down <strong>${game.name}</strong>: force all <strong>${n}</strong> door${n === 1 ? '' : 's'} locked? Every policy is overridden until the lockdown is lifted, and every live server is told to lock them.`
    : html`Lift the lockdown of <strong>${game.name}</strong>: return all <strong>${n}</strong> door${n === 1 ? '' : 's'} to auto (policies decide again)?`;
  return html`
    <div class="confirm" role="alertdialog" aria-label=${lock ? 'Confirm lockdown' : 'Confirm lifting the lockdown'} data-test="lockdown-confirm">
      <p data-test="lockdown-question">${what}</p>
      <button type="button" class=${lock ? 'danger' : ''} onClick=${onConfirm} data-test="lockdown-yes">${lock ? `Lock ${n} door${n === 1 ? '' : 's'}` : `Return ${n} door${n === 1 ? '' : 's'} to auto`}</button>
      <button type="button" onClick=${onCancel} data-test="lockdown-no">Cancel</button>
    </div>`;
}

export function Doors({ game }) {
  const gameId = game.id;
  const { data, error, refresh } = usePoll(() => api(`/games/${gameId}/doors`), 3000, gameId);
  const [problem, setProblem] = useState(null);
  const [asking, setAsking] = useState(null);
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
    <div data-test="doors" data-lockdown=${String(data.lockdown)}>
      <div class="toolbar">
        ${data.lockdown
          ? html`<span class="badge status-failed" data-test="lockdown-on">LOCKDOWN</span>
                 <button type="button" onClick=${() => setAsking('lift')} data-test="lockdown">Lift lockdown…</button>`
          : html`<button type="button" class="danger" disabled=${data.doors.length === 0} onClick=${() => setAsking('lock')} data-test="lockdown">Lock down all doors…</button>`}
      </div>
      ${asking && html`<${Confirm} game=${game} doors=${data.doors} lock=${asking === 'lock'}
        onCancel=${() => setAsking(null)}
        onConfirm=${() => { setAsking(null); act(`/games/${gameId}/lockdown`, { locked: asking === 'lock', doorCount: data.doors.length }); }} />`}
      ${problem && html`<p class="error" data-test="doors-error">${problem}</p>`}
      ${data.doors.length === 0
        ? html`<p class="empty">This game has no doors.</p>`
        : html`
          <div class="table-wrap">
            <table class="grid">
              <thead><tr><th>Door</th><th>Forced state</th><th>Default</th><th>Fail mode</th><th>Kind</th><th class="sticky-end">Force</th></tr></thead>
              <tbody>
                ${data.doors.map((d) => html`
                  <tr key=${d.key} data-test="door-row" data-door=${d.key} data-state=${d.forcedState}>
                    <td class="id">${d.name} <small>${d.key}</small></td>
                    <td><span class=${`badge forced-${d.forcedState}`}>${d.forcedState}</span></td>
                    <td>${d.defaultEffect}</td>
                    <td>${d.failMode}</td>
                    <td>${d.kind}</td>
                    <td class="sticky-end"><div class="actions">
                      ${STATES.filter((s) => s !== d.forcedState).map((s) => html`
                        <button type="button" onClick=${() => act(`/games/${gameId}/doors/${encodeURIComponent(d.key)}/state`, { state: s })} data-test=${`force-${s}`}>${s}</button>`)}
                    </div></td>
                  </tr>`)}
              </tbody>
            </table>
          </div>`}
    </div>`;
}
