// A context snapshot by id: its items (class, trust tier, tokens, rank), its exclusions with their reasons, and
// its hash recomputed here, in the browser, from the canonical JSON of what the API returned.
import { api } from '../api.js';
import { verifySnapshot } from '../jcs.js';
import { h, clear, append, notice, showError, field, kv, table, pill } from '../ui.js';

// agentkb://ws/<workspace>/kb/<kb>/documents/<document>#chunk=N -> the console's page of that document.
const DOCUMENT = /^agentkb:\/\/ws\/[^/]+\/kb\/([^/]+)\/documents\/([^/#]+)/;

function provenance(uri) {
  const found = uri && DOCUMENT.exec(uri);
  if (!found) return uri ? h('div', { class: 'small muted' }, uri) : null;
  return h('div', { class: 'small' }, h('a', { href: `#/kbs/${found[1]}/docs/${found[2]}` }, 'open the document'),
    h('span', { class: 'muted' }, ` ${uri}`));
}

async function showSnapshot(out, id) {
  const { data } = await api('GET', `/v1/snapshots/${encodeURIComponent(id)}`);
  const check = await verifySnapshot(data);
  const scope = data.scope || {};
  const budget = data.budget || {};
  clear(out, h('h2', { id: 'snapshot-title', tabindex: '-1' }, `Snapshot ${data.snapshotId}`),
    h('div', { id: 'hash-check', class: `notice ${check.ok ? 'ok' : 'bad'}`, role: check.ok ? 'status' : 'alert',
      'data-verified': check.ok ? 'true' : 'false' },
    check.ok ? 'Hash verified in this browser: ' : 'Hash does NOT match: ',
    h('span', { class: 'mono' }, check.expected),
    check.ok ? '' : [' recomputed ', h('span', { class: 'mono' }, check.actual)]),
    kv([['Run', data.runId], ['Attempt', data.attemptId], ['Step', data.stepId], ['Strategy', data.strategy],
      ['Workspace', scope.workspaceId], ['Max classification', scope.maxClassification],
      ['Budget', `${budget.usedTokens} of ${budget.maxTokens} tokens used` +
        (budget.reservedForOutput ? `, ${budget.reservedForOutput} reserved for output` : '')]]),
    h('h3', null, `Items (${data.items.length})`),
    table(['Rank', 'Class', 'Trust tier', 'Classification', 'Tokens', 'Source', 'Content'],
      data.items.map((item) => [String(item.rank), pill(item.class), item.trustTier || '–',
        item.classification || '–', String(item.tokens), [h('div', { class: 'mono small' }, item.sourceId),
          provenance(item.provenance)],
        h('details', null, h('summary', null, 'text'), h('pre', null, item.content || ''))])),
    h('h3', null, `Exclusions (${(data.exclusions || []).length})`),
    (data.exclusions || []).length ? table(['Source', 'Reason'], data.exclusions.map((x) => [
      h('span', { class: 'mono small' }, x.sourceId), pill(x.reason, 'warn')]))
      : h('p', { class: 'muted small' }, 'Nothing was excluded.'));
  out.querySelector('#snapshot-title').focus();
}

export async function render(main, [id]) {
  const input = h('input', { id: 'snapshot-id', required: true, value: id || '', class: 'mono', size: 40 });
  const out = h('section', { 'aria-live': 'polite' });
  append(main, h('h1', null, 'Snapshots'),
    h('form', { class: 'inline card', onsubmit: (event) => {
      event.preventDefault();
      location.hash = `#/snapshots/${encodeURIComponent(input.value.trim())}`;
    } }, field('Snapshot id', input), h('button', { type: 'submit', class: 'primary' }, 'Open snapshot')), out);
  if (!id) { input.focus(); return; }
  clear(out, notice('', 'Loading and verifying…'));
  try { await showSnapshot(out, id); } catch (error) { showError(out, error); }
}
