// Sign-in: the operator token (from CONSOLE_TOKEN, or the address the console printed at boot) and the
// moderator's name, which is recorded as the issuer of everything done in this tab.
import { useState } from 'preact/hooks';
import { html } from './html.js';
import { signIn } from './api.js';

export function Login({ token: given, onSignedIn }) {
  const [token, setToken] = useState(given || '');
  const [name, setName] = useState('');
  const submit = (e) => {
    e.preventDefault();
    if (!token.trim() || !name.trim()) return;
    signIn(token, name);
    onSignedIn();
  };
  return html`
    <form class="login" onSubmit=${submit} data-test="login">
      <h1>Moderator console</h1>
      <label>Operator token
        <input type="password" autocomplete="off" value=${token} onInput=${(e) => setToken(e.currentTarget.value)} data-test="token" />
      </label>
      <label>Your name (recorded on every action)
        <input value=${name} maxlength="64" required onInput=${(e) => setName(e.currentTarget.value)} data-test="moderator" />
      </label>
      <button type="submit" data-test="sign-in">Sign in</button>
    </form>`;
}
