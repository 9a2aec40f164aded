// Uploads: files dropped or chosen -> their text (as `agentkb ingest` reads them) -> POST .../documents, one
// progress line per file. expectedRevision 0 makes a same-named document a visible conflict, not a silent
// overwrite; "Replace" sends it again at the revision the conflict reported.
import { postWithProgress } from '../api.js';
import { h, clear, append, field } from '../ui.js';
import { fileText } from '../extract.js';

function tagInputs(kb) {
  return kb.tagDefinitions.map((t) => ({ def: t, input: h('input', {
    'aria-label': `Tag ${t.tagName} (${t.fieldType})`, placeholder: `${t.tagName} (${t.fieldType})`,
    type: t.fieldType === 'number' ? 'number' : t.fieldType === 'date' ? 'date' : 'text', step: 'any' }) }));
}

function tagValues(inputs) {
  const tags = {};
  for (const { def, input } of inputs) {
    const raw = input.value.trim();
    if (!raw) continue;
    tags[def.tagName] = def.fieldType === 'number' ? Number(raw) : def.fieldType === 'boolean' ? raw === 'true' : raw;
  }
  return Object.keys(tags).length ? tags : undefined;
}

function describe(status, data) {
  const doc = (data && data.data) || {};
  if (status === 201) return ['ok', `indexed: ${doc.chunkCount} chunks, revision ${doc.revision}`];
  if (status === 202) return ['warn', `accepted, indexing in the background (revision ${doc.revision})`];
  const error = (data && data.error) || {};
  return ['bad', `${status || 'no answer'} ${error.code || ''}: ${error.message || ''}`];
}

async function send(workspace, kb, line, name, content, tags, expectedRevision, done) {
  const bar = h('progress', { max: 1, value: 0, 'aria-label': `Upload progress of ${name}` });
  const state = h('span', { class: 'small' }, 'uploading…');
  clear(line.status, bar, ' ', state);
  const { status, data } = await postWithProgress(
    `/api/v2/knowledge/bases/${encodeURIComponent(kb.id)}/documents`, null,
    { workspaceId: workspace, name, content, tags, expectedRevision }, (p) => { bar.value = p; });
  bar.value = 1;
  const current = data && data.error && data.error.details && data.error.details.currentRevision;
  if (status === 409 && current !== undefined) {
    clear(line.status, h('span', { class: 'pill warn' }, 'conflict'),
      ` a document named "${name}" exists (revision ${current}) `,
      h('button', { type: 'button', onclick: () => send(workspace, kb, line, name, content, tags, current, done) },
        `Replace ${name}`));
    return;
  }
  const [kind, text] = describe(status, data);
  clear(line.status, h('span', { class: `pill ${kind}` }, kind === 'bad' ? 'failed' : 'done'), ' ', text);
  await done();
}

export function uploader(workspace, kb, done) {
  const inputs = tagInputs(kb);
  const list = h('ul', { class: 'uploads', 'aria-live': 'polite' });
  const chooser = h('input', { type: 'file', multiple: true, id: 'upload-files',
    accept: '.md,.markdown,.txt,.html,.htm,.pdf,.docx' });
  async function take(files) {
    const tags = tagValues(inputs);
    for (const file of files) {
      const name = file.webkitRelativePath || file.name;
      const line = { status: h('span', { class: 'small' }, 'reading…') };
      list.append(h('li', { class: 'upload' }, h('strong', null, name), ' ', line.status));
      try {
        const content = await fileText(file);
        await send(workspace, kb, line, name, content, tags, 0, done);
      } catch (error) {
        clear(line.status, h('span', { class: 'pill bad' }, 'skipped'), ` ${error.message}`);
      }
    }
  }
  chooser.addEventListener('change', () => { take([...chooser.files]); chooser.value = ''; });
  const zone = h('div', { class: 'drop', id: 'drop-zone' },
    h('p', null, 'Drop files here, or ', field('Choose files', chooser)),
    h('p', { class: 'small muted' }, 'Markdown, text, HTML and DOCX are read in the browser (as agentkb ingest ' +
      'reads them); a PDF needs agentkb ingest.'));
  zone.addEventListener('dragover', (event) => { event.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    take([...event.dataTransfer.files]);
  });
  return append(h('section', { class: 'card' }, h('h2', null, 'Upload')),
    inputs.length ? h('div', { class: 'row' }, h('span', { class: 'small muted' }, 'Tags for these files:'),
      inputs.map(({ input }) => input)) : null, zone, list);
}
