// Ingest health of the game: warnings (persistent throttling; spec: Events), the 429s of the last ten
// minutes, how far the flushers are behind on its streams, and the rows Postgres refused that the
// flushers set aside as dead letters (newest first, with the database's reason). Pushed by the live feed
// (live.js).
import { html } from './html.js';
import { stamp } from './format.js';

export function Health({ data }) {
  if (!data) return html`<p class="empty">Loading health…</p>`;
  const open = data.warnings.filter((w) => !w.resolvedAt);
  const throttled = data.throttling.reduce((n, m) => n + m.throttled, 0);
  return html`
    <div data-test="health">
      ${open.length === 0
        ? html`<p class="ok">No open ingest health warnings.</p>`
        : open.map((w) => html`
          <p class="alert" key=${w.id} data-test="health-warning">
            <strong>${w.kind}</strong>: ${w.message} <small>(since ${stamp(w.firstAt)}, seen ${w.count}×)</small>
          </p>`)}
      ${data.warnings.filter((w) => w.resolvedAt).map((w) => html`
        <p class="resolved" key=${w.id}>${w.kind} resolved ${stamp(w.resolvedAt)}: ${w.message}</p>`)}
      <p>429 responses in the last ten minutes: <strong>${throttled}</strong></p>
      <div class="table-wrap">
        <table class="grid compact">
          <thead><tr><th>Stream</th><th>Unflushed</th><th>Oldest (s)</th><th>Dead letters</th></tr></thead>
          <tbody>
            ${Object.entries(data.streams).map(([name, s]) => html`
              <tr key=${name}><td>${name}</td><td>${s.entries}</td><td class=${s.lagSeconds > 10 ? 'warn' : ''}>${s.lagSeconds.toFixed(1)}</td>
                <td class=${data.deadLetters.bySource[name] ? 'warn' : ''}>${data.deadLetters.bySource[name] ?? 0}</td></tr>`)}
          </tbody>
        </table>
      </div>
      ${data.deadLetters.total === 0
        ? html`<p class="ok" data-test="dead-letters">No dead letters: every row was stored.</p>`
        : html`
          <div data-test="dead-letters">
            <p class="alert">
              <strong>${data.deadLetters.total}</strong> row(s) refused by the database and set aside
              (${data.deadLetters.kept} kept; the rows around them were stored). Newest:
            </p>
            <div class="table-wrap">
              <table class="grid compact">
                <thead><tr><th>At</th><th>Stream</th><th>Reason</th><th>Row</th></tr></thead>
                <tbody>
                  ${data.deadLetters.latest.map((d) => html`
                    <tr key=${d.id} data-test="dead-letter"><td>${stamp(d.at)}</td><td>${d.source}</td><td>${d.reason}</td><td><code>${d.row}</code></td></tr>`)}
                </tbody>
              </table>
            </div>
          </div>`}
    </div>`;
}
