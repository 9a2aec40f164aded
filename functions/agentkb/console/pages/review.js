// The review queue: each pending memory with every OB1 review action (PATCH /ob1/memories/{id}/review) and its
// audit history. Actions that need more (Edit, Restrict, Supersede) open their form in place.
import { api } from '../api.js';
import { h, clear, append, notice, showError, field } from '../ui.js';
import { fetchMemory, historyTable, memoryPath, memorySummary } from './memory_view.js';

const SIMPLE = [['Confirm', 'confirm'], ['Reject', 'reject'], ['Mark stale', 'mark_stale'], ['Dispute', 'dispute']];
const VISIBILITIES = ['personal', 'channel', 'project', 'workspace', 'organization'];

function editForm(m, submit) {
  const summary = h('input', { value: m.summary || '', maxlength: 1024 });
  const content = h('textarea', { maxlength: 20000 }, m.content || '');
  return [h('div', { class: 'row' }, field('Summary', summary), field('Content', content)),
    () => submit({ action: 'edit', summary: summary.value.trim() || undefined, content: content.value })];
}

function restrictForm(submit) {
  const visibility = h('select', null, VISIBILITIES.map((v) => h('option', { value: v }, v)));
  return [field('Narrow visibility to', visibility), () => submit({ action: 'restrict_scope',
    visibility: visibility.value })];
}

function supersedeForm(submit) {
  const related = h('input', { required: true, placeholder: 'memory id' });
  return [field('Superseded by memory', related), () => submit({ action: 'supersede',
    related_memory_id: related.value.trim() })];
}

function card(workspace, m) {
  const notes = h('input', { placeholder: 'why (kept in the audit history)', maxlength: 2000 });
  const panel = h('div');
  const out = h('div', { 'aria-live': 'polite' });
  const history = h('div');
  const article = h('article', { class: 'card memory', 'data-memory-id': m.memory_id });
  const buttons = [];
  async function submit(body) {
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const { data } = await api('PATCH', `${memoryPath(m.memory_id)}/review`, { query: { workspace_id: workspace },
        body: { ...body, notes: notes.value.trim() || undefined, actor_label: 'agentkb console' } });
      const after = data.memory;
      clear(panel);
      clear(out, notice('ok', `${body.action}: review ${after.review_status}, lifecycle ${after.lifecycle_status}`));
      clear(history, h('h3', null, 'Audit history'), historyTable(after));
    } catch (error) { showError(out, error); }
    buttons.forEach((b) => { b.disabled = false; });
  }
  function open(label, [controls, apply]) {
    clear(panel, h('div', { class: 'row card' }, controls,
      h('button', { type: 'button', class: 'primary', onclick: apply }, `Apply ${label.toLowerCase()}`),
      h('button', { type: 'button', onclick: () => clear(panel) }, 'Cancel')));
    const first = panel.querySelector('input, textarea, select');
    if (first) first.focus();
  }
  for (const [label, action] of SIMPLE) {
    buttons.push(h('button', { type: 'button', class: action === 'confirm' ? 'primary' : '',
      onclick: () => submit({ action }) }, label));
  }
  buttons.splice(1, 0, h('button', { type: 'button', onclick: () => open('Edit', editForm(m, submit)) }, 'Edit'));
  buttons.splice(3, 0, h('button', { type: 'button', onclick: () => open('Restrict', restrictForm(submit)) },
    'Restrict'));
  buttons.push(h('button', { type: 'button', onclick: () => open('Supersede', supersedeForm(submit)) }, 'Supersede'));
  buttons.push(h('button', { type: 'button', onclick: async () => {
    try { clear(history, h('h3', null, 'Audit history'), historyTable(await fetchMemory(workspace, m.memory_id))); }
    catch (error) { showError(history, error); }
  } }, 'History'));
  return append(article, memorySummary(m), field('Review notes', notes),
    h('div', { class: 'actions', role: 'group', 'aria-label': `Review actions for memory ${m.memory_id}` }, buttons),
    panel, out, history);
}

export async function render(main, args, workspace) {
  const project = h('input', { id: 'review-project', placeholder: 'any project' });
  const list = h('section', { 'aria-live': 'polite' });
  async function load() {
    try {
      const { data } = await api('GET', '/ob1/memories/review', { query: { workspace_id: workspace,
        project_id: project.value.trim() } });
      clear(list, h('p', { class: 'muted small' }, `${data.count} pending`),
        data.memories.length ? data.memories.map((m) => card(workspace, m))
          : notice('', 'Nothing is waiting for review.'));
    } catch (error) { showError(list, error); }
  }
  append(main, h('h1', null, 'Memory review'),
    h('form', { class: 'inline card', onsubmit: (event) => { event.preventDefault(); load(); } },
      field('Project', project), h('button', { type: 'submit' }, 'Show queue')), list);
  await load();
}
