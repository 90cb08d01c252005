// One server's roster with each player's session length, and the moderator actions on a player (kick,
// mute, freeze, teleport, message) or on the whole server (message). The action form is action-form.js.
import { html } from './html.js';
import { duration } from './format.js';

const PLAYER_ACTIONS = ['kick', 'mute', 'freeze', 'teleport', 'message'];

export function Roster({ roster, onAction }) {
  if (!roster) return html`<p class="empty">Select a server to see who is on it.</p>`;
  const { externalServerId, players } = roster;
  return html`
    <div data-test="roster" data-server=${externalServerId}>
      <div class="toolbar">
        <strong>${externalServerId}</strong> · ${players.length} online
        <button type="button" onClick=${() => onAction({ type: 'message', target: { externalServerId } })} data-test="message-server">Message server</button>
      </div>
      ${players.length === 0
        ? html`<p class="empty">Nobody online on this server.</p>`
        : html`
          <table class="grid">
            <thead><tr><th>Player</th><th>Username</th><th>Team</th><th>Session</th><th>Actions</th></tr></thead>
            <tbody>
              ${players.map((p) => html`
                <tr key=${p.externalId} data-test="player-row" data-player=${p.externalId}>
                  <td>${p.externalId}</td>
                  <td>${p.username ?? '-'}</td>
                  <td>${p.team ?? '-'}</td>
                  <td>${duration(p.sessionSeconds)}</td>
                  <td class="actions">
                    ${PLAYER_ACTIONS.map((type) => html`
                      <button type="button" class=${type === 'kick' ? 'danger' : ''} onClick=${() => onAction({ type, target: { externalId: p.externalId } })} data-test=${`action-${type}`}>${type}</button>`)}
                  </td>
                </tr>`)}
            </tbody>
          </table>`}
    </div>`;
}
