// A file's text as `agentkb ingest` takes it (services/extract/files.py): Markdown and plain text as UTF-8,
// HTML's main text, DOCX paragraphs. A PDF's text layer needs a parser the console does not ship.
import { docxText } from './docx.js';

const TEXT = ['.md', '.markdown', '.txt'];
const HTML = ['.html', '.htm'];
const DROPPED = 'script, style, noscript, template, nav, header, footer, aside, form, svg';

function suffix(name) {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot).toLowerCase();
}

function utf8(buffer) {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buffer);
  } catch {
    throw new Error('not UTF-8 text');
  }
}

export function htmlText(markup) {
  const doc = new DOMParser().parseFromString(markup, 'text/html');
  doc.querySelectorAll(DROPPED).forEach((el) => el.remove());
  const root = doc.querySelector('main, article') || doc.body;
  const lines = [];
  for (const el of root.querySelectorAll('h1, h2, h3, h4, h5, h6, p, li, pre, td, th, blockquote, dt, dd')) {
    if (el.querySelector('p, li, pre, blockquote')) continue;  // the innermost block holds the text
    const text = el.tagName === 'PRE' ? el.textContent : el.textContent.replace(/\s+/g, ' ').trim();
    if (!text) continue;
    lines.push(/^H[1-6]$/.test(el.tagName) ? `${'#'.repeat(Number(el.tagName[1]))} ${text}` : text);
  }
  return lines.length ? lines.join('\n\n') : (root.textContent || '').replace(/\s+/g, ' ').trim();
}

export async function fileText(file) {
  const kind = suffix(file.name);
  let text;
  if (TEXT.includes(kind)) text = utf8(await file.arrayBuffer());
  else if (HTML.includes(kind)) text = htmlText(utf8(await file.arrayBuffer()));
  else if (kind === '.docx') text = await docxText(await file.arrayBuffer());
  else if (kind === '.pdf') throw new Error('PDF: the console reads no PDF; run agentkb ingest on it');
  else throw new Error(`unsupported format (${kind || 'no suffix'})`);
  if (!text.trim()) throw new Error('no text');
  return text;
}
