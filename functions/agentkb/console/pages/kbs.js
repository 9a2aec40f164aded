// Knowledge bases: list, create (with tag definitions), delete; a KB's documents and uploads; one document.
import { api, listAll } from '../api.js';
import { h, clear, append, notice, showError, table, kv, field, pill, tags, when, confirmButton } from '../ui.js';
import { uploader } from './upload.js';

const FIELD_TYPES = ['text', 'number', 'date', 'boolean'];

export async function render(main, [kbId, part, docId], workspace) {
  if (kbId && part === 'docs' && docId) return renderDocument(main, workspace, kbId, docId);
  if (kbId) return renderKnowledgeBase(main, workspace, kbId);
  return renderList(main, workspace);
}

async function renderList(main, workspace) {
  const listing = h('div', { 'aria-live': 'polite' });
  append(main, h('h1', null, 'Knowledge bases'), createForm(workspace, () => load()), h('h2', null, 'All'), listing);
  async function load() {
    try {
      const items = await listAll('/api/v2/knowledge/bases', { workspaceId: workspace });
      clear(listing, items.length ? table(['Name', 'Description', 'Tags', 'Embedding', 'Created', ''],
        items.map((kb) => [h('a', { href: `#/kbs/${encodeURIComponent(kb.id)}` }, kb.name), kb.description || '',
          kb.tagDefinitions.map((t) => pill(`${t.tagName}: ${t.fieldType}`)), kb.embeddingModel, when(kb.createdAt),
          confirmButton('Delete', `Delete "${kb.name}" with all its documents?`, async () => {
            await api('DELETE', `/api/v2/knowledge/bases/${encodeURIComponent(kb.id)}`, {
              query: { workspaceId: workspace } });
            await load();
          })])) : notice('', 'No knowledge bases yet: create one above.'));
    } catch (error) { showError(listing, error); }
  }
  await load();
}

function tagRow(rows) {
  const name = h('input', { 'aria-label': 'Tag name', placeholder: 'tag name', required: true });
  const type = h('select', { 'aria-label': 'Tag type' }, FIELD_TYPES.map((t) => h('option', { value: t }, t)));
  const row = h('div', { class: 'row tag-row' }, name, type,
    h('button', { type: 'button', onclick: () => row.remove() }, 'Remove tag'));
  rows.append(row);
  name.focus();
}

function createForm(workspace, created) {
  const name = h('input', { id: 'kb-name', required: true, maxlength: 128 });
  const description = h('input', { id: 'kb-description', maxlength: 1024 });
  const rows = h('div', { class: 'tag-rows' });
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'card', onsubmit: async (event) => {
    event.preventDefault();
    const tagDefinitions = [...rows.querySelectorAll('.tag-row')].map((row) => ({
      tagName: row.querySelector('input').value.trim(), fieldType: row.querySelector('select').value }));
    try {
      const { data } = await api('POST', '/api/v2/knowledge/bases', { body: { workspaceId: workspace,
        name: name.value.trim(), description: description.value.trim() || undefined, tagDefinitions } });
      clear(out, notice('ok', `Created "${data.data.name}".`));
      form.reset();
      rows.replaceChildren();
      await created();
    } catch (error) { showError(out, error); }
  } },
  h('h2', null, 'Create a knowledge base'),
  h('div', { class: 'row' }, field('Name', name), field('Description', description)),
  h('h3', null, 'Tag definitions'), rows,
  h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => tagRow(rows) }, 'Add tag'),
    h('button', { type: 'submit', class: 'primary' }, 'Create knowledge base')), out);
  return form;
}

function statusCell(doc) {
  return [pill(doc.status, `status-${doc.status}`), doc.error ? h('div', { class: 'small' }, doc.error) : null];
}

