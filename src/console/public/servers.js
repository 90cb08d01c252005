// Live servers of the game (issue #7): occupancy, region, sdkVersion with stale versions flagged,
// uptime and last heartbeat age, from /live (polled every second). Clicking a row opens its roster.
import { html } from './html.js';
import { duration } from './format.js';

export function Servers({ servers, selected, onSelect }) {
  if (!servers.length) return html`<p class="empty" data-test="no-servers">No live servers.</p>`;
  return html`
    <table class="grid" data-test="servers">
      <thead><tr><th>Server</th><th>Scope</th><th>Region</th><th>Players</th><th>SDK</th><th>Uptime</th><th>Last heartbeat</th></tr></thead>
      <tbody>
        ${servers.map((s) => {
          const late = s.secondsSinceLastHeartbeat > 2 * s.heartbeatIntervalSeconds;
          return html`
            <tr key=${s.externalServerId} class=${s.externalServerId === selected ? 'selected' : ''} onClick=${() => onSelect(s.externalServerId)}
                data-test="server-row" data-server=${s.externalServerId}>
              <td><button class="link" type="button">${s.externalServerId}</button></td>
              <td>${s.externalScopeId ?? '-'}</td>
              <td>${s.region ?? '-'}</td>
              <td>${s.playerCount}/${s.maxPlayers}</td>
              <td class=${s.stale ? 'warn' : ''}>${s.sdkVersion}${s.stale ? html` <span class="badge stale" title="older than the newest version among live servers">stale</span>` : ''}</td>
              <td>${duration(s.uptimeSeconds)}</td>
              <td class=${late ? 'warn' : ''}>${duration(s.secondsSinceLastHeartbeat)} ago</td>
            </tr>`;
        })}
      </tbody>
    </table>`;
}
