// One server's roster with each player's session length (counted on from the session start), and the
// moderator actions on a player (kick, mute, freeze, teleport, message) or on the whole server (message).
// The action form is action-form.js. The actions column stays in view when the table scrolls.
import { html } from './html.js';
import { duration } from './format.js';
import { useNow } from './live.js';

const PLAYER_ACTIONS = ['kick', 'mute', 'freeze', 'teleport', 'message'];

export function Roster({ roster, onAction, offset = 0 }) {
  const now = useNow() + offset;
  if (!roster) return html`<p class="empty">Select a server to see who is on it.</p>`;
  const { externalServerId, players } = roster;
  return html`
    <div data-test="roster" data-server=${externalServerId}>
      <div class="toolbar">
        <strong class="id">${externalServerId}</strong> · ${players ? `${players.length} online` : 'loading…'}
        <button type="button" onClick=${() => onAction({ type: 'message', target: { externalServerId } })} data-test="message-server">Message server</button>
      </div>
      ${!players
        ? html`<p class="empty">Loading…</p>`
        : players.length === 0
          ? html`<p class="empty">Nobody online on this server.</p>`
          : html`
            <div class="table-wrap">
              <table class="grid">
                <thead><tr><th>Player</th><th>Username</th><th>Team</th><th>Session</th><th class="sticky-end">Actions</th></tr></thead>
                <tbody>
                  ${players.map((p) => html`
                    <tr key=${p.externalId} data-test="player-row" data-player=${p.externalId}>
                      <td class="id">${p.externalId}</td>
                      <td class="id">${p.username ?? '-'}</td>
                      <td>${p.team ?? '-'}</td>
                      <td>${duration((now - Date.parse(p.openedAt)) / 1000)}</td>
                      <td class="sticky-end"><div class="actions">
                        ${PLAYER_ACTIONS.map((type) => html`
                          <button type="button" class=${type === 'kick' ? 'danger' : ''} onClick=${() => onAction({ type, target: { externalId: p.externalId } })} data-test=${`action-${type}`}>${type}</button>`)}
                      </div></td>
                    </tr>`)}
                </tbody>
              </table>
            </div>`}
    </div>`;
}
