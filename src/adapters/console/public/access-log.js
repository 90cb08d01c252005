// The access log (issue #21): grants and denials of the game's doors, newest first, with the same filters
// as `admin doors access-log` (door, user, decision, since), older pages by keyset cursor, and a link from
// each decision to the policy that decided it (GET /games/:id/policies/:policyId).
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { stamp } from './format.js';

function query(filters, cursor) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v.trim()) q.set(k, v.trim());
  if (cursor) q.set('cursor', cursor);
  q.set('limit', '25');
  return q.toString();
}

function PolicyCard({ gameId, policyId, onClose }) {
  const [state, setState] = useState({ policy: null, error: null });
  useEffect(() => {
    api(`/games/${gameId}/policies/${policyId}`).then((d) => setState({ policy: d.policy, error: null }), (error) => setState({ policy: null, error }));
  }, [policyId]);
  const p = state.policy;
  return html`
    <div class="card" data-test="policy-card" data-policy=${policyId}>
      <div class="toolbar"><strong>Policy <span class="id">${policyId}</span></strong><button type="button" onClick=${onClose} data-test="policy-close">Close</button></div>
      ${state.error && html`<p class="error">${state.error.message}</p>`}
      ${!p && !state.error && html`<p class="empty">Loading…</p>`}
      ${p && html`
        <dl class="fields">
          <dt>Door</dt><dd>${p.doorKey}</dd>
          <dt>Effect</dt><dd data-test="policy-effect">${p.effect}</dd>
          <dt>Priority</dt><dd>${p.priority}</dd>
          <dt>Subject</dt><dd class="id">${p.subjectType}${p.subjectIds.length ? `: ${p.subjectIds.join(', ')}` : ''}${p.includeDescendants ? ' (and units below)' : ''}</dd>
          <dt>Conditions</dt><dd class="id">${Object.keys(p.conditions).length ? JSON.stringify(p.conditions) : 'none'}</dd>
          <dt>Created</dt><dd>${stamp(p.createdAt)}</dd>
        </dl>`}
    </div>`;
}

export function AccessLog({ gameId }) {
  const [form, setForm] = useState({ door: '', user: '', decision: '', since: '' });
  const [filters, setFilters] = useState(form);
  const [rows, setRows] = useState(null);
  const [next, setNext] = useState(null);
  const [error, setError] = useState(null);
  const [policy, setPolicy] = useState(null);

  const load = async (cursor) => {
    setError(null);
    try {
      const page = await api(`/games/${gameId}/access-log?${query(filters, cursor)}`);
      setRows((r) => (cursor && r ? [...r, ...page.entries] : page.entries));
      setNext(page.nextCursor);
    } catch (err) {
      setError(err.message);
    }
  };
  useEffect(() => {
    load(null);
  }, [gameId, filters]);
  const field = (name) => ({ value: form[name], onInput: (e) => setForm({ ...form, [name]: e.currentTarget.value }) });

  return html`
    <div data-test="access-log">
      <form class="inline" onSubmit=${(e) => { e.preventDefault(); setFilters({ ...form }); }} data-test="access-log-filters">
        <input placeholder="door key" maxlength="128" ...${field('door')} data-test="filter-door" />
        <input placeholder="user (externalId)" maxlength="128" ...${field('user')} data-test="filter-user" />
        <select value=${form.decision} onChange=${(e) => setForm({ ...form, decision: e.currentTarget.value })} data-test="filter-decision">
          <option value="">grants and denials</option>
          <option value="allow">grants only</option>
          <option value="deny">denials only</option>
        </select>
        <input placeholder="since (15m, 2h, 7d or a time)" ...${field('since')} data-test="filter-since" />
        <button type="submit" data-test="filter-apply">Show</button>
        <button type="button" onClick=${() => load(null)} data-test="access-log-refresh">Refresh</button>
      </form>
      ${error && html`<p class="error" data-test="access-log-error">${error}</p>`}
      ${policy && html`<${PolicyCard} gameId=${gameId} policyId=${policy} onClose=${() => setPolicy(null)} />`}
      ${!rows
        ? html`<p class="empty">Loading…</p>`
        : rows.length === 0
          ? html`<p class="empty">No grants or denials match.</p>`
          : html`
            <div class="table-wrap">
              <table class="grid">
                <thead><tr><th>Time</th><th>Decision</th><th>User</th><th>Door</th><th>Reason</th><th>Policy</th><th>Server</th></tr></thead>
                <tbody>
                  ${rows.map((e) => html`
                    <tr key=${e.id} data-test="access-row" data-decision=${e.decision} data-user=${e.externalId} data-door=${e.doorKey}>
                      <td>${stamp(e.at)}</td>
                      <td><span class=${`badge decision-${e.decision}`}>${e.decision}</span></td>
                      <td class="id">${e.externalId}</td>
                      <td class="id">${e.doorKey}</td>
                      <td class="id" data-test="access-reason">${e.reason}</td>
                      <td>${e.policyId
                        ? html`<button type="button" class="link id" onClick=${() => setPolicy(e.policyId)} data-test="policy-link">${e.policyId.slice(0, 8)}…</button>`
                        : '-'}</td>
                      <td class="id">${e.externalServerId ?? '-'}</td>
                    </tr>`)}
                </tbody>
              </table>
            </div>
            ${next && html`<button type="button" onClick=${() => load(next)} data-test="access-log-more">Older…</button>`}`}
    </div>`;
}
