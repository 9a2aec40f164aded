// Recall traces: what a recall returned (rank, similarity, ranking score, usage feedback) and the usage the
// agent reported. Open one by its request id, or run a recall here and open its trace.
import { api } from '../api.js';
import { h, clear, append, notice, showError, field, kv, table, pill, num, when } from '../ui.js';

const RECENT = 'agentkb.console.traces';

function remember(id) {
  const ids = [id, ...JSON.parse(sessionStorage.getItem(RECENT) || '[]').filter((x) => x !== id)].slice(0, 10);
  sessionStorage.setItem(RECENT, JSON.stringify(ids));
}

function usage(item) {
  if (item.used === true) return pill('used', 'ok');
  if (item.used === false) return [pill('ignored', 'warn'), item.ignored_reason ? ` ${item.ignored_reason}` : ''];
  return h('span', { class: 'muted' }, 'not reported');
}

async function showTrace(out, workspace, id) {
  const { data } = await api('GET', `/ob1/recall-traces/${encodeURIComponent(id)}`, {
    query: { workspace_id: workspace } });
  remember(id);
  const t = data.trace;
  const policy = t.response_policy || {};
  clear(out, h('h2', { id: 'trace-title', tabindex: '-1' }, `Trace ${t.request_id}`),
    policy.degraded ? notice('warn', `Degraded recall: ${policy.degraded}`) : null,
    kv([['Query', t.query], ['Runtime', t.runtime_name], ['Project', t.project_id], ['Task', t.task_id],
      ['When', when(t.created_at)], ['Candidates', String(t.candidate_count)],
      ['Usage reported', t.usage_reported_at ? when(t.usage_reported_at) : 'not yet'],
      ['Policy', `audience ${policy.audience}, max ${policy.max_items} items / ${policy.max_tokens} tokens, ` +
        `unconfirmed ${policy.include_unconfirmed ? 'included' : 'excluded'}, ` +
        `stale ${policy.include_stale ? 'included' : 'excluded'}`]]),
    table(['Rank', 'Memory', 'Returned', 'Similarity', 'Ranking score', 'Feedback', 'Use policy', 'Usage'],
      (data.items || []).map((item) => [String(item.rank), [h('strong', null, (item.memory || {}).summary ||
        (item.memory || {}).name || item.memory_id), h('div', { class: 'small mono' }, `#${item.memory_id}`)],
      item.returned ? 'yes' : 'no', num(item.similarity), num(item.ranking_score), num(item.feedback),
      Object.entries(item.use_policy_snapshot || {}).filter(([, v]) => v).map(([k]) => pill(k)), usage(item)])));
  out.querySelector('#trace-title').focus();
}

export async function render(main, [id], workspace) {
  const requestId = h('input', { id: 'trace-id', required: true, value: id || '', class: 'mono' });
  const query = h('input', { type: 'search', id: 'recall-query', required: true });
  const unconfirmed = h('input', { type: 'checkbox', id: 'recall-unconfirmed' });
  const ran = h('div', { 'aria-live': 'polite' });
  const out = h('section', { 'aria-live': 'polite' });
  const recent = JSON.parse(sessionStorage.getItem(RECENT) || '[]');
  append(main, h('h1', null, 'Recall traces'),
    h('form', { class: 'inline card', onsubmit: (event) => {
      event.preventDefault();
      location.hash = `#/traces/${encodeURIComponent(requestId.value.trim())}`;
    } }, field('Recall request id', requestId), h('button', { type: 'submit', class: 'primary' }, 'Open trace')),
    recent.length ? h('p', { class: 'small' }, 'Recent: ', recent.map((r) => [h('a', { href: `#/traces/${r}`,
      class: 'mono' }, r.slice(0, 12)), ' '])) : null,
    h('form', { class: 'inline card', onsubmit: async (event) => {
      event.preventDefault();
      try {
        const { data } = await api('POST', '/ob1/recall', { body: { schema_version: 'openbrain.agent_memory.recall.v1',
          workspace_id: workspace, query: query.value, runtime: { name: 'agentkb-console' },
          scope: { include_unconfirmed: unconfirmed.checked } } });
        clear(ran, notice('ok', `${data.memories.length} memories returned. `),
          h('a', { href: `#/traces/${data.request_id}`, id: 'recall-trace-link' }, `Open trace ${data.request_id}`));
      } catch (error) { showError(ran, error); }
    } }, field('Run a recall', query), h('label', { class: 'check' }, unconfirmed, 'include unconfirmed'),
    h('button', { type: 'submit' }, 'Recall')), ran, out);
  if (id) {
    try { await showTrace(out, workspace, id); } catch (error) { showError(out, error); }
  } else requestId.focus();
}
