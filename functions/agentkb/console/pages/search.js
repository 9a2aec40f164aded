// Knowledge search: query, KBs, tag filters, mode. Each hit shows its fused rank and score, its similarity and
// its rank in the BM25 leg and in the vector leg (the X-Search-Leg-Ranks header, one entry per result; "—" where
// a leg did not return it); degradation (X-Search-Degraded, the reranker's status) is shown beside the results.
import { api, listAll } from '../api.js';
import { h, clear, append, notice, showError, field, pill, tags, num } from '../ui.js';

const OPERATORS = { text: ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between'], date: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between'],
  boolean: ['eq', 'neq'] };

function filterRow(defs, rows) {
  const name = h('select', { 'aria-label': 'Filter tag' }, defs.map((d) => h('option', { value: d.tagName },
    `${d.tagName} (${d.fieldType})`)));
  const op = h('select', { 'aria-label': 'Filter operator' });
  const value = h('input', { 'aria-label': 'Filter value', required: true });
  const valueTo = h('input', { 'aria-label': 'Filter upper bound', placeholder: 'to (between)' });
  const sync = () => {
    const def = defs.find((d) => d.tagName === name.value);
    clear(op, OPERATORS[def.fieldType].map((o) => h('option', { value: o }, o)));
  };
  name.addEventListener('change', sync);
  sync();
  const row = h('div', { class: 'row filter-row' }, name, op, value, valueTo,
    h('button', { type: 'button', onclick: () => row.remove() }, 'Remove filter'));
  row.filter = () => {
    const def = defs.find((d) => d.tagName === name.value);
    const cast = (v) => (def.fieldType === 'number' ? Number(v) : def.fieldType === 'boolean' ? v === 'true' : v);
    const out = { tagName: def.tagName, operator: op.value, value: cast(value.value.trim()) };
    if (op.value === 'between') out.valueTo = cast(valueTo.value.trim());
    return out;
  };
  rows.append(row);
  name.focus();
}

const ABSENT = '—';

function legRank(ranks, leg) {
  const rank = ranks && ranks[leg];
  return rank == null ? ABSENT : String(rank);
}

function hitCard(hit, kbNames, ranks) {
  return h('article', { class: 'card hit' },
    h('h3', null, `${hit.rank}. `, h('a', { href: `#/kbs/${encodeURIComponent(hit.knowledgeBaseId)}/docs/` +
      `${encodeURIComponent(hit.documentId)}` }, hit.documentName || hit.documentId),
    h('span', { class: 'muted small' }, ` chunk ${hit.chunkIndex} · ${kbNames.get(hit.knowledgeBaseId) || ''}`)),
    h('div', { class: 'snippet' }, hit.content.length > 420 ? `${hit.content.slice(0, 420)}…` : hit.content),
    h('div', { class: 'nums' }, h('span', null, `score ${num(hit.rankScore, 5)}`),
      h('span', null, `similarity ${num(hit.similarity)}`), h('span', null, `rank ${hit.rank}`),
      h('span', { class: 'leg-bm25' }, `BM25 leg rank ${legRank(ranks, 'bm25')}`),
      h('span', { class: 'leg-vector' }, `vector leg rank ${legRank(ranks, 'vector')}`),
      hit.rerankerScore != null ? h('span', null, `reranker ${num(hit.rerankerScore)}`) : null),
    h('div', null, tags(hit.metadata)));
}

function legRanks(headers) {
  try {
    const ranks = JSON.parse(headers.get('X-Search-Leg-Ranks') || 'null');
    return Array.isArray(ranks) ? ranks : null;
  } catch {
    return null;
  }
}

export async function render(main, args, workspace) {
  const kbs = await listAll('/api/v2/knowledge/bases', { workspaceId: workspace });
  const kbNames = new Map(kbs.map((kb) => [kb.id, kb.name]));
  const defs = [...new Map(kbs.flatMap((kb) => kb.tagDefinitions).map((d) => [d.tagName, d])).values()];
  const query = h('input', { type: 'search', id: 'search-query', required: true, maxlength: 2000 });
  const boxes = kbs.map((kb) => h('input', { type: 'checkbox', value: kb.id, checked: true }));
  const mode = h('select', { id: 'search-mode' }, h('option', { value: 'hybrid' }, 'hybrid'),
    h('option', { value: 'vector' }, 'vector'));
  const topK = h('input', { type: 'number', id: 'search-topk', min: 1, max: 50, value: '10' });
  const rows = h('div', { class: 'filter-rows' });
  const out = h('section', { id: 'search-results', 'aria-live': 'polite' });
  const form = h('form', { class: 'card', role: 'search', onsubmit: async (event) => {
    event.preventDefault();
    const ids = boxes.filter((b) => b.checked).map((b) => b.value);
    if (!ids.length) { clear(out, notice('warn', 'Choose at least one knowledge base.')); return; }
    const body = { workspaceId: workspace, knowledgeBaseIds: ids, query: query.value, topK: Number(topK.value),
      searchMode: mode.value, tagFilters: [...rows.querySelectorAll('.filter-row')].map((row) => row.filter()) };
    if (!body.tagFilters.length) delete body.tagFilters;
    clear(out, notice('', 'Searching…'));
    try {
      showResults(out, await api('POST', '/api/v2/knowledge/search', { body }), kbNames);
    } catch (error) { showError(out, error); }
  } },
  h('div', { class: 'row' }, field('Query', query), field('Mode', mode), field('Top K', topK),
    h('button', { type: 'submit', class: 'primary' }, 'Search')),
  h('fieldset', null, h('legend', null, 'Knowledge bases'),
    kbs.length ? kbs.map((kb, i) => h('label', { class: 'check' }, boxes[i], kb.name)) : 'none yet'),
  h('h3', null, 'Tag filters'), rows,
  defs.length ? h('button', { type: 'button', onclick: () => filterRow(defs, rows) }, 'Add tag filter') : null);
  append(main, h('h1', null, 'Search'), form, out);
  query.focus();
}

function showResults(out, answer, kbNames) {
  const data = answer.data.data;
  const degraded = answer.headers.get('X-Search-Degraded');
  const ranks = legRanks(answer.headers);
  clear(out,
    degraded ? notice('warn', `Degraded: ${degraded} - these results come from the lexical leg only.`) : null,
    ranks ? null : notice('warn', 'The answer carried no leg ranks (X-Search-Leg-Ranks).'),
    h('p', { class: 'small muted' }, `${data.totalResults} results · reranker ${data.rerankerStatus} · leg ranks: ` +
      'each hit\'s rank in the BM25 and vector legs before fusion'),
    data.results.length ? data.results.map((hit, i) => hitCard(hit, kbNames, ranks && ranks[i]))
      : notice('', 'No results.'));
  if (data.rerankerStatus === 'unavailable') out.prepend(notice('warn', 'The reranker was unavailable.'));
  append(out, pill(`query: ${data.query}`));
}
