// Every memory the key may see (GET /ob1/memories with its filters); open one, or forget it
// (DELETE /v1/memories/{id}: gone from the store, the indexes and the graph links).
import { api } from '../api.js';
import { h, clear, append, notice, showError, field, table, pill, num, when, confirmButton } from '../ui.js';
import { fetchMemory, historyTable, memorySummary } from './memory_view.js';

const REVIEW = ['', 'pending', 'confirmed', 'evidence_only', 'restricted', 'rejected'];
const LIFECYCLE = ['', 'active', 'stale', 'disputed', 'superseded', 'rejected'];

function select(id, values) {
  return h('select', { id }, values.map((v) => h('option', { value: v }, v || 'any')));
}

export async function render(main, args, workspace) {
  const review = select('memories-review', REVIEW);
  const lifecycle = select('memories-lifecycle', LIFECYCLE);
  const type = h('input', { id: 'memories-type', placeholder: 'any type' });
  const runtime = h('input', { id: 'memories-runtime', placeholder: 'any runtime' });
  const project = h('input', { id: 'memories-project', placeholder: 'any project' });
  const list = h('section', { 'aria-live': 'polite' });
  const detail = h('section', { 'aria-live': 'polite' });
  async function open(id) {
    try {
      const m = await fetchMemory(workspace, id);
      clear(detail, h('div', { class: 'card' }, h('h2', null, `Memory ${id}`), memorySummary(m),
        h('h3', null, 'Audit history'), historyTable(m)));
      detail.querySelector('h2').setAttribute('tabindex', '-1');
      detail.querySelector('h2').focus();
    } catch (error) { showError(detail, error); }
  }
  async function load() {
    try {
      const { data } = await api('GET', '/ob1/memories', { query: { workspace_id: workspace, limit: 200,
        review_status: review.value, lifecycle_status: lifecycle.value, memory_type: type.value.trim(),
        runtime_name: runtime.value.trim(), project_id: project.value.trim() } });
      clear(list, h('p', { class: 'muted small' }, `${data.count} memories`), data.memories.length ?
        table(['Id', 'Summary', 'Type', 'Visibility', 'State', 'Confidence', 'Created', ''],
          data.memories.map((m) => [m.memory_id, m.summary || m.name || '', m.memory_type || '', m.visibility || '',
            [pill(m.review_status, `status-${m.review_status}`), pill(m.lifecycle_status)], num(m.confidence, 2),
            when(m.created_at), h('span', { class: 'actions' },
              h('button', { type: 'button', onclick: () => open(m.memory_id) }, `Open ${m.memory_id}`),
              confirmButton('Forget', `Forget memory ${m.memory_id} everywhere?`, async () => {
                await api('DELETE', `/v1/memories/${encodeURIComponent(m.memory_id)}`, {
                  query: { workspace_id: workspace } });
                clear(detail);
                await load();
              }))]))
        : notice('', 'No memories match.'));
    } catch (error) { showError(list, error); }
  }
  append(main, h('h1', null, 'Memories'),
    h('form', { class: 'inline card', onsubmit: (event) => { event.preventDefault(); load(); } },
      field('Review status', review), field('Lifecycle', lifecycle), field('Type', type), field('Runtime', runtime),
      field('Project', project), h('button', { type: 'submit' }, 'Filter')), detail, list);
  await load();
}
