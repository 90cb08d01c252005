// The workspace's moderators, for its admins (issue #31): add one (the personal access token is shown
// once, to hand over), change a role, disable or enable. Every change takes effect on the next request.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { api } from './api.js';
import { usePoll } from './poll.js';

const ROLES = ['viewer', 'moderator', 'admin'];

export function Moderators({ workspaceId }) {
  const base = `/workspaces/${workspaceId}/moderators`;
  const { data, error, refresh } = usePoll(() => api(base), 30000, `moderators-${workspaceId}`);
  const [name, setName] = useState('');
  const [role, setRole] = useState('viewer');
  const [issued, setIssued] = useState(null);
  const [failure, setFailure] = useState(null);
  const act = async (fn) => {
    setFailure(null);
    try {
      await fn();
      refresh();
    } catch (err) {
      setFailure(err.message);
    }
  };
  const add = (e) => {
    e.preventDefault();
    act(async () => {
      const res = await api(base, { method: 'POST', body: { name, role } });
      setIssued(res.moderator);
      setName('');
    });
  };
  return html`
    <div data-test="moderators">
      ${failure && html`<p class="error">${failure}</p>`}
      ${issued && html`<p class="ok" data-test="issued-token">Token for ${issued.name} (shown once): <code>${issued.token}</code></p>`}
      <form class="row" onSubmit=${add}>
        <input placeholder="Name" required maxlength="64" value=${name} onInput=${(e) => setName(e.currentTarget.value)} data-test="moderator-name" />
        <select value=${role} onChange=${(e) => setRole(e.currentTarget.value)} data-test="moderator-role">${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}</select>
        <button type="submit" data-test="moderator-add">Add</button>
      </form>
      ${!data
        ? html`<p class="empty">${error ? error.message : 'Loading…'}</p>`
        : html`
          <div class="table-wrap"><table class="grid">
            <thead><tr><th>Name</th><th>Role</th><th>Status</th><th class="sticky-end">Actions</th></tr></thead>
            <tbody>${data.moderators.map((m) => html`
              <tr key=${m.id} data-test="moderator-row" data-moderator=${m.id}>
                <td>${m.name} <small>${m.tokenPrefix}</small></td>
                <td><select value=${m.role} onChange=${(e) => act(() => api(`${base}/${m.id}`, { method: 'PATCH', body: { role: e.currentTarget.value } }))} data-test="set-role">
                  ${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}</select></td>
                <td>${m.disabledAt ? 'disabled' : 'active'}</td>
                <td class="sticky-end"><button type="button" onClick=${() => act(() => api(`${base}/${m.id}`, { method: 'PATCH', body: { disabled: !m.disabledAt } }))} data-test="toggle-disabled">${m.disabledAt ? 'enable' : 'disable'}</button></td>
              </tr>`)}</tbody>
          </table></div>`}
    </div>`;
}
