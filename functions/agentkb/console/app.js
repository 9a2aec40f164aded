// The console's shell: sign-in, navigation, hash routes (#/page/arg...), one page at a time in <main>.
import { api, ApiError, whenUnauthorized } from './api.js';
import { methods, resumeSignIn, session } from './signin.js';
import { h, clear, notice } from './ui.js';
import * as kbs from './pages/kbs.js';
import * as search from './pages/search.js';
import * as review from './pages/review.js';
import * as memories from './pages/memories.js';
import * as traces from './pages/traces.js';
import * as snapshots from './pages/snapshots.js';
import * as graph from './pages/graph.js';

const PAGES = [
  ['kbs', 'Knowledge bases', kbs], ['search', 'Search', search], ['review', 'Memory review', review],
  ['memories', 'Memories', memories], ['traces', 'Recall traces', traces], ['snapshots', 'Snapshots', snapshots],
  ['graph', 'Graph', graph],
];
const main = document.getElementById('main');
let signInNote = '';

async function verify(credential) {
  if (!credential.secret || !credential.workspace) return 'Enter a workspace and an API key.';
  const token = credential.kind === 'bearer';
  session.set(credential);
  try {
    await api('GET', '/api/v2/knowledge/bases', { query: { workspaceId: credential.workspace, limit: 1 },
      signingIn: true });
  } catch (error) {
    session.clear();
    if (error instanceof ApiError && error.status === 401) {
      return token ? 'The API did not accept the sign-in token.' : 'This API key is not valid here.';
    }
    if (error instanceof ApiError && error.status === 404) {
      return token ? 'This sign-in cannot reach that workspace.' : 'This key cannot reach that workspace.';
    }
    return error.message;
  }
  signInNote = '';
  if (!location.hash || location.hash === '#/signin') location.hash = '#/kbs';
  route();
  return null;
}

function renderSignIn() {
  document.getElementById('top').hidden = true;
  document.title = 'Sign in - agentkb console';
  clear(main, h('section', { class: 'signin card' },
    h('h1', null, 'Sign in to agentkb'),
    h('p', { class: 'muted small' }, 'Your key stays in this tab (sessionStorage) and travels only as a header ' +
      'to this origin.'),
    signInNote ? notice('warn', signInNote) : null,
    methods.map((method) => method.render(verify))));
  document.getElementById('signin-workspace').focus();
}

function renderNav(current) {
  const nav = document.getElementById('nav');
  clear(nav, PAGES.map(([id, label]) => h('a', { href: `#/${id}`, 'aria-current': id === current ? 'page' : null },
    label)));
  document.getElementById('who').textContent = session.label();
  document.getElementById('top').hidden = false;
}

let generation = 0;
export function current() { return generation; }

async function route() {
  if (!session.get()) { renderSignIn(); return; }
  const [name, ...args] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const page = PAGES.find(([id]) => id === name) || PAGES[0];
  generation += 1;
  renderNav(page[0]);
  document.title = `${page[1]} - agentkb console`;
  clear(main);
  try {
    await page[2].render(main, args, session.workspace());
  } catch (error) {
    if (session.get()) clear(main, notice('bad', error.message || String(error)));  // else: back at sign-in
  }
}

function signedOut(note) {
  session.clear();
  signInNote = note;
  renderSignIn();
}
whenUnauthorized(() => signedOut('The API refused the credential (401): sign in again.'));
session.whenExpired(() => signedOut('Your sign-in has expired: sign in again.'));
document.getElementById('signout').addEventListener('click', () => signedOut('Signed out.'));
window.addEventListener('hashchange', route);

async function start() {
  const resumed = await resumeSignIn();  // this load is the identity provider's callback
  if (resumed && resumed.credential) signInNote = (await verify(resumed.credential)) || '';
  else if (resumed) signInNote = resumed.problem;
  if (!resumed || !resumed.credential || signInNote) await route();
}
start().then(() => { document.documentElement.dataset.ready = String(Math.round(performance.now())); });
