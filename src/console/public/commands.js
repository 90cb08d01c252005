// Commands of the game and their states (pending, dispatched, acked, expired, failed), from /live
// (polled every second). Expired and failed commands issued by the signed-in moderator are highlighted
// and counted at the top (spec: Command lifecycle, "surfaced to the issuing moderator").
import { html } from './html.js';
import { clock } from './format.js';

const PROBLEM = new Set(['expired', 'failed']);

function target(c) {
  return c.target.externalId ? `player ${c.target.externalId}` : `server ${c.target.externalServerId}`;
}

export function Commands({ commands, me }) {
  const mine = `console:${me}`;
  const problems = commands.filter((c) => c.issuedBy === mine && PROBLEM.has(c.status));
  return html`
    <div data-test="commands">
      ${problems.length > 0 && html`
        <p class="alert" data-test="my-problems">${problems.length} of your commands ${problems.length === 1 ? 'has' : 'have'} expired or failed.</p>`}
      ${commands.length === 0
        ? html`<p class="empty">No commands yet.</p>`
        : html`
          <table class="grid">
            <thead><tr><th>Issued</th><th>Type</th><th>Target</th><th>Server</th><th>Status</th><th>By</th></tr></thead>
            <tbody>
              ${commands.map((c) => html`
                <tr key=${c.id} class=${c.issuedBy === mine && PROBLEM.has(c.status) ? 'problem' : ''} data-test="command-row" data-command=${c.id} data-status=${c.status} data-type=${c.type}>
                  <td>${clock(c.issuedAt)}</td>
                  <td>${c.type}</td>
                  <td>${target(c)}</td>
                  <td>${c.server ?? '-'}</td>
                  <td><span class=${`badge status-${c.status}`} data-test="command-status" title=${c.failureReason ?? ''}>${c.status}</span>${c.failureReason ? html` <small>${c.failureReason}</small>` : ''}</td>
                  <td>${c.issuedBy}</td>
                </tr>`)}
            </tbody>
          </table>`}
    </div>`;
}
