// Who the console calls the API as: the user's own credential, kept in sessionStorage (this tab only, gone when
// it closes), sent as a header, never in a URL. Sign-in methods are a list: each renders its form and yields a
// credential {kind, secret, workspace}; an OIDC method (authorization code + PKCE, when an issuer is configured)
// joins the list as {kind: 'bearer'} once the API accepts bearer tokens.
import { h, clear, field, notice } from './ui.js';

const STORE = 'agentkb.console.session';

export const session = {
  get() {
    try { return JSON.parse(sessionStorage.getItem(STORE) || 'null'); } catch { return null; }
  },
  set(value) { sessionStorage.setItem(STORE, JSON.stringify(value)); },
  clear() { sessionStorage.removeItem(STORE); },
  workspace() { return (this.get() || {}).workspace; },
  authHeaders() {
    const s = this.get();
    if (!s) return {};
    return s.kind === 'bearer' ? { Authorization: `Bearer ${s.secret}` } : { 'X-API-Key': s.secret };
  },
};

const apiKeyMethod = {
  id: 'api-key',
  render(verify) {
    const workspace = h('input', { id: 'signin-workspace', name: 'workspace', required: true, placeholder: 'demo',
      autocomplete: 'off', spellcheck: 'false' });
    const key = h('input', { id: 'signin-key', name: 'apiKey', type: 'password', required: true,
      autocomplete: 'off', spellcheck: 'false' });
    const out = h('div', { 'aria-live': 'polite' });
    const form = h('form', { method: 'post', onsubmit: async (event) => {
      event.preventDefault();
      const credential = { kind: 'apiKey', secret: key.value.trim(), workspace: workspace.value.trim() };
      clear(out, notice('', 'Checking the key…'));
      const problem = await verify(credential);
      if (problem) clear(out, notice('bad', problem));
    } },
    field('Workspace', workspace), field('API key', key),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'), out);
    return form;
  },
};

export const methods = [apiKeyMethod];
