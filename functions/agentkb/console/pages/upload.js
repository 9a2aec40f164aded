// Uploads: files dropped or chosen -> their bytes, base64 -> POST .../uploads, where the server extracts the text
// as `agentkb ingest` does (PDF included), one progress line per file. expectedRevision 0 makes a same-named
// document a visible conflict, not a silent overwrite; "Replace" sends it again at the revision it reported.
import { postWithProgress } from '../api.js';
import { h, clear, append, field } from '../ui.js';

const FORMATS = '.md,.markdown,.txt,.html,.htm,.pdf,.docx';

/** A file's bytes as standard, padded base64 (in slices: one String.fromCharCode call per 32 KiB). */
async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

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

async function send(workspace, kb, line, file, tags, expectedRevision, done) {
  const name = file.name;
  const bar = h('progress', { max: 1, value: 0, 'aria-label': `Upload progress of ${name}` });
  const state = h('span', { class: 'small' }, 'uploading…');
  clear(line.status, bar, ' ', state);
  const { status, data } = await postWithProgress(
    `/api/v2/knowledge/bases/${encodeURIComponent(kb.id)}/uploads`, null,
    { workspaceId: workspace, name, contentBase64: file.content, contentType: file.type || undefined, tags,
      expectedRevision }, (p) => { bar.value = p; state.textContent = p < 1 ? 'uploading…' : 'extracting, indexing…'; });
  bar.value = 1;
  const current = data && data.error && data.error.details && data.error.details.currentRevision;
  if (status === 409 && current !== undefined) {
    clear(line.status, h('span', { class: 'pill warn' }, 'conflict'),
      ` a document named "${name}" exists (revision ${current}) `,
      h('button', { type: 'button', onclick: () => send(workspace, kb, line, file, tags, current, done) },
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
    accept: FORMATS });
  async function take(files) {
    const tags = tagValues(inputs);
    for (const file of files) {
      const name = file.webkitRelativePath || file.name;
      const line = { status: h('span', { class: 'small' }, 'reading…') };
      list.append(h('li', { class: 'upload' }, h('strong', null, name), ' ', line.status));
      try {
        await send(workspace, kb, line, { name, type: file.type, content: await base64Of(file) }, tags, 0, done);
      } catch (error) {
        clear(line.status, h('span', { class: 'pill bad' }, 'skipped'), ` ${error.message}`);
      }
    }
  }
  chooser.addEventListener('change', () => { take([...chooser.files]); chooser.value = ''; });
  const zone = h('div', { class: 'drop', id: 'drop-zone' },
    h('p', null, 'Drop files here, or ', field('Choose files', chooser)),
    h('p', { class: 'small muted' }, 'Markdown, text, HTML, PDF and DOCX, read on the server as agentkb ingest ' +
      'reads them; up to about 1.5 MB a file (bigger ones: agentkb ingest).'));
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
