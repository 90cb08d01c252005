// Live servers of the game (issue #7): occupancy, region, sdkVersion with stale versions flagged, uptime
// and last heartbeat age, pushed by the live feed (live.js). Ages are counted on from the last event with
// the server's clock (`offset`). Clicking a row opens its roster. The table scrolls inside its panel.
import { html } from './html.js';
import { duration } from './format.js';
import { useNow } from './live.js';

export function Servers({ servers, selected, onSelect, offset = 0 }) {
  const now = useNow() + offset;
  if (!servers.length) return html`<p class="empty" data-test="no-servers">No live servers.</p>`;
  return html`
    <div class="table-wrap">
      <table class="grid" data-test="servers">
        <thead><tr><th>Server</th><th>Players</th><th>Last heartbeat</th><th>SDK</th><th>Region</th><th>Scope</th><th>Uptime</th></tr></thead>
        <tbody>
          ${servers.map((s) => {
            const age = Math.max(0, (now - Date.parse(s.lastHeartbeatAt)) / 1000);
            const late = age > 2 * s.heartbeatIntervalSeconds;
            return html`
              <tr key=${s.externalServerId} class=${s.externalServerId === selected ? 'selected' : ''} onClick=${() => onSelect(s.externalServerId)}
                  data-test="server-row" data-server=${s.externalServerId}>
                <td class="id"><button class="link" type="button" data-test="open-server">${s.externalServerId}</button></td>
                <td>${s.playerCount}/${s.maxPlayers}</td>
                <td class=${late ? 'warn' : ''}>${duration(age)} ago</td>
                <td class=${s.stale ? 'warn' : ''}>${s.sdkVersion}${s.stale ? html` <span class="badge stale" title="older than the newest version among live servers">stale</span>` : ''}</td>
                <td>${s.region ?? '-'}</td>
                <td class="id">${s.externalScopeId ?? '-'}</td>
                <td>${duration(s.uptimeSeconds)}</td>
              </tr>`;
          })}
        </tbody>
      </table>
    </div>`;
}