async function renderKnowledgeBase(main, workspace, kbId) {
  const path = `/api/v2/knowledge/bases/${encodeURIComponent(kbId)}`;
  const { data } = await api('GET', path, { query: { workspaceId: workspace } });
  const kb = data.data;
  const docs = h('div', { 'aria-live': 'polite' });
  let timer;
  async function load() {
    try {
      const items = await listAll(`${path}/documents`, { workspaceId: workspace });
      clear(docs, items.length ? table(['Document', 'Status', 'Tags', 'Chunks', 'Tokens', 'Revision', 'Created', ''],
        items.map((d) => [h('a', { href: `#/kbs/${encodeURIComponent(kbId)}/docs/${encodeURIComponent(d.id)}` },
          d.name), statusCell(d), tags(d.tags), String(d.chunkCount ?? '–'), String(d.tokenCount ?? '–'),
        String(d.revision ?? ''), when(d.createdAt), confirmButton('Delete', `Delete "${d.name}"?`, async () => {
          await api('DELETE', `${path}/documents/${encodeURIComponent(d.id)}`, { query: { workspaceId: workspace } });
          await load();
        })])) : notice('', 'No documents yet: upload some above.'));
      clearTimeout(timer);
      if (items.some((d) => d.status === 'indexing') && docs.isConnected) timer = setTimeout(load, 2000);
    } catch (error) { showError(docs, error); }
  }
  append(main, h('p', null, h('a', { href: '#/kbs' }, '← Knowledge bases')), h('h1', null, kb.name),
    kv([['Description', kb.description], ['Id', h('span', { class: 'mono' }, kb.id)],
      ['Embedding', `${kb.embeddingModel} (${kb.embeddingDimension})`], ['Secret policy', kb.secretPolicy],
      ['Tags', kb.tagDefinitions.length ? kb.tagDefinitions.map((t) => pill(`${t.tagName}: ${t.fieldType}`)) : 'none']]),
    uploader(workspace, kb, load),
    h('div', { class: 'row' }, h('h2', null, 'Documents'), h('button', { type: 'button', onclick: load }, 'Refresh')),
    docs);
  await load();
}

async function renderDocument(main, workspace, kbId, docId) {
  const path = `/api/v2/knowledge/bases/${encodeURIComponent(kbId)}/documents/${encodeURIComponent(docId)}`;
  const { data } = await api('GET', path, { query: { workspaceId: workspace } });
  const doc = data.data;
  append(main, h('p', null, h('a', { href: `#/kbs/${encodeURIComponent(kbId)}` }, '← Documents')),
    h('h1', null, doc.name),
    kv([['Status', statusCell(doc)], ['Chunks', String(doc.chunkCount ?? '–')],
      ['Tokens', String(doc.tokenCount ?? '–')], ['Revision', String(doc.revision ?? '')], ['Tags', tags(doc.tags)],
      ['Source', doc.sourceUrl || doc.sourcePath], ['Content hash', h('span', { class: 'mono' }, doc.contentHash)],
      ['Chunks with a detected secret', doc.secretChunks && doc.secretChunks.length ? doc.secretChunks.join(', ')
        : null]]),
    h('h2', null, 'Text'), h('pre', { id: 'doc-content', tabindex: '0' }, doc.content || ''),
    chunkList(workspace, path, doc));
}

const CHUNK_PAGE = 20;

function chunkCard(chunk) {
  const pages = chunk.pages ? ` · page${chunk.pages.length > 1 ? 's' : ''} ${chunk.pages.join(', ')}` : '';
  return h('article', { class: 'card chunk', id: `chunk-${chunk.chunkIndex}` },
    h('h3', null, `Chunk ${chunk.chunkIndex}`, h('span', { class: 'muted small' }, ` · ${chunk.tokenCount} tokens${pages}`)),
    chunk.secret ? notice('warn', 'Text withheld: the secret detector found a credential in this chunk.')
      : h('pre', { class: 'chunk-text' }, chunk.content));
}

// The document's chunks a page at a time (listDocumentChunks); "More chunks" asks for the next page.
function chunkList(workspace, path, doc) {
  const list = h('div', { id: 'doc-chunks', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', id: 'more-chunks', hidden: true }, 'More chunks');
  let cursor;
  async function next() {
    try {
      const { data } = await api('GET', `${path}/chunks`, { query: { workspaceId: workspace, limit: CHUNK_PAGE,
        cursor } });
      append(list, data.data.map(chunkCard));
      cursor = data.nextCursor;
      more.hidden = !cursor;
      if (!list.children.length) {
        append(list, notice('', doc.status === 'ready' ? 'No chunks are visible yet (on AWS the index shows a ' +
          'write after 10-60 s).' : `No chunks while the document is ${doc.status}.`));
      }
    } catch (error) { showError(list, error); }
  }
  more.addEventListener('click', next);
  next();
  return h('section', null, h('h2', null, `Chunks (${doc.chunkCount ?? 0})`), list, more);
}
