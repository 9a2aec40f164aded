// The workspace graph: search entities (POST /v1/graph/search), open one to see its attributes, its relations
// (both directions, with trust and confidence) and the proofs behind them.
import { api } from '../api.js';
import { h, clear, append, notice, showError, field, kv, table, pill } from '../ui.js';

function proofTable(ids, proofs) {
  const rows = ids.map((id) => proofs.get(id)).filter(Boolean);
  if (!rows.length) return h('p', { class: 'muted small' }, 'No proofs.');
  return table(['Proof', 'Provider', 'Artifact', 'Observed', 'Trust', 'Freshness', 'Content hash'],
    rows.map((p) => [p.id, p.provider, [p.artifact, p.pointer ? h('span', { class: 'muted' }, ` ${p.pointer}`) : ''],
      p.observedAt || '–', `${p.trust} / ${p.confidence}`, p.freshness || '–',
      h('span', { class: 'mono small' }, (p.contentHash || '').slice(0, 16))]));
}

function entityView(entity, answer, search) {
  const labels = new Map([...answer.entities, ...(answer.relatedEntities || [])].map((e) => [e.id, e]));
  const proofs = new Map((answer.proofs || []).map((p) => [p.id, p]));
  const relations = (answer.relations || []).filter((r) => r.from === entity.id || r.to === entity.id);
  const other = (id) => {
    const e = labels.get(id);
    return id === entity.id ? h('strong', null, entity.label)
      : h('button', { type: 'button', onclick: () => search(e ? e.label : id) }, e ? e.label : id);
  };
  const proofIds = [...new Set([...(entity.proofIds || []), ...relations.flatMap((r) => r.proofIds || [])])];
  return h('div', { class: 'card', id: 'entity-view' },
    h('h2', { tabindex: '-1' }, entity.label, ' ', pill(entity.kind)),
    kv([['Id', h('span', { class: 'mono' }, entity.id)], ['Project', entity.projectId],
      ['Identity', entity.identity ? `${entity.identity.key} (${entity.identity.scope})` : null],
      ['Aliases', entity.identity && entity.identity.aliases ? entity.identity.aliases.join(', ') : null],
      ...Object.entries(entity.attributes || {}).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v)
        : String(v)])]),
    h('h3', null, `Relations (${relations.length})`),
    relations.length ? table(['From', 'Relation', 'To', 'Derivation', 'Trust', 'Proofs'], relations.map((r) => [
      other(r.from), r.kind, other(r.to), r.derivation, `${r.trust} / ${r.confidence}`, (r.proofIds || []).join(', ')]))
      : h('p', { class: 'muted small' }, 'No relations in this answer.'),
    h('h3', null, 'Proofs'), proofTable(proofIds, proofs));
}

export async function render(main, args, workspace) {
  const query = h('input', { type: 'search', id: 'graph-query', required: true });
  const kind = h('input', { id: 'graph-kind', placeholder: 'any kind' });
  const list = h('section', { 'aria-live': 'polite' });
  const view = h('section');
  async function search(text) {
    query.value = text;
    try {
      const { data } = await api('POST', '/v1/graph/search', { body: { workspaceId: workspace, query: text,
        kind: kind.value.trim() || undefined, limit: 25 } });
      clear(view);
      clear(list, h('p', { class: 'small muted' }, `${data.totalMatches} matches${data.truncated ? ' (truncated)' : ''}`),
        data.entities.length ? h('div', { class: 'actions' }, data.entities.map((e) => h('button', { type: 'button',
          onclick: () => { clear(view, entityView(e, data, search)); view.querySelector('h2').focus(); } },
        `${e.label} (${e.kind})`))) : notice('', 'No entities match.'));
    } catch (error) { showError(list, error); }
  }
  append(main, h('h1', null, 'Graph'),
    h('form', { class: 'inline card', role: 'search', onsubmit: (event) => { event.preventDefault();
      search(query.value); } }, field('Entity search', query), field('Kind', kind),
    h('button', { type: 'submit', class: 'primary' }, 'Search graph')), list, view);
  query.focus();
}
