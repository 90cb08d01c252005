// The form of one moderator action. Each type asks for what its payload needs (src/schemas/commands.ts):
// kick a reason; mute a duration and optional reason; freeze an optional reason; teleport a place or a
// position; message a text. Sending issues the command; the commands table then shows it go from
// pending to dispatched to acked (or expired / failed).
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';

function payloadOf(type, f) {
  const reason = f.reason.trim() ? { reason: f.reason.trim() } : {};
  switch (type) {
    case 'kick': return { reason: f.reason.trim() };
    case 'mute': return { durationSeconds: Number(f.duration), ...reason };
    case 'freeze': return reason;
    case 'teleport': return f.place.trim() ? { place: f.place.trim() } : { position: { x: Number(f.x), y: Number(f.y), z: Number(f.z) } };
    case 'message': return { text: f.text.trim() };
    default: return {};
  }
}

export function ActionForm({ gameId, action, onDone, onCancel }) {
  const [f, setF] = useState({ reason: '', duration: '300', place: '', x: '0', y: '0', z: '0', text: '' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const field = (name) => ({ value: f[name], onInput: (e) => setF({ ...f, [name]: e.currentTarget.value }) });
  const who = action.target.externalId ? `player ${action.target.externalId}` : `everyone on ${action.target.externalServerId}`;

  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { command } = await api(`/games/${gameId}/commands`, { method: 'POST', body: { type: action.type, target: action.target, payload: payloadOf(action.type, f) } });
      onDone(command);
    } catch (err) {
      setError(`${err.message}${err.retryAfter ? ` (retry in ${err.retryAfter} s)` : ''}`);
    } finally {
      setBusy(false);
    }
  };

  return html`
    <form class="action-form" onSubmit=${submit} data-test="action-form" data-action=${action.type}>
      <strong>${action.type} ${who}</strong>
      ${action.type === 'kick' && html`<label>Reason <input required maxlength="500" ...${field('reason')} data-test="reason" /></label>`}
      ${action.type === 'mute' && html`
        <label>Seconds <input type="number" min="1" required ...${field('duration')} data-test="duration" /></label>
        <label>Reason <input maxlength="500" ...${field('reason')} data-test="reason" /></label>`}
      ${action.type === 'freeze' && html`<label>Reason <input maxlength="500" ...${field('reason')} data-test="reason" /></label>`}
      ${action.type === 'teleport' && html`
        <label>Place <input maxlength="128" placeholder="or a position:" ...${field('place')} data-test="place" /></label>
        <label>x <input type="number" step="any" ...${field('x')} /></label>
        <label>y <input type="number" step="any" ...${field('y')} /></label>
        <label>z <input type="number" step="any" ...${field('z')} /></label>`}
      ${action.type === 'message' && html`<label>Text <input required maxlength="1000" ...${field('text')} data-test="text" /></label>`}
      <button type="submit" disabled=${busy} data-test="send">Send</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
      ${error && html`<span class="error" data-test="action-error">${error}</span>`}
    </form>`;
}
