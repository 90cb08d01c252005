// The workspace's moderators, for its admins (issue #31): add one (the personal access token is shown
// once, to hand over), change a role, disable or enable, rotate a token (the new one shown once), and
// create a one-time invitation code for the identity-provider sign-in (shown once, with its link).
// Every change takes effect on the next request.
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
  const [invitation, setInvitation] = useState(null);
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
  const rotate = (m) => {
    if (!window.confirm(`Replace the token of ${m.name}? The current one and its sessions stop working now.`)) return;
    act(async () => setIssued((await api(`${base}/${m.id}/token`, { method: 'POST' })).moderator));
  };
  const invite = (m) => act(async () => {
    const { invitation: inv } = await api(`${base}/${m.id}/invitations`, { method: 'POST' });
    setInvitation({ name: m.name, ...inv, link: `${location.origin}/console/auth/oidc/start?invite=${encodeURIComponent(inv.code)}` });
  });
  return html`
    <div data-test="moderators">
      ${failure && html`<p class="error">${failure}</p>`}
      ${issued && html`<p class="ok" data-test="issued-token">Token for ${issued.name} (shown once): <code>${issued.token}</code></p>`}
      ${invitation && html`<p class="ok" data-test="invitation">Invitation for ${invitation.name} (shown once, valid until ${new Date(invitation.expiresAt).toLocaleString()}): <code data-test="invitation-code">${invitation.code}</code> — sign-in link <code>${invitation.link}</code></p>`}
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
                <td class="sticky-end"><button type="button" onClick=${() => act(() => api(`${base}/${m.id}`, { method: 'PATCH', body: { disabled: !m.disabledAt } }))} data-test="toggle-disabled">${m.disabledAt ? 'enable' : 'disable'}</button>
                  <button type="button" onClick=${() => rotate(m)} data-test="rotate-token">rotate token</button>
                  <button type="button" onClick=${() => invite(m)} data-test="invite">invite</button></td>
              </tr>`)}</tbody>
          </table></div>`}
    </div>`;
}
