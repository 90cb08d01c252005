// Commands of the game and their states (pending, dispatched, acked, expired, failed), pushed by the live
// feed. Each status is shown with the time of the transition that set it, and every transition in the
// row's title and details (status and transitions come from one source: src/commands/command-query.ts).
// Expired and failed commands issued by the signed-in moderator are highlighted and counted at the top
// (spec: Command lifecycle, "surfaced to the issuing moderator").
import { html } from './html.js';
import { clock } from './format.js';

const PROBLEM = new Set(['expired', 'failed']);

function target(c) {
  return c.target.externalId ? `player ${c.target.externalId}` : `server ${c.target.externalServerId}`;
}

function history(c) {
  return c.transitions.map((t) => `${t.toStatus} ${clock(t.at)}${t.externalServerId ? ` on ${t.externalServerId}` : ''}${t.reason ? ` (${t.reason})` : ''}`).join(' → ');
}

export function Commands({ commands, me }) {
  const problems = commands.filter((c) => c.issuedBy === me && PROBLEM.has(c.status));
  return html`
    <div data-test="commands">
      ${problems.length > 0 && html`
        <p class="alert" data-test="my-problems">${problems.length} of your commands ${problems.length === 1 ? 'has' : 'have'} expired or failed.</p>`}
      ${commands.length === 0
        ? html`<p class="empty">No commands yet.</p>`
        : html`
          <div class="table-wrap">
            <table class="grid">
              <thead><tr><th>Status</th><th>Type</th><th>Target</th><th>Issued</th><th>Server</th><th>By</th></tr></thead>
              <tbody>
                ${commands.map((c) => html`
                  <tr key=${c.id} class=${c.issuedBy === me && PROBLEM.has(c.status) ? 'problem' : ''} title=${history(c)}
                      data-test="command-row" data-command=${c.id} data-status=${c.status} data-type=${c.type} data-transitions=${c.transitions.map((t) => t.toStatus).join(',')}>
                    <td>
                      <span class=${`badge status-${c.status}`} data-test="command-status">${c.status}</span>
                      <small> ${clock(c.statusAt)}</small>
                      ${c.failureReason ? html`<div class="reason">${c.failureReason}</div>` : ''}
                    </td>
                    <td>${c.type}</td>
                    <td class="id">${target(c)}</td>
                    <td>${clock(c.issuedAt)}</td>
                    <td class="id">${c.server ?? '-'}</td>
                    <td class="id">${c.issuedBy}</td>
                  </tr>`)}
              </tbody>
            </table>
          </div>`}
    </div>`;
}
