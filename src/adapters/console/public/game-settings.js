// A game's heartbeat interval, for a workspace admin (issue #31: admins hold "game settings";
// PATCH /console/api/games/:id/settings). The platform settings are changed there too, by the CLI or an
// API client; the cloud API base URL and key are the operator's alone and not offered here.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';

export function GameSettings({ game }) {
  const [seconds, setSeconds] = useState(String(game.heartbeatIntervalSeconds));
  const [result, setResult] = useState(null);
  const save = async (e) => {
    e.preventDefault();
    try {
      const { settings } = await api(`/games/${game.id}/settings`, { method: 'PATCH', body: { heartbeatIntervalSeconds: Number(seconds) } });
      setResult({ ok: true, text: `Saved: servers are told ${settings.heartbeatIntervalSeconds} s from their next heartbeat.` });
    } catch (err) {
      setResult({ ok: false, text: err.message });
    }
  };
  return html`
    <form class="row" onSubmit=${save} data-test="game-settings">
      <label>Heartbeat interval (s) <input type="number" min="15" max="60" step="1" required value=${seconds} onInput=${(e) => setSeconds(e.currentTarget.value)} data-test="heartbeat-interval" /></label>
      <button type="submit" data-test="save-settings">Save</button>
      ${result && html`<span class=${result.ok ? 'ok' : 'error'} data-test="settings-result">${result.text}</span>`}
    </form>`;
}
