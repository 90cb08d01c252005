// Sign-in: with the identity provider when the service has one (and, the first time, the invitation code
// an admin gave), or by pasting a token once: a personal access token (gmod_…) is exchanged for a
// session; the operator's break-glass token is kept for this tab only.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { signIn } from './api.js';

const REASONS = {
  invalid_state: 'The sign-in took too long or was already used; start again.',
  oidc_failed: 'The identity provider did not confirm the sign-in; start again.',
  identity_not_linked: 'This identity is not linked to a moderator account. Ask an admin for an invitation code, or to link it.',
};

export function Login({ token: given, onSignedIn }) {
  const [token, setToken] = useState(given || '');
  const [invite, setInvite] = useState('');
  const [oidc, setOidc] = useState(false);
  const [error, setError] = useState(() => {
    const code = new URLSearchParams(location.search).get('signin_error');
    return code ? REASONS[code] ?? `Sign-in failed (${code}).` : null;
  });
  useEffect(() => {
    fetch('/console/auth/providers').then((r) => r.json()).then((p) => setOidc(Boolean(p.oidc)), () => setOidc(false));
  }, []);
  const submit = async (e) => {
    e.preventDefault();
    if (!token.trim()) return;
    try {
      onSignedIn(await signIn(token));
    } catch (err) {
      setError(err.message);
    }
  };
  const withIdp = () => {
    location.href = `/console/auth/oidc/start${invite.trim() ? `?invite=${encodeURIComponent(invite.trim())}` : ''}`;
  };
  return html`
    <div class="login">
      <h1>Moderator console</h1>
      ${error && html`<p class="error" data-test="signin-error">${error}</p>`}
      ${oidc && html`
        <div data-test="oidc">
          <label>Invitation code (first sign-in only)
            <input value=${invite} maxlength="64" onInput=${(e) => setInvite(e.currentTarget.value)} data-test="invite" />
          </label>
          <button type="button" onClick=${withIdp} data-test="sign-in-oidc">Sign in with your identity provider</button>
        </div>`}
      <form onSubmit=${submit} data-test="login">
        <label>Personal access token (gmod_…) or operator token
          <input type="password" autocomplete="off" value=${token} onInput=${(e) => setToken(e.currentTarget.value)} data-test="token" />
        </label>
        <button type="submit" data-test="sign-in">Sign in</button>
      </form>
    </div>`;
}
