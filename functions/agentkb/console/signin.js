// Who the console calls the API as: the user's own credential, kept in sessionStorage (this tab only, gone when
// it closes), sent as a header, never in a URL. Sign-in methods are a list: each renders its form and yields a
// credential {kind, secret, workspace, who?, expiresAt?}: an API key, or (when config.json names an issuer) an
// access token from the OIDC sign-in of oidc.js, sent as `Authorization: Bearer`, forgotten when it expires.
import { h, clear, field, notice } from './ui.js';
import { startSignIn, completeSignIn } from './oidc.js';

const STORE = 'agentkb.console.session';
let expiryTimer;
let onExpired = () => {};

function read() {
  try { return JSON.parse(sessionStorage.getItem(STORE) || 'null'); } catch { return null; }
}

function arm() {
  clearTimeout(expiryTimer);
  const s = read();
  if (!s || !s.expiresAt) return;
  const wait = Math.max(0, Math.min(s.expiresAt - Date.now(), 2 ** 31 - 1));  // setTimeout's longest delay
  expiryTimer = setTimeout(() => (Date.now() >= s.expiresAt ? onExpired() : arm()), wait);
}

export const session = {
  get() {
    const s = read();
    return s && s.expiresAt && Date.now() >= s.expiresAt ? null : s;  // an expired token is never sent
  },
  set(value) { sessionStorage.setItem(STORE, JSON.stringify(value)); arm(); },
  clear() { sessionStorage.removeItem(STORE); clearTimeout(expiryTimer); },
  workspace() { return (this.get() || {}).workspace; },
  /** What the header shows: the person a token speaks for, and the workspace. */
  label() {
    const s = this.get() || {};
    return s.who ? `${s.who} · workspace ${s.workspace}` : `workspace ${s.workspace}`;
  },
  /** `handler` runs when the signed-in token's lifetime ends (now, if it already has). */
  whenExpired(handler) {
    onExpired = () => { if (read()) handler(); };
    arm();
  },
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

// The same origin's config.json: {oidc: {issuer, clientId, name, scope, workspaceScope} | null}.
const config = fetch('config.json', { credentials: 'omit', cache: 'no-store' })
  .then((res) => (res.ok ? res.json() : { oidc: null })).catch(() => ({ oidc: null }));

const oidcMethod = {
  id: 'oidc',
  render() {
    const box = h('div', { class: 'signin-oidc' });
    config.then(({ oidc }) => {
      if (!oidc) return;
      const out = h('div', { 'aria-live': 'polite' });
      const go = h('button', { type: 'button', class: 'primary', id: 'signin-oidc', onclick: async () => {
        const workspace = document.getElementById('signin-workspace').value.trim();
        if (!workspace) { clear(out, notice('bad', 'Enter a workspace first.')); return; }
        go.disabled = true;
        clear(out, notice('', `Going to ${oidc.name}…`));
        try { await startSignIn(oidc, workspace); } catch (error) {
          go.disabled = false;
          clear(out, notice('bad', error.message || String(error)));
        }
      } }, `Sign in with ${oidc.name}`);
      clear(box, h('p', { class: 'muted small' }, 'Or, for the workspace above, with your organisation\'s ' +
        'sign-in (the token stays in this tab too):'), go, out);
    });
    return box;
  },
};

export const methods = [apiKeyMethod, oidcMethod];

/** The identity provider's answer, when this page load is its callback: {credential} | {problem} | null. */
export const resumeSignIn = completeSignIn;
