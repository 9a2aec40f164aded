// One OB1 memory as people read it: text, source, provenance, confidence, state; and its review history.
import { api } from '../api.js';
import { h, kv, pill, table, when, num } from '../ui.js';

export function memoryPath(id) { return `/ob1/memories/${encodeURIComponent(id)}`; }

export async function fetchMemory(workspace, id) {
  const { data } = await api('GET', memoryPath(id), { query: { workspace_id: workspace } });
  return data.memory;
}

function source(m) {
  const s = m.source || {};
  return [s.kind, s.title, s.uri].filter(Boolean).join(' · ') || '–';
}

/** A recall/review-queue item ({summary, content, source, provenance, scope, freshness}) or a full memory. */
export function memorySummary(m) {
  const provenance = m.provenance || { status: m.provenance_status, confidence: m.confidence,
    created_by: m.created_by, runtime: m.runtime_name, model: m.model };
  const scope = m.scope || { visibility: m.visibility, project_id: m.project_id };
  return [h('p', null, h('strong', null, m.summary || m.name || '')),
    h('pre', { class: 'memory-content' }, m.content || ''),
    kv([['Memory', h('span', { class: 'mono' }, String(m.memory_id))], ['Source', source(m)],
      ['Provenance', [pill(provenance.status), ` by ${provenance.created_by || '–'}`,
        provenance.runtime ? ` · runtime ${provenance.runtime}` : '', provenance.model ? ` · ${provenance.model}` : '']],
      ['Confidence', num(provenance.confidence, 2)],
      ['Scope', `${scope.visibility}${scope.project_id ? ` · project ${scope.project_id}` : ''}`],
      ['Created', when((m.freshness || {}).created_at || m.created_at)],
      ['State', m.review_status ? [pill(`review: ${m.review_status}`, `status-${m.review_status}`),
        pill(`lifecycle: ${m.lifecycle_status}`)] : null]])];
}

function change(entry) {
  const before = entry.before || {};
  const after = entry.after || {};
  return Object.keys(after).filter((k) => before[k] !== after[k]).map((k) => `${k}: ${before[k]} → ${after[k]}`)
    .join('; ') || 'no state change';
}

export function historyTable(memory) {
  const history = memory.review_history || [];
  if (!history.length) return h('p', { class: 'muted small' }, 'No review actions yet.');
  return table(['When', 'Action', 'Actor', 'Notes', 'Change'], history.map((e) => [when(e.at), e.action,
    e.actor_label || e.actor_id || '–', e.notes || '', change(e)]));
}
